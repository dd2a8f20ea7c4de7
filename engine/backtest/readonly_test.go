package backtest_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/engine/backtest"
)

// TestEmbeddedTSDBReadOnly: the embedded mode's TSDB, opened read-only as
// `paged backtest` does (a running paged may hold it), replays the same
// as the TSDB it was written by.
func TestEmbeddedTSDBReadOnly(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "metrics")
	db := record(t, dir, start, 50*time.Minute, 5*time.Second, kvTimeline)
	file := writeFile(t, t.TempDir(), "fast.rules.yaml", fastRules)
	opts := backtest.Options{RuleFiles: []string{file}, From: start, To: start.Add(50 * time.Minute)}
	opts.Source = backtest.NewQueryable(newPromQL(), db)
	want, err := backtest.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := tsdb.OpenDBReadOnly(dir, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	src, closeSrc, err := backtest.NewReadOnly(newPromQL(), ro)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSrc()
	opts.Source, opts.Parallel = src, 1
	got, err := backtest.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	w, g := backtestSpans(want), backtestSpans(got)
	if len(w) < 2 || fmt.Sprint(w) != fmt.Sprint(g) {
		t.Errorf("read-only:\n%v\nwritable:\n%v", g, w)
	}
}
