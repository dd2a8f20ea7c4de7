package enginebench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
	"github.com/pagedhq/paged/internal/testbin"
)

// phase is how long each measured phase lasts (PAGED_BENCH_PHASE, e.g. 60s).
func phase(tb testing.TB) time.Duration {
	if s := os.Getenv("PAGED_BENCH_PHASE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			tb.Fatalf("PAGED_BENCH_PHASE: %v", err)
		}
		return d
	}
	return 30 * time.Second
}

// cpuProfile writes a CPU profile of the paged phase to the file named by
// PAGED_BENCH_CPUPROFILE, if set; the returned func stops it.
func cpuProfile(tb testing.TB) func() {
	name := os.Getenv("PAGED_BENCH_CPUPROFILE")
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
}

// selfCPU is this process's user+system CPU time.
func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// scrapeSum sums the samples of the named metric on url's /metrics.
func scrapeSum(tb testing.TB, url, name string) float64 {
	tb.Helper()
	v, err := testbin.MetricSum(url, name)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func gatherSum(tb testing.TB, reg *prometheus.Registry, name string) float64 {
	tb.Helper()
	v, err := testbin.GatherSum(reg, name)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func promConfig(f *vllmFleet, ruleFile string) string {
	cfg := fmt.Sprintf("global:\n  scrape_interval: 5s\n  evaluation_interval: 5s\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: %s}]\n",
		f.targets())
	if ruleFile != "" {
		cfg += fmt.Sprintf("rule_files: [%q]\n", ruleFile)
	}
	return cfg
}

// BenchmarkEngineVsPrometheus evaluates 1,000 vLLM-like alerting rules (10
// groups of 100, every 5s) over 100 simulated vLLM servers (100 targets,
// ~6,500 series); see compare for the phases.
func BenchmarkEngineVsPrometheus(b *testing.B) {
	const groups, perGroup = 10, 100
	ruleFile := filepath.Join(b.TempDir(), "synthetic.rules.yaml")
	if err := os.WriteFile(ruleFile, []byte(syntheticRules(groups, perGroup, "5s")), 0o644); err != nil {
		b.Fatal(err)
	}
	compare(b, ruleFile, groups, groups*perGroup, phase(b))
}

// BenchmarkVLLMPack evaluates the vLLM rule pack (examples/packs/vllm)
// over the same 100 simulated servers.
func BenchmarkVLLMPack(b *testing.B) {
	src := filepath.Join(testbin.RepoRoot(b), "examples", "packs", "vllm", "vllm.rules.yaml")
	content, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	n := strings.Count(string(content), "- alert:") + strings.Count(string(content), "- record:")
	g := strings.Count(string(content), "- name:")
	ruleFile := filepath.Join(b.TempDir(), "vllm.rules.yaml")
	if err := os.WriteFile(ruleFile, content, 0o644); err != nil {
		b.Fatal(err)
	}
	// The pack's queries cost Prometheus about 0.1 s per cycle, close to
	// the noise of its CPU counter: its phases are four times as long.
	compare(b, ruleFile, g, n, 4*phase(b))
}

// compare runs three phases on the same data:
//
//  1. baseline: Prometheus only scrapes (the simulated servers run in a
//     child process);
//  2. paged: the engine evaluates the rules against Prometheus's API;
//     paged's CPU (this process minus the baseline) against Prometheus's
//     CPU for answering (its CPU minus the baseline);
//  3. prometheus: Prometheus evaluates the same rule file itself.
//
// CPU per evaluation cycle (every rule once) is reported. On a loaded
// machine a cycle can outlast a phase, so cycles are counted in rule
// evaluations, not in group iterations.
func compare(b *testing.B, ruleFile string, groups, nRules int, ph time.Duration) {
	x := newVLLMFleet(b, 100)
	p := testbin.StartPrometheus(b, promConfig(x, ""))
	time.Sleep(12 * time.Second) // a few scrapes, so that rate() has data

	// 1. Baseline.
	s0, p0, t0 := selfCPU(), scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	time.Sleep(ph / 2)
	s1, p1, t1 := selfCPU(), scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	baseSelf := (s1 - s0) / t1.Sub(t0).Seconds()
	baseProm := (p1 - p0) / t1.Sub(t0).Seconds()

	// 2. paged.
	ds, err := engine.NewRemote(engine.RemoteOptions{URL: p.URL, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	// paged's default: a group's alerting rules share one query
	// (PAGED_BENCH_SEPARATE=1: one query per rule).
	combine := os.Getenv("PAGED_BENCH_SEPARATE") == ""
	e, err := engine.New(engine.Options{Datasource: ds, StoragePath: b.TempDir(), Registerer: reg, EvaluationInterval: 5 * time.Second, CombineQueries: combine})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.ApplyRules([]string{ruleFile}, engine.RuleSettings{ExternalLabels: labels.FromStrings("cluster", "bench")}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	time.Sleep(12 * time.Second) // warm up: first cycles, restore
	b.ResetTimer()
	it0 := gatherSum(b, reg, "prometheus_rule_group_iterations_total")
	q0 := gatherSum(b, reg, "prometheus_rule_evaluations_total")
	r0 := gatherSum(b, reg, "paged_datasource_queries_total")
	stopProfile := cpuProfile(b)
	s0, p0, t0 = selfCPU(), scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	time.Sleep(ph)
	s1, p1, t1 = selfCPU(), scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	stopProfile()
	it1 := gatherSum(b, reg, "prometheus_rule_group_iterations_total")
	q1 := gatherSum(b, reg, "prometheus_rule_evaluations_total")
	r1 := gatherSum(b, reg, "paged_datasource_queries_total")
	b.StopTimer()
	wallPerGroup := gatherSum(b, reg, "prometheus_rule_group_last_duration_seconds") / float64(groups)
	var firing int
	for _, g := range e.RuleGroups() {
		for _, r := range g.Rules() {
			if ar, ok := r.(*promrules.AlertingRule); ok {
				firing += len(ar.ActiveAlerts())
			}
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	dur := t1.Sub(t0).Seconds()
	cycles := (q1 - q0) / float64(nRules)
	if q1-q0 < float64(nRules)/4 {
		b.Fatalf("no complete evaluation cycle in %v: iterations %v->%v, rule evaluations %v->%v, last group durations %vs", ph, it0, it1, q0, q1, wallPerGroup*float64(groups))
	}
	pagedCPU := ((s1 - s0) - baseSelf*dur) / cycles
	queryCPU := ((p1 - p0) - baseProm*dur) / cycles

	// 3. Prometheus evaluates the same rules itself.
	if err := os.WriteFile(filepath.Join(p.Dir, "prometheus.yml"), []byte(promConfig(x, ruleFile)), 0o644); err != nil {
		b.Fatal(err)
	}
	resp, err := http.Post(p.URL+"/-/reload", "", nil)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("reload: %v %v", err, resp)
	}
	resp.Body.Close()
	time.Sleep(12 * time.Second)
	pi0 := scrapeSum(b, p.URL, "prometheus_rule_evaluations_total")
	p0, t0 = scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	time.Sleep(ph)
	p1, t1 = scrapeSum(b, p.URL, "process_cpu_seconds_total"), time.Now()
	pi1 := scrapeSum(b, p.URL, "prometheus_rule_evaluations_total")
	promCycles := (pi1 - pi0) / float64(nRules)
	if pi1-pi0 < float64(nRules)/4 {
		b.Fatalf("Prometheus completed no evaluation cycle in %v", ph)
	}
	promOwn := ((p1 - p0) - baseProm*t1.Sub(t0).Seconds()) / promCycles

	b.ReportMetric(pagedCPU*1000, "paged-cpu-ms/cycle")
	b.ReportMetric(queryCPU*1000, "prom-query-cpu-ms/cycle")
	b.ReportMetric(100*pagedCPU/queryCPU, "paged/query-%")
	b.ReportMetric(promOwn*1000, "prom-own-eval-cpu-ms/cycle")
	b.Logf("rules=%d groups=%d servers=100 phase=%v combined queries=%v paged cycles=%.2f (group iterations %.0f, queries sent %.0f) prometheus cycles=%.2f firing=%d", nRules, groups, ph, combine, cycles, it1-it0, r1-r0, promCycles, firing)
	b.Logf("baseline CPU: this process %.3f s/s (exporter), prometheus %.3f s/s (scraping)", baseSelf, baseProm)
	b.Logf("paged engine CPU per cycle:              %7.1f ms", pagedCPU*1000)
	b.Logf("prometheus CPU answering paged per cycle: %7.1f ms", queryCPU*1000)
	b.Logf("paged / query cost:                       %7.1f %%", 100*pagedCPU/queryCPU)
	b.Logf("prometheus evaluating the rules itself:   %7.1f ms per cycle", promOwn*1000)
	b.Logf("paged group evaluation wall time:         %7.1f ms per group (mean of last)", wallPerGroup*1000)
}

// BenchmarkActiveAlerts10k measures the engine's memory with 10,000 firing
// alerts (one rule over 10,000 series of an in-process datasource, every
// 10s) and the CPU of one evaluation of that rule.
func BenchmarkActiveAlerts10k(b *testing.B) {
	const n = 10_000
	ds := enginetest.New(b)
	now := time.Now()
	for i := range n {
		ds.Set(b, fmt.Sprintf(`llm_load{server="s%05d",model_name="llama"}`, i), now, float64(i%100)+1)
	}
	rf := filepath.Join(b.TempDir(), "many.rules.yaml")
	rule := "groups:\n  - name: many\n    interval: 10s\n    rules:\n      - alert: Many\n        expr: llm_load > 0\n        labels: {severity: warning}\n" +
		"        annotations:\n          summary: 'server {{ $labels.server }} load {{ $value }}'\n          runbook_url: 'vllm/Many'\n"
	if err := os.WriteFile(rf, []byte(rule), 0o644); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	reg := prometheus.NewRegistry()
	e, err := engine.New(engine.Options{Datasource: ds, StoragePath: b.TempDir(), Registerer: reg})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.ApplyRules([]string{rf}, engine.RuleSettings{}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	deadline := time.Now().Add(120 * time.Second)
	// Wait on the datasource's query count (an atomic read; the engine's
	// readiness probe is one more query) until the evaluation has started,
	// then on the rules metrics (a registry gather, which costs CPU
	// itself) until it has finished.
	waitIter := func(n float64) {
		for float64(ds.Queries()) < n+1 {
			if time.Now().After(deadline) {
				b.Fatalf("the engine did not evaluate %v times in 120s", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
		for gatherSum(b, reg, "prometheus_rule_evaluations_total") < n {
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Measure between the second and third evaluation (the restore is
	// behind), and read the heap right after the third, while the engine
	// idles until the next one.
	waitIter(2)
	c0 := selfCPU()
	waitIter(3)
	c1 := selfCPU()
	cpuPerEval := c1 - c0
	active := gatherSum(b, reg, "paged_alerts")
	runtime.GC()
	runtime.ReadMemStats(&m1)
	wall := gatherSum(b, reg, "prometheus_rule_group_last_duration_seconds")
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if active != n {
		b.Fatalf("active alerts = %v, want %d", active, n)
	}
	heap := float64(m1.HeapAlloc) - float64(m0.HeapAlloc)
	b.ReportMetric(heap/(1<<20), "heap-MiB")
	b.ReportMetric(heap/n, "heap-B/alert")
	b.ReportMetric(wall*1000, "eval-wall-ms")
	b.ReportMetric(cpuPerEval*1000, "eval-cpu-ms")
	b.Logf("%d active alerts: heap %+.1f MiB (%.0f B/alert, ALERTS/ALERTS_FOR_STATE head included), Go runtime sys %.0f MiB",
		n, heap/(1<<20), heap/n, float64(m1.Sys)/(1<<20))
	b.Logf("one evaluation of the rule (10,000 alerts, query included): %.0f ms CPU, %.0f ms wall", cpuPerEval*1000, wall*1000)
}
