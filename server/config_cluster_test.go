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
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pagedhq/paged/internal/testbin"
)

func TestLoadConfigCluster(t *testing.T) {
	cfg, err := LoadConfig("testdata/cluster.yaml", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Cluster
	if !c.Enabled() || c.ListenAddress != "0.0.0.0:9094" || c.AdvertiseAddress != "10.0.0.1:9094" {
		t.Errorf("cluster addresses = %+v", c)
	}
	if !slices.Equal(c.Peers, []string{"paged-b.internal:9094", "10.0.0.2:9094"}) {
		t.Errorf("peers = %v", c.Peers)
	}
	if c.PeerTimeout != 10*time.Second || c.GossipInterval != DefaultGossipInterval || c.PushPullInterval != DefaultPushPullInterval {
		t.Errorf("cluster durations = %+v", c)
	}
	opts := notifierCluster(c)
	if opts == nil || opts.ListenAddress != c.ListenAddress || opts.PeerTimeout != 10*time.Second || len(opts.Peers) != 2 {
		t.Errorf("notifier cluster options = %+v", opts)
	}

	y := cfg.Redacted2(t)
	for _, want := range []string{
		"cluster:\n  listen_address: 0.0.0.0:9094\n  advertise_address: 10.0.0.1:9094\n  peers:\n    - paged-b.internal:9094\n    - 10.0.0.2:9094\n  peer_timeout: 10s\n  gossip_interval: 200ms\n  pushpull_interval: 1m\n",
	} {
		if !strings.Contains(y, want) {
			t.Errorf("redacted config lacks %q:\n%s", want, y)
		}
	}
}

func TestLoadConfigClusterDisabledByDefault(t *testing.T) {
	for _, text := range []string{"", "cluster:\n", "cluster: {listen_address: \"\"}\n"} {
		cfg, err := ParseConfig([]byte("datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [rules/basic.rules.yaml]\n"+text), "testdata/inline.yaml", noEnv)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if cfg.Cluster.Enabled() || notifierCluster(cfg.Cluster) != nil {
			t.Errorf("%q: cluster enabled: %+v", text, cfg.Cluster)
		}
		if y := cfg.Redacted2(t); strings.Contains(y, "cluster:") {
			t.Errorf("%q: redacted config shows a disabled cluster:\n%s", text, y)
		}
	}
}

// A change to the cluster block needs a restart: the peer is bound once.
func TestReloadClusterNeedsRestart(t *testing.T) {
	base := "datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [rules/basic.rules.yaml]\nnotifier: {route: {receiver: x}, receivers: [{name: x}]}\n"
	old, err := ParseConfig([]byte(base+"cluster: {listen_address: '127.0.0.1:9094'}\n"), "testdata/inline.yaml", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig([]byte(base+"cluster: {listen_address: '127.0.0.1:9094', peers: ['10.0.0.2:9094']}\n"), "testdata/inline.yaml", noEnv)
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
	cfg, err := LoadConfig(file, noEnv)
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

// examples/ha is a pair: the same rules, datasource and notifier, each
// instance listing the other's gossip address, each with its own ports and
// storage.
func TestHAExamplePair(t *testing.T) {
	root := testbin.RepoRoot(t)
	a, err := LoadConfig(filepath.Join(root, "examples", "ha", "paged-a.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadConfig(filepath.Join(root, "examples", "ha", "paged-b.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range []string{"global", "datasource", "packs", "notifier"} {
		if a.sections[block] != b.sections[block] {
			t.Errorf("%s differs between the pair:\n%s\n---\n%s", block, a.sections[block], b.sections[block])
		}
	}
	if a.NotifierConfig == nil || !a.Cluster.Enabled() || !b.Cluster.Enabled() {
		t.Fatal("the pair needs a notifier and a cluster block")
	}
	if !slices.Equal(a.Cluster.Peers, []string{b.Cluster.ListenAddress}) || !slices.Equal(b.Cluster.Peers, []string{a.Cluster.ListenAddress}) {
		t.Errorf("peers do not point at each other: a %+v, b %+v", a.Cluster, b.Cluster)
	}
	if a.Cluster.PeerTimeout != b.Cluster.PeerTimeout {
		t.Errorf("peer_timeout differs: %v, %v", a.Cluster.PeerTimeout, b.Cluster.PeerTimeout)
	}
	if a.Storage.Path == b.Storage.Path || a.Web.ListenAddress == b.Web.ListenAddress || a.Cluster.ListenAddress == b.Cluster.ListenAddress {
		t.Error("the pair shares a storage path or a port")
	}
}
