package embedded

import (
	"log/slog"
	"time"

	"github.com/prometheus/prometheus/promql"

	"github.com/pagedhq/paged/engine"
)

// QueryOptions tune the PromQL engine of Datasource. Zero values take the
// defaults noted, which are Prometheus's.
type QueryOptions struct {
	// Timeout of one query. Default 2m.
	Timeout time.Duration
	// MaxSamples one query may load. Default 50000000.
	MaxSamples int
	// LookbackDelta is how far back an instant selector looks for a
	// sample. Default 5m.
	LookbackDelta time.Duration
	// EvaluationInterval is the step of subqueries that set none
	// (Prometheus uses global.evaluation_interval). Default 1m.
	EvaluationInterval time.Duration
	// Logger for the query engine; nil: the Embedded's logger.
	Logger *slog.Logger
}

// Datasource returns the engine's datasource over this TSDB: Prometheus's
// PromQL engine evaluating locally, through engine.NewQueryable.
func (e *Embedded) Datasource(o QueryOptions) *engine.Queryable {
	return engine.NewQueryable(e.QueryEngine(o), e.db)
}

// QueryEngine returns a PromQL engine configured as Prometheus's own
// (@ modifier and negative offsets enabled).
func (e *Embedded) QueryEngine(o QueryOptions) *promql.Engine {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.MaxSamples <= 0 {
		o.MaxSamples = 50_000_000
	}
	if o.LookbackDelta <= 0 {
		o.LookbackDelta = 5 * time.Minute
	}
	if o.EvaluationInterval <= 0 {
		o.EvaluationInterval = time.Minute
	}
	if o.Logger == nil {
		o.Logger = e.Options().Logger
	}
	step := o.EvaluationInterval.Milliseconds()
	return promql.NewEngine(promql.EngineOpts{
		Logger:                   o.Logger.With("component", "query engine"),
		MaxSamples:               o.MaxSamples,
		Timeout:                  o.Timeout,
		LookbackDelta:            o.LookbackDelta,
		NoStepSubqueryIntervalFn: func(int64) int64 { return step },
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
	})
}
