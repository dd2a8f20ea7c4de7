package embedded

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/simulator"
)

// gathered returns the sum of a gauge or counter family in reg, or -1.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		sum := 0.0
		for _, m := range mf.GetMetric() {
			sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
		return sum
	}
	return -1
}

// TestRestartKeepsData scrapes for a while, stops, and opens a new Embedded
// on the same storage path: the samples scraped before the restart are
// still there (the TSDB's WAL is replayed), and the new one keeps adding to
// the same series. Both use the same metrics registry, as a restart inside
// one process would.
func TestRestartKeepsData(t *testing.T) {
	_, addr := startSim(t, simulator.Options{Server: simulator.ServerVLLM, Speed: 10, Seed: 9})
	dir := t.TempDir()
	reg := prometheus.NewRegistry()
	opts := Options{
		Registerer:     reg,
		StoragePath:    dir,
		ScrapeInterval: 200 * time.Millisecond,
		ScrapeConfigs:  []ScrapeConfig{{JobName: "vllm", StaticConfigs: []StaticConfig{{Targets: []string{addr}}}}},
	}
	first, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// A second Embedded cannot open a TSDB that is in use.
	if _, err := New(opts); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("second New on a path in use: err = %v, want a lock error naming the path", err)
	}
	stop := run(t, first)
	const scrapes = 5
	eventually(t, 20*time.Second, func() error {
		if n := embScalar(t, first, `count_over_time(up{job="vllm"}[1h])`); !(n >= scrapes) {
			return errf([]string{"only " + ftoa(n) + " scrapes"})
		}
		return nil
	})
	if got := gathered(t, reg, "prometheus_tsdb_head_series"); got < 100 {
		t.Errorf("prometheus_tsdb_head_series = %v in the registry, want the scraped series", got)
	}
	stop()
	if v, err := query(first, `up`); err == nil {
		t.Errorf("query after Run returned %v; want an error (storage closed)", v)
	}
	if err := first.Run(context.Background()); err == nil {
		t.Error("a second Run returned no error")
	}

	second, err := New(opts)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = second.Close() })
	kept := embScalar(t, second, `count_over_time(up{job="vllm"}[1h])`)
	if !(kept >= scrapes) {
		t.Fatalf("after restart: %v samples of up, want >= %d", kept, scrapes)
	}
	if v := embScalar(t, second, `count_over_time(vllm:prompt_tokens_total{job="vllm"}[1h])`); !(v >= scrapes) {
		t.Errorf("after restart: %v samples of vllm:prompt_tokens_total, want >= %d", v, scrapes)
	}

	run(t, second)
	eventually(t, 20*time.Second, func() error {
		if n := embScalar(t, second, `count_over_time(up{job="vllm"}[1h])`); !(n >= kept+2) {
			return errf([]string{"after restart: " + ftoa(n) + " samples, want more than " + ftoa(kept)})
		}
		return nil
	})
}
