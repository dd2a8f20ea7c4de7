package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestPrometheusEvaluatesPagedNotifies is the many-clusters setup of
// docs/scaling.md: Debian's Prometheus evaluates the vLLM pack exported by
// `paged export` and sends its alerts to paged's /api/v2/alerts as to an
// Alertmanager; paged, which evaluates nothing itself here, routes them to
// its webhook receiver.
func TestPrometheusEvaluatesPagedNotifies(t *testing.T) {
	testbin.Require(t, "prometheus")
	dir := t.TempDir()
	simAddr := testbin.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var simErr lockedBuffer
	wg.Go(func() {
		Main(ctx, []string{"simulate", "--listen", simAddr, "--server", "vllm", "--scenario", "kv-saturation", "--speed", "60"}, strings.NewReader(""), io.Discard, &simErr)
	})
	if err := testbin.WaitReady(ctx, "http://"+simAddr+"/metrics", 10*time.Second, nil); err != nil {
		t.Fatalf("simulate: %v\n%s", err, simErr.String())
	}
	mainOK(t, "export", "--format", "rules", "-o", filepath.Join(dir, "rules"), "vllm",
		"--for", "VLLMKVCacheSaturated=0s", "--label", "cluster=gpu-east")

	var mu sync.Mutex
	var bodies []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)

	pagedAddr := testbin.FreeAddr(t)
	prom := testbin.StartPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
alerting:
  alertmanagers:
    - api_version: v2
      static_configs: [{targets: [%q]}]
scrape_configs:
  - job_name: vllm
    static_configs: [{targets: [%q]}]
`, filepath.Join(dir, "rules", "vllm.yaml"), pagedAddr, simAddr))

	cfg := filepath.Join(dir, "paged.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`datasource:
  prometheus: {url: %q}
packs: []          # the cluster's Prometheus evaluates; paged routes
storage: {path: state}
web: {listen_address: %q}
notifier:
  route: {receiver: hook, group_by: [alertname, cluster], group_wait: 0s, group_interval: 1s, repeat_interval: 1h}
  receivers:
    - name: hook
      webhook_configs: [{url: %q}]
`, prom.URL, pagedAddr, hook.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	var runErr lockedBuffer
	wg.Go(func() { Main(ctx, []string{"run", "--config", cfg}, strings.NewReader(""), io.Discard, &runErr) })

	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		got := strings.Join(bodies, "\n")
		mu.Unlock()
		if strings.Contains(got, `"alertname":"VLLMKVCacheSaturated"`) {
			if !strings.Contains(got, `"cluster":"gpu-east"`) || !strings.Contains(got, `"status":"firing"`) {
				t.Errorf("webhook payload lacks the exported label or the firing status:\n%.2000s", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no VLLMKVCacheSaturated reached paged's webhook in 90s\npaged: %s\nprometheus: %s", runErr.String(), prom.Output())
		}
		time.Sleep(200 * time.Millisecond) // external processes: poll
	}
}
