package enginebench

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// vllmFleet is n simulated vLLM V1 instances, each on its own loopback port
// (so Prometheus sees n targets, each with its instance label). Names,
// types, labels and buckets follow the shared metric catalog; counters grow
// on every scrape.
type vllmFleet struct {
	instances []*httptest.Server
}

var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	itlBuckets  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	e2eBuckets  = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
)

func newVLLMFleet(tb testing.TB, n int) *vllmFleet {
	f := &vllmFleet{}
	for i := range n {
		s := &vllmServer{i: i}
		srv := httptest.NewServer(http.HandlerFunc(s.serve))
		tb.Cleanup(srv.Close)
		f.instances = append(f.instances, srv)
	}
	return f
}

// targets returns the scrape targets as a YAML flow list.
func (f *vllmFleet) targets() string {
	var t []string
	for _, s := range f.instances {
		t = append(t, fmt.Sprintf("%q", s.Listener.Addr().String()))
	}
	return "[" + strings.Join(t, ", ") + "]"
}

type vllmServer struct {
	i     int
	mu    sync.Mutex
	scrap int
}

func (s *vllmServer) serve(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.scrap++
	k := float64(s.scrap)
	s.mu.Unlock()
	i := s.i
	const lbl = `model_name="meta-llama/Llama-3.1-8B-Instruct",engine="0"`
	var b strings.Builder
	gauge := func(name string, v float64) {
		fmt.Fprintf(&b, "# TYPE %s gauge\n%s{%s} %g\n", name, name, lbl, v)
	}
	counter := func(name string, v float64) {
		fmt.Fprintf(&b, "# TYPE %s counter\n%s{%s} %g\n", name, name, lbl, v)
	}
	hist := func(name string, buckets []float64, scale float64) {
		fmt.Fprintf(&b, "# TYPE %s histogram\n", name)
		count := k * float64(10+i%7)
		for _, le := range buckets {
			frac := 1 - math.Exp(-le/(scale*float64(1+i%5)))
			fmt.Fprintf(&b, "%s_bucket{%s,le=\"%g\"} %g\n", name, lbl, le, math.Floor(count*frac))
		}
		fmt.Fprintf(&b, "%s_bucket{%s,le=\"+Inf\"} %g\n", name, lbl, count)
		fmt.Fprintf(&b, "%s_sum{%s} %g\n%s_count{%s} %g\n", name, lbl, count*scale, name, lbl, count)
	}
	gauge("vllm:num_requests_running", float64(i%32))
	gauge("vllm:num_requests_waiting", float64(i%13))
	gauge("vllm:kv_cache_usage_perc", float64(i%100)/100)
	counter("vllm:num_preemptions_total", k*float64(i%4))
	b.WriteString("# TYPE vllm:request_success_total counter\n")
	for j, reason := range []string{"stop", "length", "abort"} {
		fmt.Fprintf(&b, "vllm:request_success_total{%s,finished_reason=%q} %g\n", lbl, reason, k*float64((10+i%7)>>j))
	}
	counter("vllm:prompt_tokens_total", k*float64(1000+i))
	counter("vllm:generation_tokens_total", k*float64(500+i))
	counter("vllm:prefix_cache_queries_total", k*float64(1000+i))
	counter("vllm:prefix_cache_hits_total", k*float64(300+i))
	hist("vllm:time_to_first_token_seconds", ttftBuckets, 0.2)
	hist("vllm:inter_token_latency_seconds", itlBuckets, 0.02)
	hist("vllm:e2e_request_latency_seconds", e2eBuckets, 3)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}

// syntheticRules returns a rule file of groups×perGroup alerting rules in
// ten vLLM-like shapes (queries across all instances, thresholds such that a
// healthy fleet fires a handful: about 1,700 alerts for 1,000 rules), each
// with templated annotations, at the given interval.
func syntheticRules(groups, perGroup int, interval string) string {
	shapes := []string{
		`vllm:kv_cache_usage_perc > 0.98`,
		`vllm:num_requests_waiting > 11 and vllm:kv_cache_usage_perc > 0.5`,
		`rate(vllm:num_preemptions_total[1m]) > 0.5 and on (instance) vllm:kv_cache_usage_perc > 0.95`,
		`histogram_quantile(0.99, sum by (le, instance) (rate(vllm:time_to_first_token_seconds_bucket[1m]))) > 4 and on (instance) vllm:num_requests_waiting > 10`,
		`sum by (instance) (rate(vllm:request_success_total[1m])) < 0.5`,
		`vllm:num_requests_waiting > 10 and vllm:num_requests_running < 2`,
		`histogram_quantile(0.95, sum by (le, instance) (rate(vllm:e2e_request_latency_seconds_bucket[1m]))) > 60`,
		`rate(vllm:generation_tokens_total[1m]) < 50 and vllm:num_requests_waiting > 0`,
		`vllm:kv_cache_usage_perc > 0.9 and vllm:num_requests_running < 4`,
		`sum by (instance) (rate(vllm:prompt_tokens_total[1m])) > 219`,
	}
	var b strings.Builder
	b.WriteString("groups:\n")
	n := 0
	for g := range groups {
		fmt.Fprintf(&b, "  - name: synthetic-%02d\n    interval: %s\n    rules:\n", g, interval)
		for range perGroup {
			fmt.Fprintf(&b, "      - alert: Synthetic%04d\n        expr: '%s'\n        labels:\n          severity: warning\n", n, shapes[n%len(shapes)])
			b.WriteString("        annotations:\n          summary: 'instance {{ $labels.instance }} at {{ $value | humanize }}'\n          runbook_url: 'vllm/Synthetic'\n")
			n++
		}
	}
	return b.String()
}
