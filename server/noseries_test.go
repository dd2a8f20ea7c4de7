package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/simulator"
)

// webhookSink collects the alerts of Alertmanager v4 webhook payloads.
type webhookSink struct {
	mu     sync.Mutex
	alerts []webhookAlert
}

type webhookAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func (s *webhookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Alerts []webhookAlert `json:"alerts"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &p); err == nil {
		s.mu.Lock()
		s.alerts = append(s.alerts, p.Alerts...)
		s.mu.Unlock()
	}
}

// find returns the last alert received with that alertname and rule
// label, and whether there is one.
func (s *webhookSink) find(alertname, rule string) (webhookAlert, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.alerts) - 1; i >= 0; i-- {
		if a := s.alerts[i]; a.Labels["alertname"] == alertname && a.Labels["rule"] == rule {
			return a, true
		}
	}
	return webhookAlert{}, false
}

func (s *webhookSink) all(alertname string) []webhookAlert {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []webhookAlert
	for _, a := range s.alerts {
		if a.Labels["alertname"] == alertname {
			out = append(out, a)
		}
	}
	return out
}

// waitFor polls cond (paged and Prometheus run on the wall clock here).
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const oldKVRules = `groups:
  - name: team-vllm
    rules:
      - alert: OldKVCacheFull
        expr: max by (instance) (vllm:gpu_cache_usage_perc{job="vllm"}) > 0.95
        labels: {severity: warning}
        annotations: {summary: "KV cache full on {{ $labels.instance }}"}
`

const fixedKVRules = `groups:
  - name: team-vllm
    rules:
      - alert: OldKVCacheFull
        expr: max by (instance) (vllm:kv_cache_usage_perc{job="vllm"}) > 0.95
        labels: {severity: warning}
        annotations: {summary: "KV cache full on {{ $labels.instance }}"}
`

// TestRuleNoSeriesAgainstPrometheus: Debian's Prometheus scrapes a
// simulated vLLM V1 server; paged loads the vllm pack and a team rule on
// vllm:gpu_cache_usage_perc, which vLLM removed in 0.12. PagedRuleNoSeries
// fires for that rule with the catalogue's hint and for no rule of the
// pack, reaches the webhook like any alert, and resolves when a reload
// fixes the rule.
func TestRuleNoSeriesAgainstPrometheus(t *testing.T) {
	sim, err := simulator.New(simulator.Options{Server: simulator.ServerVLLM})
	if err != nil {
		t.Fatal(err)
	}
	vllm := httptest.NewServer(sim.Handler())
	t.Cleanup(vllm.Close)
	prom := testbin.StartPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s}
scrape_configs:
  - job_name: vllm
    static_configs: [{targets: [%q]}]
`, strings.TrimPrefix(vllm.URL, "http://")))
	sink := &webhookSink{}
	hook := httptest.NewServer(sink)
	t.Cleanup(hook.Close)

	dir := t.TempDir()
	writeFile(t, dir, "alerts.rules.yaml", oldKVRules)
	writeFile(t, dir, "paged.yaml", fmt.Sprintf(`
global:
  evaluation_interval: 1s
  no_series_after: 6s      # counted every second
datasource:
  prometheus: {url: %q}
packs:
  - {name: vllm, selector: '{job="vllm"}'}
rule_files: [alerts.rules.yaml]
storage: {path: state}
notifier:
  route: {receiver: hook, group_by: [alertname, rule], group_wait: 0s, group_interval: 1s, repeat_interval: 1h}
  receivers:
    - name: hook
      webhook_configs: [{url: %q}]
`, prom.URL, hook.URL))
	logs := &syncBuffer{}
	base, _ := runPaged(t, dir, logs, io.Discard)
	poll(t, base+"/-/ready", func(code int, _ string) bool { return code == http.StatusOK })

	var a webhookAlert
	waitFor(t, "PagedRuleNoSeries for OldKVCacheFull", 60*time.Second, func() bool {
		var ok bool
		a, ok = sink.find("PagedRuleNoSeries", "OldKVCacheFull")
		return ok && a.Status == "firing"
	})
	if a.Labels["group"] != "team-vllm" || a.Labels["selector"] != `vllm:gpu_cache_usage_perc{job="vllm"}` || a.Labels["severity"] != "warning" {
		t.Errorf("labels %v", a.Labels)
	}
	desc := a.Annotations["description"]
	for _, want := range []string{
		`no series for vllm:gpu_cache_usage_perc{job="vllm"} at every check since`,
		"on " + prom.URL,
		"vllm:gpu_cache_usage_perc was removed from vLLM in 0.12 (removed by PR #29330, merged 2025-11-24): use vllm:kv_cache_usage_perc",
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q:\n%s", want, desc)
		}
	}
	if a.Annotations["runbook_url"] != "paged/PagedRuleNoSeries" {
		t.Errorf("runbook_url %q", a.Annotations["runbook_url"])
	}

	writeFile(t, dir, "alerts.rules.yaml", fixedKVRules)
	resp, err := http.Post(base+"/-/reload", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reload: %s", resp.Status)
	}
	waitFor(t, "PagedRuleNoSeries resolved after the reload", 30*time.Second, func() bool {
		a, ok := sink.find("PagedRuleNoSeries", "OldKVCacheFull")
		return ok && a.Status == "resolved"
	})
	// The pack's rules read series the simulator exposes: none of them
	// was reported, though they were checked longer than no_series_after.
	for _, o := range sink.all("PagedRuleNoSeries") {
		if o.Labels["rule"] != "OldKVCacheFull" {
			t.Errorf("a rule of the vllm pack reported dead on a vLLM V1 server: %v", o.Labels)
		}
	}
	checks, err := testbin.MetricSum(base, "paged_rule_no_series_checks_total")
	if err != nil || checks < 5 {
		t.Errorf("paged_rule_no_series_checks_total = %v (%v), want a check a second", checks, err)
	}
}
