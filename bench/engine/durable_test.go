package enginebench

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/internal/testbin"
)

// dirSize is the size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkDurableState10k measures what paged's crash-safe alert state
// costs with 10,000 firing alerts, next to what Prometheus writes for the
// same rule (ALERTS and ALERTS_FOR_STATE into its WAL), in the same run:
// one exporter with 10,000 series scraped every 5s by Debian's
// Prometheus; (1) Prometheus only scrapes; (2) paged evaluates
// `llm_load > 0` every 5s against it, resend delay 30s; (3) Prometheus
// evaluates the same rule itself, resend delay 30s.
func BenchmarkDurableState10k(b *testing.B) {
	const n = 10_000
	ph := 2 * phase(b)
	exp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		bw := bufio.NewWriterSize(w, 256<<10)
		for i := range n {
			fmt.Fprintf(bw, "llm_load{server=\"s%05d\",model_name=\"llama\"} %d\n", i, i%100+1)
		}
		bw.Flush()
	}))
	b.Cleanup(exp.Close)
	rule := "groups:\n  - name: many\n    interval: 5s\n    rules:\n      - alert: Many\n        expr: llm_load > 0\n        labels: {severity: warning}\n" +
		"        annotations:\n          summary: 'server {{ $labels.server }} load {{ $value }}'\n"
	rf := filepath.Join(b.TempDir(), "many.rules.yaml")
	if err := os.WriteFile(rf, []byte(rule), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := func(rules bool) string {
		c := fmt.Sprintf("global:\n  scrape_interval: 5s\n  evaluation_interval: 5s\nscrape_configs:\n  - job_name: load\n    static_configs: [{targets: [%q]}]\n", strings.TrimPrefix(exp.URL, "http://"))
		if rules {
			c += fmt.Sprintf("rule_files: [%q]\n", rf)
		}
		return c
	}
	p := testbin.StartPrometheus(b, cfg(false), "--rules.alert.resend-delay=30s")
	wal := filepath.Join(p.Dir, "data", "wal")
	time.Sleep(12 * time.Second)

	promWAL := func() (bytes, fsyncs float64) {
		return float64(dirSize(wal)), scrapeSum(b, p.URL, "prometheus_tsdb_wal_fsync_duration_seconds_count")
	}
	// 1. Prometheus scrapes only.
	w0, f0 := promWAL()
	t0 := time.Now()
	time.Sleep(ph)
	w1, f1 := promWAL()
	base := time.Since(t0).Seconds()
	baseBytes, baseFsyncs := (w1-w0)/base, (f1-f0)/base

	// 2. paged.
	ds, err := engine.NewRemote(engine.RemoteOptions{URL: p.URL, Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	store := b.TempDir()
	e, err := engine.New(engine.Options{
		Datasource: ds, StoragePath: store, Registerer: reg, CombineQueries: true,
		EvaluationInterval: 5 * time.Second, ResendDelay: 30 * time.Second,
		Reporter: durable.NewReporter(store, nil, reg),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.ApplyRules([]string{rf}, engine.RuleSettings{}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	deadline := time.Now().Add(2 * time.Minute)
	for gatherSum(b, reg, "paged_alerts") < n {
		if time.Now().After(deadline) {
			b.Fatalf("paged did not reach %d alerts", n)
		}
		time.Sleep(time.Second)
	}
	b.ResetTimer()
	m := func(name string) float64 { return gatherSum(b, reg, name) }
	fs0, rec0, by0, sn0, ev0, cpu0 := m("paged_state_fsyncs_total"), m("paged_state_records_total"), m("paged_state_written_bytes_total"),
		m("paged_state_snapshots_total"), m("prometheus_rule_evaluations_total"), selfCPU()
	t0 = time.Now()
	time.Sleep(ph)
	fs1, rec1, by1, sn1, ev1, cpu1 := m("paged_state_fsyncs_total"), m("paged_state_records_total"), m("paged_state_written_bytes_total"),
		m("paged_state_snapshots_total"), m("prometheus_rule_evaluations_total"), selfCPU()
	dur := time.Since(t0).Seconds()
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	stateSize := dirSize(filepath.Join(store, "alert-state"))

	// 3. Prometheus evaluates the rule itself.
	if err := os.WriteFile(filepath.Join(p.Dir, "prometheus.yml"), []byte(cfg(true)), 0o644); err != nil {
		b.Fatal(err)
	}
	resp, err := http.Post(p.URL+"/-/reload", "", nil)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	deadline = time.Now().Add(2 * time.Minute)
	for scrapeSum(b, p.URL, "prometheus_rule_group_rules") == 0 || scrapeSum(b, p.URL, "prometheus_rule_evaluations_total") < 3 {
		if time.Now().After(deadline) {
			b.Fatal("Prometheus did not evaluate the rule")
		}
		time.Sleep(time.Second)
	}
	w0, f0 = promWAL()
	t0 = time.Now()
	time.Sleep(ph)
	w1, f1 = promWAL()
	pd := time.Since(t0).Seconds()
	promBytes, promFsyncs := (w1-w0)/pd-baseBytes, (f1-f0)/pd-baseFsyncs

	evals := ev1 - ev0
	b.ReportMetric((fs1-fs0)/dur, "paged-fsyncs/s")
	b.ReportMetric((by1-by0)/dur/1024, "paged-KiB/s")
	b.ReportMetric(promBytes/1024, "prom-WAL-KiB/s")
	b.ReportMetric(promFsyncs, "prom-fsyncs/s")
	b.ReportMetric((cpu1-cpu0)/evals*1000, "paged-ms/eval")
	b.Logf("phase %v; 10,000 firing alerts, one group every 5s, resend delay 30s", ph)
	b.Logf("paged alert state: %.2f fsyncs/s, %.1f records/s, %.1f KiB/s written, %v snapshots, %.1f MiB on disk at the end; %.0f evaluations, %.1f ms CPU per evaluation (everything: query, decoding, rules, state)",
		(fs1-fs0)/dur, (rec1-rec0)/dur, (by1-by0)/dur/1024, sn1-sn0, float64(stateSize)/(1<<20), evals, (cpu1-cpu0)/evals*1000)
	b.Logf("Prometheus for the same rule: WAL +%.1f KiB/s, %.2f fsyncs/s more than scraping alone (%.1f KiB/s, %.2f fsyncs/s)",
		promBytes/1024, promFsyncs, baseBytes/1024, baseFsyncs)
}
