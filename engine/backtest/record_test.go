package backtest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/engine/backtest"

	"github.com/pagedhq/paged/simulator"
)

// phase is a simulator scenario that starts at an offset from the start.
type phase struct {
	at       time.Duration
	scenario string
}

// kvTimeline: healthy, a long KV-cache saturation (fires the pack's
// 10-minute alerts), healthy, a short saturation (pending only for the
// pack, fires the fast test rules), healthy.
var kvTimeline = []phase{
	{0, "steady"},
	{5 * time.Minute, "kv-saturation"},
	{25 * time.Minute, "kv-saturation-end"},
	{35 * time.Minute, "kv-saturation"},
	{38*time.Minute + 30*time.Second, "kv-saturation-end"},
}

// record writes what a scrape of a simulated vLLM server every scrape
// interval from start for span would have stored: the simulator's
// exposition at each instant, with the job and instance labels and an up
// series, into a TSDB opened in dir. The caller closes the TSDB.
func record(t testing.TB, dir string, start time.Time, span, scrape time.Duration, timeline []phase) *tsdb.DB {
	t.Helper()
	return recordWith(t, simulator.Options{}, dir, start, span, scrape, timeline)
}

// recordWith is record with simulator options (features such as
// SpecDecode, a Server other than vllm); Scenario, Seed, Start and Now are
// set here. The job label is the server's name; while the scenario has the
// server down only up (0) is written.
func recordWith(t testing.TB, so simulator.Options, dir string, start time.Time, span, scrape time.Duration, timeline []phase) *tsdb.DB {
	t.Helper()
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = 0
	db, err := tsdb.Open(dir, nil, nil, opts, nil)
	if err != nil {
		t.Fatalf("open tsdb: %v", err)
	}
	if so.Server == "" {
		so.Server = simulator.ServerVLLM
	}
	job := string(so.Server)
	so.Scenario, so.Seed, so.Start, so.Now = "steady", 7, start, func() time.Time { return start }
	sim, err := simulator.New(so)
	if err != nil {
		t.Fatal(err)
	}
	st := labels.NewSymbolTable()
	next := 0
	for ts := start; !ts.After(start.Add(span)); ts = ts.Add(scrape) {
		for next < len(timeline) && !start.Add(timeline[next].at).After(ts) {
			name := timeline[next].scenario
			if name == "kv-saturation-end" {
				name = "steady"
			}
			if err := sim.SetScenarioAt(name, ts); err != nil {
				t.Fatal(err)
			}
			next++
		}
		var buf bytes.Buffer
		up := 1.0
		if err := sim.WriteMetricsAt(&buf, ts); errors.Is(err, simulator.ErrDown) {
			up = 0
		} else if err != nil {
			t.Fatalf("simulator at %s: %v", ts, err)
		}
		app := db.AppenderV2(context.Background())
		add := func(l labels.Labels, v float64) {
			if _, err := app.Append(0, l, 0, ts.UnixMilli(), v, nil, nil, storage.AOptions{}); err != nil {
				t.Fatalf("append %s: %v", l, err)
			}
		}
		add(labels.FromStrings("__name__", "up", "instance", "sim:8000", "job", job), up)
		p, err := textparse.New(buf.Bytes(), "text/plain; version=0.0.4", st, textparse.ParserOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for {
			et, err := p.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("parse exposition: %v", err)
			}
			if et != textparse.EntrySeries {
				continue
			}
			_, _, v := p.Series()
			var l labels.Labels
			p.Labels(&l)
			b := labels.NewBuilder(l)
			b.Set("instance", "sim:8000")
			b.Set("job", job)
			add(b.Labels(), v)
		}
		if err := app.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func newPromQL() *promql.Engine {
	return promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
}

// fastRules fire within the short saturation too, with keep_firing_for.
const fastRules = `groups:
  - name: backtest-fast
    interval: 15s
    rules:
      - alert: KVCacheHigh
        expr: max by (model_name, instance) (vllm:kv_cache_usage_perc) > 0.9
        for: 1m
        keep_firing_for: 45s
        labels:
          severity: warning
        annotations:
          summary: 'KV cache {{ $value | humanizePercentage }} on {{ $labels.instance }}'
      - alert: QueueWaiting
        expr: sum by (model_name) (vllm:num_requests_waiting) > 20
        for: 2m
        labels:
          severity: warning
`

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// scenarioStart is when the scenario backtests' recordings begin; the
// server runs steady until scenarioOnset, then the scenario.
var scenarioStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

const scenarioOnset = 20 * time.Minute

// backtestScenario records a simulated server (so) steady for
// scenarioOnset, then in scenario until span, scraped every 15 s, and
// backtests the rule files over it from minute 5, every 30 s. A rule that
// fails to evaluate fails the test.
func backtestScenario(t *testing.T, so simulator.Options, scenario string, span time.Duration, ruleFiles ...string) *backtest.Report {
	t.Helper()
	db := recordWith(t, so, t.TempDir(), scenarioStart, span, 15*time.Second,
		[]phase{{0, "steady"}, {scenarioOnset, scenario}})
	defer db.Close()
	rep, err := backtest.Run(context.Background(), backtest.Options{
		Source:             backtest.NewQueryable(newPromQL(), db),
		RuleFiles:          ruleFiles,
		From:               scenarioStart.Add(5 * time.Minute),
		To:                 scenarioStart.Add(span),
		EvaluationInterval: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rules {
		if r.Error != "" || r.EvalErrors > 0 {
			t.Errorf("%s: error %q, %d failed evaluations", r.Name, r.Error, r.EvalErrors)
		}
	}
	return rep
}
