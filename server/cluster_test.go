package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/testbin"
)

// A change to the cluster block needs a restart: the peer is bound once.
func TestReloadClusterNeedsRestart(t *testing.T) {
	base := "datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [rules/basic.rules.yaml]\nnotifier: {route: {receiver: x}, receivers: [{name: x}]}\n"
	old, err := config.Parse([]byte(base+"cluster: {listen_address: '127.0.0.1:9094'}\n"), "testdata/inline.yaml", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(base+"cluster: {listen_address: '127.0.0.1:9094', peers: ['10.0.0.2:9094']}\n"), "testdata/inline.yaml", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := restartRequired(old, cfg); !slices.Equal(got, []string{"cluster"}) {
		t.Errorf("restartRequired = %v, want [cluster]", got)
	}
}

// NewNotifier turns the cluster block into a running peer: the API's
// status names the peer and its own gossip address.
func TestNewNotifierCluster(t *testing.T) {
	dir := t.TempDir()
	addr := testbin.FreeAddr(t)
	rulesDir := filepath.Join(dir, "rules")
	if err := os.MkdirAll(rulesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rulesDir, "r.yaml"), []byte("groups: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "paged.yaml")
	text := fmt.Sprintf(`datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}
rule_files: [rules/r.yaml]
storage: {path: state}
notifier:
  route: {receiver: x}
  receivers: [{name: x}]
cluster:
  listen_address: %s
  gossip_interval: 10ms
  pushpull_interval: 100ms
`, addr)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	n, err := NewNotifier(cfg, Deps{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	srv := httptest.NewServer(n.APIHandler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/api/v2/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st struct {
		Cluster struct {
			Status string `json:"status"`
			Peers  []struct {
				Address string `json:"address"`
			} `json:"peers"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if st.Cluster.Status == "disabled" || len(st.Cluster.Peers) != 1 || st.Cluster.Peers[0].Address != addr {
		t.Errorf("cluster status = %+v, want one peer at %s", st.Cluster, addr)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == "alertmanager_cluster_members" }) {
		t.Error("alertmanager_cluster_members is not registered")
	}
}
