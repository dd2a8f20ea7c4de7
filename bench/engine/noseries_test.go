package enginebench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/packs"
)

// BenchmarkNoSeriesCheck measures what the PagedRuleNoSeries check costs
// per check, over the same 100 simulated vLLM servers as the other
// benchmarks: the queries it sends, paged's CPU and the CPU Prometheus
// spends answering them, for the vLLM pack (narrowed to job vllm) and for
// 1,000 rules whose selectors are all distinct (10 metrics × 100
// instances, the worst case for counting: no two rules share a selector).
//
// The rules' groups evaluate once an hour, so after the first evaluation
// only the check runs; no_series_after is 6s, which makes it check every
// second (a production setting of 30m checks every 5 minutes).
func BenchmarkNoSeriesCheck(b *testing.B) {
	x := newVLLMFleet(b, 100)
	p := testbin.StartPrometheus(b, promConfig(x, ""))
	time.Sleep(12 * time.Second) // a few scrapes

	pack, err := packs.Lookup("vllm")
	if err != nil {
		b.Fatal(err)
	}
	rendered, err := pack.Apply(packs.Overrides{Selector: `{job="vllm"}`})
	if err != nil {
		b.Fatal(err)
	}
	packRules := strings.ReplaceAll(string(rendered.Content), "  - name: ", "  - interval: 1h\n    name: ")

	metrics := []string{
		"vllm:kv_cache_usage_perc", "vllm:num_requests_waiting", "vllm:num_requests_running",
		"vllm:num_preemptions_total", "vllm:request_success_total", "vllm:prompt_tokens_total",
		"vllm:generation_tokens_total", "vllm:prefix_cache_hits_total",
		"vllm:time_to_first_token_seconds_bucket", "vllm:e2e_request_latency_seconds_count",
	}
	var many strings.Builder
	many.WriteString("groups:\n")
	n := 0
	for g := range 10 {
		fmt.Fprintf(&many, "  - name: distinct-%02d\n    interval: 1h\n    rules:\n", g)
		for range 100 {
			fmt.Fprintf(&many, "      - alert: Distinct%04d\n        expr: 'max(%s{job=\"vllm\", instance=\"%s\"}) > 1e12'\n",
				n, metrics[n%len(metrics)], x.addrs[n/len(metrics)])
			n++
		}
	}

	for _, w := range []struct{ name, rules string }{
		{"vllm-pack", packRules},
		{"1000-distinct-selectors", many.String()},
	} {
		b.Run(w.name, func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "rules.yaml")
			if err := os.WriteFile(file, []byte(w.rules), 0o644); err != nil {
				b.Fatal(err)
			}
			// The same rules every 5s without the check: what one
			// evaluation cycle costs Prometheus, for scale.
			cycleFile := filepath.Join(b.TempDir(), "cycle.rules.yaml")
			if err := os.WriteFile(cycleFile, []byte(strings.ReplaceAll(w.rules, "interval: 1h", "interval: 5s")), 0o644); err != nil {
				b.Fatal(err)
			}
			nRules := strings.Count(w.rules, "- alert:") + strings.Count(w.rules, "- record:")
			noSeriesPhase(b, p, file, cycleFile, nRules, phase(b))
		})
	}
}

