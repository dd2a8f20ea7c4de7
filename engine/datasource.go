package engine

import (
	"context"
	"errors"
	"time"

	promrules "github.com/prometheus/prometheus/rules"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
)

// Datasource answers instant PromQL queries at a given evaluation time. It
// is the engine's only view of the metrics: a remote Prometheus-compatible
// API (NewRemote), a local PromQL engine over a storage.Queryable
// (NewQueryable, used by the embedded mode), or a fake in tests
// (package enginetest).
//
// An implementation reports "the datasource cannot answer" (network error,
// 5xx, timeout) by wrapping the error with Unavailable; any other error is
// taken as a problem with the query itself.
type Datasource interface {
	Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error)
}

// DatasourceFunc adapts a function to the Datasource interface.
type DatasourceFunc func(ctx context.Context, expr string, ts time.Time) (promql.Vector, error)

// Query calls f.
func (f DatasourceFunc) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	return f(ctx, expr, ts)
}

// ErrorKind tells a datasource that cannot answer from a query it rejects.
type ErrorKind int

const (
	// KindQuery: the datasource answered, but the query failed (bad data,
	// execution error). The rule is unhealthy; the datasource is up.
	KindQuery ErrorKind = iota
	// KindUnavailable: the datasource did not answer (connection refused,
	// 5xx, timeout, authentication refused).
	KindUnavailable
)

func (k ErrorKind) String() string {
	if k == KindUnavailable {
		return "unavailable"
	}
	return "query"
}

// DatasourceError is the error the engine's query function returns for any
// failed query. The engine recognises it (errors.As) on a rule's last error
// to keep the rule's alerts instead of letting them resolve.
type DatasourceError struct {
	Kind ErrorKind
	Err  error
}

func (e *DatasourceError) Error() string {
	if e.Kind == KindUnavailable {
		return "datasource unavailable: " + e.Err.Error()
	}
	return "query failed: " + e.Err.Error()
}

func (e *DatasourceError) Unwrap() error { return e.Err }

// Unavailable marks err as "the datasource could not answer".
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	var de *DatasourceError
	if errors.As(err, &de) {
		return &DatasourceError{Kind: KindUnavailable, Err: de.Err}
	}
	return &DatasourceError{Kind: KindUnavailable, Err: err}
}

// asDatasourceError classifies any error returned by a Datasource.
func asDatasourceError(err error) *DatasourceError {
	var de *DatasourceError
	if errors.As(err, &de) {
		return de
	}
	kind := KindQuery
	if errors.Is(err, context.DeadlineExceeded) {
		kind = KindUnavailable
	}
	return &DatasourceError{Kind: kind, Err: err}
}

// errorKindOf returns the datasource error kind in err, if any.
func errorKindOf(err error) (ErrorKind, bool) {
	var de *DatasourceError
	if errors.As(err, &de) {
		return de.Kind, true
	}
	return 0, false
}

// Queryable is a Datasource that runs PromQL locally over a
// storage.Queryable: the embedded mode's TSDB, or a test storage.
type Queryable struct {
	query promrules.QueryFunc
}

// NewQueryable returns a Datasource evaluating queries with eng over q.
func NewQueryable(eng promql.QueryEngine, q storage.Queryable) *Queryable {
	return &Queryable{query: promrules.EngineQueryFunc(eng, q)}
}

// Query runs expr at ts. Timeouts and cancellations count as the
// datasource being unavailable; everything else is a query error.
func (d *Queryable) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	v, err := d.query(ctx, expr, ts)
	if err == nil {
		return v, nil
	}
	var (
		timeout  promql.ErrQueryTimeout
		canceled promql.ErrQueryCanceled
		storErr  promql.ErrStorage
	)
	if errors.As(err, &timeout) || errors.As(err, &canceled) || errors.As(err, &storErr) || errors.Is(err, context.DeadlineExceeded) {
		return nil, Unavailable(err)
	}
	return nil, err
}
