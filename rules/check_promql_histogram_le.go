package rules

import (
	"slices"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// CheckPromQLHistogramLe reports histogram_quantile over _bucket series
// whose aggregation drops the le label.
const CheckPromQLHistogramLe = "promql/histogram-le"

var checkPromQLHistogramLe = &Check{
	Name: CheckPromQLHistogramLe,
	Help: "histogram_quantile() over classic _bucket series needs the le label: every aggregation between it and the buckets must keep le " +
		"(sum by (le, ...), or without (...) not naming le).",
	Severity: Error,
	Rule:     promqlHistogramLe,
}

func promqlHistogramLe(p *Pass, r *Rule) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		c, ok := n.(*parser.Call)
		if !ok || callName(c) != "histogram_quantile" || len(c.Args) < 2 {
			return
		}
		for _, agg := range aggregationsDroppingLe(c.Args[1], 0) {
			desc := agg.Op.String()
			switch {
			case agg.Without:
				desc += " without (" + strings.Join(agg.Grouping, ", ") + ")"
			case len(agg.Grouping) > 0:
				desc += " by (" + strings.Join(agg.Grouping, ", ") + ")"
			}
			p.ReportExpr(r, agg.PositionRange(), "histogram_quantile needs the le label of the buckets, but %s drops it: keep le, as in sum by (le, ...)", desc)
		}
	})
}

// aggregationsDroppingLe returns the outermost aggregations under e that
// lose le while _bucket series are under them.
func aggregationsDroppingLe(e parser.Node, depth int) []*parser.AggregateExpr {
	if e == nil || depth > maxWalkDepth {
		return nil
	}
	if agg, ok := e.(*parser.AggregateExpr); ok && agg != nil {
		if dropsLe(agg) && hasBucketSelector(agg.Expr) {
			return []*parser.AggregateExpr{agg}
		}
	}
	var out []*parser.AggregateExpr
	for _, c := range astChildren(e) {
		out = append(out, aggregationsDroppingLe(c, depth+1)...)
	}
	return out
}

func dropsLe(a *parser.AggregateExpr) bool {
	switch a.Op {
	case parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
		return false // they keep the labels of the series they pick
	}
	has := slices.Contains(a.Grouping, "le")
	if a.Without {
		return has
	}
	return !has
}

func hasBucketSelector(e parser.Node) bool {
	found := false
	walkAST(e, func(n parser.Node, _ []parser.Node) {
		if vs, ok := n.(*parser.VectorSelector); ok {
			if name, ok := selectorName(vs); ok && strings.HasSuffix(name, "_bucket") {
				found = true
			}
		}
	})
	return found
}
