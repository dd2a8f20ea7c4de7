package backtest_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/engine/backtest"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	good := map[string]time.Time{
		"now":                  now,
		"-7d":                  now.Add(-7 * 24 * time.Hour),
		"-1h30m":               now.Add(-90 * time.Minute),
		"now-2d":               now.Add(-48 * time.Hour),
		"now+1h":               now.Add(time.Hour),
		"2026-11-22T10:00:00Z": time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		"1795000000":           time.Unix(1795000000, 0),
		"1795000000.5":         time.Unix(1795000000, 5e8),
	}
	for in, want := range good {
		got, err := backtest.ParseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "-7x", "2026-13-01T00:00:00Z", "NaN", "-", "1e300", "now-", "nowx", "now-7"} {
		if _, err := backtest.ParseTime(in, now); err == nil {
			t.Errorf("ParseTime(%q) accepted", in)
		}
	}
}

func TestSplitThreshold(t *testing.T) {
	cases := map[string]string{
		`x > 0.9`:                   `x > 0.9`,
		`(max by (a) (x)) >= 5`:     `(max by (a) (x)) >= 5`,
		`10 < sum(rate(y[5m]))`:     `sum(rate(y[5m])) > 10`,
		`x > 0 and rate(y[5m]) < 1`: `x > 0`,
		`(x > (3)) unless on (a) z`: `x > 3`,
		`x > bool 1`:                ``,
		`up == 0`:                   `up == 0`,
		`absent(up)`:                ``,
		`x > y`:                     ``,
	}
	p := parser.NewParser(parser.Options{})
	for in, want := range cases {
		e, err := p.ParseExpr(in)
		if err != nil {
			t.Fatal(err)
		}
		th := backtest.SplitThreshold(e)
		got := ""
		if th != nil {
			got = th.LHS + " " + th.Op + " " + strconv.FormatFloat(th.Value, 'g', -1, 64)
		}
		if got != want {
			t.Errorf("SplitThreshold(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSet(t *testing.T) {
	got, err := backtest.ParseSet([]string{"A=0.5", " B = 10 "})
	if err != nil || got["A"] != 0.5 || got["B"] != 10 || len(got) != 2 {
		t.Fatalf("ParseSet = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"A"}, {"=1"}, {"A=x"}, {"A=1", "A=2"}} {
		if _, err := backtest.ParseSet(bad); err == nil {
			t.Errorf("ParseSet(%q) accepted", bad)
		}
	}
}

// TestSetThreshold: --set changes what fires, and says so in the report.
func TestSetThreshold(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	db := record(t, t.TempDir(), start, 50*time.Minute, 5*time.Second, kvTimeline)
	defer db.Close()
	file := writeFile(t, t.TempDir(), "fast.rules.yaml", fastRules)
	run := func(set map[string]float64) *backtest.Report {
		t.Helper()
		rep, err := backtest.Run(context.Background(), backtest.Options{
			Source: backtest.NewQueryable(newPromQL(), db), RuleFiles: []string{file},
			From: start, To: start.Add(50 * time.Minute), Thresholds: set,
			Rules: regexp.MustCompile(`^KVCacheHigh$`),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rules) != 1 {
			t.Fatalf("want KVCacheHigh only, got %d rules", len(rep.Rules))
		}
		return rep
	}
	base := run(nil).Rules[0]
	if base.Fired != 2 || base.Threshold == nil || base.Threshold.Value != 0.9 || base.Threshold.Overridden {
		t.Fatalf("baseline: fired %d, threshold %+v", base.Fired, base.Threshold)
	}
	high := run(map[string]float64{"KVCacheHigh": 0.995}).Rules[0]
	if high.Fired != 0 || !high.Threshold.Overridden || high.Threshold.Original != 0.9 || !strings.Contains(high.Expr, "> 0.995") {
		t.Errorf("threshold 0.995 (above the 0.99 peak): fired %d, threshold %+v, expr %s", high.Fired, high.Threshold, high.Expr)
	}
	low := run(map[string]float64{"KVCacheHigh": 0.5}).Rules[0]
	if low.Fired != 2 || !low.Firing[0].Start.Before(base.Firing[0].Start) || low.TimeFiring <= base.TimeFiring {
		t.Errorf("threshold 0.5 should fire earlier and longer: %v vs %v", low.Firing, base.Firing)
	}

	for set, want := range map[string]string{"NoSuchAlert": "no selected alerting rule", "QueueWaiting": "no selected"} {
		_, err := backtest.Run(context.Background(), backtest.Options{
			Source: backtest.NewQueryable(newPromQL(), db), RuleFiles: []string{file},
			From: start, To: start.Add(time.Hour), Thresholds: map[string]float64{set: 1},
			Rules: regexp.MustCompile(`^KVCacheHigh$`),
		})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: err %v, want %q", set, err, want)
		}
	}
}

// TestBadInput: broken rule files and options are errors with positions,
// never panics.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	src := backtest.SourceFunc(func(context.Context, string, time.Time, time.Time, time.Duration) (promql.Matrix, error) {
		t.Error("no query expected")
		return nil, nil
	})
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		opts backtest.Options
		want string
	}{
		"no source":      {backtest.Options{From: now, To: now.Add(time.Hour)}, "source is required"},
		"reversed range": {backtest.Options{Source: src, From: now, To: now.Add(-time.Hour)}, "must be before"},
		"bad yaml": {backtest.Options{Source: src, From: now, To: now.Add(time.Hour),
			RuleFiles: []string{writeFile(t, dir, "a.rules.yaml", "groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: up ==\n")}}, "a.rules.yaml:5:"},
		"missing file": {backtest.Options{Source: src, From: now, To: now.Add(time.Hour),
			RuleFiles: []string{dir + "/missing.yaml"}}, "missing.yaml"},
		"no threshold": {backtest.Options{Source: src, From: now, To: now.Add(time.Hour), Thresholds: map[string]float64{"A": 1},
			RuleFiles: []string{writeFile(t, dir, "b.rules.yaml", "groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: absent(up)\n")}}, "no top-level comparison"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := backtest.Run(context.Background(), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}
