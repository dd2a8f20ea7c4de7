package backtest

import (
	"math"
	"slices"
	"time"

	"github.com/prometheus/prometheus/promql"
)

// newChart keeps the top series of a chart query by their maximum. The
// points are shifted by the query offset so that they line up with the
// evaluation times.
func newChart(expr string, m promql.Matrix, offset time.Duration, limit int) *Chart {
	type ranked struct {
		s   promql.Series
		max float64
	}
	rs := make([]ranked, 0, len(m))
	for _, s := range m {
		mx := math.Inf(-1)
		for _, p := range s.Floats {
			if !math.IsNaN(p.F) && p.F > mx {
				mx = p.F
			}
		}
		rs = append(rs, ranked{s, mx})
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.max > b.max:
			return -1
		case a.max < b.max:
			return 1
		}
		return 0
	})
	c := &Chart{Expr: expr}
	for i, r := range rs {
		if i >= limit {
			c.Omitted = len(rs) - limit
			break
		}
		cs := ChartSeries{Labels: r.s.Metric.String()}
		for _, p := range r.s.Floats {
			if math.IsNaN(p.F) || math.IsInf(p.F, 0) {
				continue
			}
			cs.T = append(cs.T, p.T+offset.Milliseconds())
			cs.V = append(cs.V, p.F)
		}
		c.Series = append(c.Series, cs)
	}
	return c
}