func noSeriesPhase(b *testing.B, p *testbin.Process, ruleFile, cycleFile string, nRules int, ph time.Duration) {
	// Baseline: Prometheus scrapes, nothing queries it.
	s0, p0, t0 := selfCPU(), scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	time.Sleep(ph / 2)
	s1, p1, t1 := selfCPU(), scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	baseSelf := (s1 - s0) / t1.Sub(t0).Seconds()
	baseProm := (p1 - p0) / t1.Sub(t0).Seconds()

	ds, err := engine.NewRemote(engine.RemoteOptions{URL: p.URL, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	e, err := engine.New(engine.Options{Datasource: ds, StoragePath: b.TempDir(), Registerer: reg, CombineQueries: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.ApplyRules([]string{ruleFile}, engine.RuleSettings{NoSeriesAfter: 6 * time.Second}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	time.Sleep(10 * time.Second) // the groups' one evaluation, the first checks
	b.ResetTimer()
	c0 := gatherSum(b, reg, "paged_rule_no_series_checks_total")
	q0 := gatherSum(b, reg, "paged_rule_no_series_queries_total")
	s0, p0, t0 = selfCPU(), scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	time.Sleep(ph)
	s1, p1, t1 = selfCPU(), scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	c1 := gatherSum(b, reg, "paged_rule_no_series_checks_total")
	q1 := gatherSum(b, reg, "paged_rule_no_series_queries_total")
	failed := gatherSum(b, reg, "paged_rule_no_series_checks_total") - testbinSum(b, reg, "paged_rule_no_series_checks_total", "outcome", "success")
	selectors := gatherSum(b, reg, "paged_rule_no_series_selectors")
	b.StopTimer()
	firing := 0
	for _, a := range e.BuiltinAlerts() {
		if a.Labels.Get("alertname") == engine.RuleNoSeriesAlert {
			firing++
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	checks := c1 - c0
	if checks < 1 {
		b.Fatalf("no check in %v", ph)
	}
	cycleCPU := ruleCycleCPU(b, p, cycleFile, nRules, baseProm, ph)
	dur := t1.Sub(t0).Seconds()
	pagedCPU := ((s1 - s0) - baseSelf*dur) / checks
	promCPU := ((p1 - p0) - baseProm*dur) / checks
	b.ReportMetric((q1-q0)/checks, "queries/check")
	b.ReportMetric(selectors, "selectors")
	b.ReportMetric(pagedCPU*1000, "paged-cpu-ms/check")
	b.ReportMetric(promCPU*1000, "prom-cpu-ms/check")
	b.ReportMetric(cycleCPU*1000, "prom-cpu-ms/rule-cycle")
	b.Logf("phase %v: %.0f checks, %.0f queries (%.1f per check) for %.0f distinct selectors; %.0f failed checks; %d PagedRuleNoSeries firing",
		ph, checks, q1-q0, (q1-q0)/checks, selectors, failed, firing)
	b.Logf("per check: paged %.2f ms CPU, Prometheus %.2f ms CPU answering (baseline %.3f / %.3f s/s)", pagedCPU*1000, promCPU*1000, baseSelf, baseProm)
	b.Logf("one evaluation cycle of the same rules costs Prometheus %.1f ms: a check is %.1f %% of a cycle; checking every 5m beside rules every 30s adds %.2f %% to the query load",
		cycleCPU*1000, 100*promCPU/cycleCPU, 100*promCPU/(10*cycleCPU))
}

// ruleCycleCPU runs the engine on the rules every 5s with the check off
// and returns Prometheus's CPU per evaluation cycle (every rule once).
func ruleCycleCPU(b *testing.B, p *testbin.Process, ruleFile string, nRules int, baseProm float64, ph time.Duration) float64 {
	ds, err := engine.NewRemote(engine.RemoteOptions{URL: p.URL, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	e, err := engine.New(engine.Options{Datasource: ds, StoragePath: b.TempDir(), Registerer: reg, CombineQueries: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.ApplyRules([]string{ruleFile}, engine.RuleSettings{}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	time.Sleep(12 * time.Second)
	r0 := gatherSum(b, reg, "prometheus_rule_evaluations_total")
	p0, t0 := scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	time.Sleep(ph)
	p1, t1 := scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	r1 := gatherSum(b, reg, "prometheus_rule_evaluations_total")
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	cycles := (r1 - r0) / float64(nRules)
	if cycles < 0.25 {
		b.Fatalf("no evaluation cycle in %v", ph)
	}
	return ((p1 - p0) - baseProm*t1.Sub(t0).Seconds()) / cycles
}

func testbinSum(b *testing.B, reg *prometheus.Registry, name string, pairs ...string) float64 {
	b.Helper()
	v, err := testbin.GatherSum(reg, name, pairs...)
	if err != nil {
		b.Fatal(err)
	}
	return v
}
