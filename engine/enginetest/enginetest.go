// Package enginetest provides a Datasource for tests of the engine and of
// the packages built on it: a real PromQL engine over a small TSDB whose
// series the test sets, and a switch that makes the datasource unavailable.
package enginetest

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/engine"
)

// ErrDown is the error queries fail with while the datasource is down.
var errDown = errors.New("enginetest: datasource is down")

// Datasource answers PromQL with Prometheus's engine over series the test
// appends. It is safe for concurrent use.
type Datasource struct {
	db      *tsdb.DB
	eng     *promql.Engine
	ds      *engine.Queryable
	down    atomic.Bool
	queries atomic.Int64

	mu sync.Mutex
}

// New opens the datasource's storage in a temporary directory; it is
// closed when the test ends. Use it inside a synctest bubble as well.
func New(tb testing.TB) *Datasource {
	tb.Helper()
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = 0
	db, err := tsdb.Open(tb.TempDir(), nil, nil, opts, nil)
	if err != nil {
		tb.Fatalf("enginetest: open storage: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	eng := promql.NewEngine(promql.EngineOpts{
		MaxSamples:    50_000_000,
		Timeout:       time.Minute,
		LookbackDelta: 5 * time.Minute,
	})
	return &Datasource{db: db, eng: eng, ds: engine.NewQueryable(eng, db)}
}

// Close closes the storage before the test's cleanup would, for tests in
// a synctest bubble whose goroutines must end inside it.
func (d *Datasource) Close() error { return d.db.Close() }

// Set appends value v at t to the series written in PromQL's series
// syntax, e.g. `vllm:num_requests_waiting{instance="a"}`.
func (d *Datasource) Set(tb testing.TB, series string, t time.Time, v float64) {
	tb.Helper()
	lset, err := parser.NewParser(parser.Options{}).ParseMetric(series)
	if err != nil {
		tb.Fatalf("enginetest: series %q: %v", series, err)
	}
	d.append(tb, lset, t, v)
}

// Clear ends a series at t with a staleness marker, as a scrape that no
// longer sees it does.
func (d *Datasource) Clear(tb testing.TB, series string, t time.Time) {
	tb.Helper()
	lset, err := parser.NewParser(parser.Options{}).ParseMetric(series)
	if err != nil {
		tb.Fatalf("enginetest: series %q: %v", series, err)
	}
	d.append(tb, lset, t, math.Float64frombits(value.StaleNaN))
}

func (d *Datasource) append(tb testing.TB, lset labels.Labels, t time.Time, v float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	app := d.db.AppenderV2(context.Background())
	if _, err := app.Append(0, lset, 0, t.UnixMilli(), v, nil, nil, storage.AOptions{}); err != nil {
		_ = app.Rollback()
		tb.Fatalf("enginetest: append %s: %v", lset, err)
	}
	if err := app.Commit(); err != nil {
		tb.Fatalf("enginetest: commit: %v", err)
	}
}

// SetDown makes every query fail as unavailable (true) or answer again
// (false).
func (d *Datasource) SetDown(down bool) { d.down.Store(down) }

// Queries returns the number of queries received so far.
func (d *Datasource) Queries() int64 { return d.queries.Load() }

// Query implements engine.Datasource.
func (d *Datasource) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	d.queries.Add(1)
	if d.down.Load() {
		return nil, engine.Unavailable(errDown)
	}
	return d.ds.Query(ctx, expr, ts)
}

// String names the datasource in messages.
func (d *Datasource) String() string { return "enginetest" }

// QueryRange implements engine.HistoryDatasource: the engine replays what
// it missed while it was down from it, as from a remote Prometheus.
func (d *Datasource) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
	d.queries.Add(1)
	if d.down.Load() {
		return nil, engine.Unavailable(errDown)
	}
	q, err := d.eng.NewRangeQuery(ctx, d.db, nil, expr, start, end, step)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return nil, res.Err
	}
	switch v := res.Value.(type) {
	case promql.Matrix:
		return v, nil
	default:
		return nil, errors.New("enginetest: range query did not return a matrix")
	}
}
