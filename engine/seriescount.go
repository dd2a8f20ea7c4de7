package engine

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Counting the series of many selectors in few queries.
//
// The no-series check (noseries.go) and `paged init` ask, for every
// distinct selector, how many series it matches now. Each selector is
// counted with count(), which answers with one sample or none, and the
// selectors are sent together as the rules are (combine.go):
//
//	label_replace(count(<sel 0>), "__paged_sel__", "0", "", "") or label_replace(count(<sel 1>), "__paged_sel__", "1", "", "") or ...
//
// The label tells the answers apart; a selector without a sample matches
// no series. A query carries at most maxSelectorsPerQuery selectors and
// maxSeriesQueryBytes of PromQL (VictoriaMetrics refuses queries over 16
// KiB by default; proxies cut long GET URLs), so the check never sends
// more queries than there are selectors.

// selectorLabel tells the selectors' answers apart in a combined answer.
const selectorLabel = "__paged_sel__"

// Bounds of one counting query.
const (
	maxSelectorsPerQuery = 100
	maxSeriesQueryBytes  = 8 << 10
)

// SeriesCount is the answer about one selector.
type SeriesCount struct {
	// Series is the number of series the selector matches.
	Series int
	// Err is set when its query failed: Series means nothing then.
	Err error
}

// CountSeries returns how many series each selector (a vector selector
// in PromQL, such as `vllm:kv_cache_usage_perc{job="vllm"}`) matches at
// ts, in as few queries as countQueries allows. When a combined query is
// rejected, its selectors are asked one by one, so that each gets its own
// answer or error; when the datasource does not answer, the selectors
// left are not asked.
func CountSeries(ctx context.Context, ds Datasource, selectors []string, ts time.Time) []SeriesCount {
	out := make([]SeriesCount, len(selectors))
	var down error // the datasource did not answer: ask nothing more
	for _, q := range countQueries(selectors, nil) {
		if down != nil {
			for _, m := range q.members {
				out[m].Err = down
			}
			continue
		}
		res, err := runCount(ctx, ds, q, ts)
		if err != nil && len(q.members) > 1 && asDatasourceError(err).Kind == KindQuery {
			for _, m := range q.members {
				if down != nil {
					out[m].Err = down
					continue
				}
				r, err := runCount(ctx, ds, countQuery{expr: countExpr(selectors[m]), members: []int{m}}, ts)
				out[m] = SeriesCount{Series: r[m], Err: err}
				if err != nil && asDatasourceError(err).Kind == KindUnavailable {
					down = err
				}
			}
			continue
		}
		for _, m := range q.members {
			out[m] = SeriesCount{Series: res[m], Err: err}
		}
		if err != nil && asDatasourceError(err).Kind == KindUnavailable {
			down = err
		}
	}
	return out
}

// countQuery is one query and the selectors (by index) it answers.
type countQuery struct {
	expr    string
	members []int
}

func countExpr(sel string) string { return "count(" + sel + ")" }

// countQueries groups the selectors into queries, in order. Selectors for
// which solo reports true get a query of their own.
func countQueries(selectors []string, solo func(i int) bool) []countQuery {
	var (
		out   []countQuery
		parts []string
		mem   []int
		size  int
	)
	flush := func() {
		switch len(mem) {
		case 0:
			return
		case 1:
			out = append(out, countQuery{expr: countExpr(selectors[mem[0]]), members: mem})
		default:
			out = append(out, countQuery{expr: orTree(parts), members: mem})
		}
		parts, mem, size = nil, nil, 0
	}
	for i, sel := range selectors {
		if solo != nil && solo(i) {
			out = append(out, countQuery{expr: countExpr(sel), members: []int{i}})
			continue
		}
		part := "label_replace(" + countExpr(sel) + `, "` + selectorLabel + `", "` + strconv.Itoa(i) + `", "", "")`
		if len(mem) > 0 && (len(mem) >= maxSelectorsPerQuery || size+len(part)+8 > maxSeriesQueryBytes) {
			flush()
		}
		parts = append(parts, part)
		mem = append(mem, i)
		size += len(part) + 8 // " or ", parentheses
	}
	flush()
	return out
}

// runCount sends one counting query and returns the counts by selector
// index (absent: 0).
func runCount(ctx context.Context, ds Datasource, q countQuery, ts time.Time) (map[int]int, error) {
	v, err := ds.Query(ctx, q.expr, ts)
	res := make(map[int]int, len(q.members))
	if err != nil {
		return res, asDatasourceError(err)
	}
	if len(q.members) == 1 {
		if len(v) > 1 {
			return res, &DatasourceError{Kind: KindQuery, Err: fmt.Errorf("count() answered with %d samples", len(v))}
		}
		if len(v) == 1 {
			res[q.members[0]] = sampleCount(v[0].F)
		}
		return res, nil
	}
	in := make(map[int]bool, len(q.members))
	for _, m := range q.members {
		in[m] = true
	}
	for _, s := range v {
		m, err := strconv.Atoi(s.Metric.Get(selectorLabel))
		if err != nil || !in[m] {
			return map[int]int{}, &DatasourceError{Kind: KindQuery, Err: fmt.Errorf("combined count answered with a sample of no selector: %s", s.Metric)}
		}
		res[m] = sampleCount(s.F)
	}
	return res, nil
}

func sampleCount(f float64) int {
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	if f > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(f)
}
