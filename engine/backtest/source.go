package backtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/engine"
)

// Source answers range queries: expr evaluated at start, start+step, ...
// up to end inclusive. It is backtest's only view of the metrics.
type Source interface {
	QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error)
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error)

// QueryRange calls f.
func (f SourceFunc) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
	return f(ctx, expr, start, end, step)
}

// Counting wraps a Source and counts the queries sent through it.
type Counting struct {
	Source
	n atomic.Int64
}

// QueryRange counts and forwards the query.
func (c *Counting) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
	c.n.Add(1)
	return c.Source.QueryRange(ctx, expr, start, end, step)
}

// Count returns the number of queries sent.
func (c *Counting) Count() int { return int(c.n.Load()) }

// Remote sends range queries to a Prometheus-compatible HTTP API
// (/api/v1/query_range).
type Remote struct {
	api     v1.API
	timeout time.Duration
	name    string
}

// NewRemote builds the client from the same options as the live engine's
// remote datasource (URL, timeout, http_config).
func NewRemote(o engine.RemoteOptions) (*Remote, error) {
	if o.Timeout <= 0 {
		// Range queries over days take longer than instant ones.
		o.Timeout = 2 * time.Minute
	}
	a, err := engine.NewPrometheusAPI(o, "paged_backtest")
	if err != nil {
		return nil, err
	}
	return &Remote{api: a, timeout: o.Timeout, name: engine.RedactURL(o.URL)}, nil
}

// String returns the URL without credentials.
func (r *Remote) String() string { return r.name }

// QueryRange runs one query_range request.
func (r *Remote) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	val, _, _, err := r.api.QueryRange(ctx, expr, v1.Range{Start: start, End: end, Step: step}, v1.WithTimeout(r.timeout))
	if err != nil {
		var ae *v1.Error
		if errors.As(err, &ae) {
			return nil, fmt.Errorf("%s: %s", ae.Type, ae.Msg)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, fmt.Errorf("%s %s: %w", ue.Op, engine.RedactURL(ue.URL), ue.Err)
		}
		return nil, err
	}
	return toMatrix(val)
}

func toMatrix(val model.Value) (promql.Matrix, error) {
	switch v := val.(type) {
	case model.Matrix:
		out := make(promql.Matrix, 0, len(v))
		b := labels.NewScratchBuilder(8)
		for _, ss := range v {
			b.Reset()
			for n, lv := range ss.Metric {
				b.Add(string(n), string(lv))
			}
			b.Sort()
			s := promql.Series{Metric: b.Labels(), Floats: make([]promql.FPoint, 0, len(ss.Values))}
			for _, p := range ss.Values {
				s.Floats = append(s.Floats, promql.FPoint{T: int64(p.Timestamp), F: float64(p.Value)})
			}
			// Native histogram points carry no single value to compare;
			// alerting expressions over them end in a float anyway.
			out = append(out, s)
		}
		return out, nil
	case nil:
		return nil, nil
	default:
		return nil, fmt.Errorf("range query result is a %s, not a matrix", val.Type())
	}
}

// Queryable runs range queries with a local PromQL engine: the embedded
// mode's TSDB (opened read-only) or a test storage.
type Queryable struct {
	eng promql.QueryEngine
	q   storage.Queryable
}

// NewQueryable returns a Source evaluating with eng over q.
func NewQueryable(eng promql.QueryEngine, q storage.Queryable) *Queryable {
	return &Queryable{eng: eng, q: q}
}

// QueryRange evaluates expr over the range.
func (s *Queryable) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
	q, err := s.eng.NewRangeQuery(ctx, s.q, nil, expr, start, end, step)
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
		// The result's memory belongs to the query; keep a copy.
		out := make(promql.Matrix, len(v))
		for i, s := range v {
			out[i] = promql.Series{Metric: s.Metric, Floats: append([]promql.FPoint(nil), s.Floats...)}
			for _, h := range s.Histograms {
				// Histogram points are kept by their count, so that the
				// series still shows where the expression had a value.
				out[i].Floats = append(out[i].Floats, promql.FPoint{T: h.T, F: h.H.Count})
			}
			if len(s.Histograms) > 0 {
				slices.SortFunc(out[i].Floats, func(a, b promql.FPoint) int { return cmp.Compare(a.T, b.T) })
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("range query result is a %s, not a matrix", res.Value.Type())
	}
}

// NewReadOnly returns a Source over a TSDB opened read-only (the embedded
// mode's storage, which a running paged may hold). tsdb.DBReadOnly loads
// its blocks and replays its WAL at each Querier call and supports no
// concurrent use, so the data is loaded once, into one querier that serves
// every query; close releases it. Use the source with Options.Parallel 1.
func NewReadOnly(eng promql.QueryEngine, db *tsdb.DBReadOnly) (src *Queryable, close func() error, err error) {
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, nil, fmt.Errorf("read TSDB: %w", err)
	}
	return NewQueryable(eng, loadedQueryable{q}), q.Close, nil
}

// loadedQueryable hands out one open querier; closing what it hands out
// does nothing.
type loadedQueryable struct{ q storage.Querier }

func (l loadedQueryable) Querier(int64, int64) (storage.Querier, error) { return keepOpen{l.q}, nil }

type keepOpen struct{ storage.Querier }

func (keepOpen) Close() error { return nil }
