package rules

import (
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// sum by (cluster) (X or vector(0)) adds vector(0)'s series, which has no
// labels, to the aggregation: the result gets an extra series with every
// grouping label empty, next to the real ones (and only that series when X
// is empty). The fallback belongs outside: sum by (cluster) (X) or
// vector(0), or better an on() match against the series that must exist.
var checkPromQLOrVector = &Check{
	Name: "promql/or-vector",
	Help: "No \"or vector(0)\" (or another label-less fallback) inside an aggregation that groups by labels: it adds a series " +
		"with the grouping labels empty; apply the fallback after the aggregation.",
	Severity: Warning,
	Rule:     lintOrVector,
}

func lintOrVector(p *Pass, r *Rule) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		b, ok := n.(*parser.BinaryExpr)
		if !ok || b.Op != parser.LOR {
			return
		}
		fallback := unwrapParens(b.RHS)
		if !labelless(fallback) {
			return
		}
		agg := enclosingAggregation(path)
		if agg == nil || !groupsByLabels(agg) {
			return
		}
		p.ReportExpr(r, safeRange(b),
			"%s inside %s adds a series without labels to the aggregation: its result gets an extra series with %s empty "+
				"(and only that one when the left side is empty); apply the fallback after the aggregation",
			quoteExpr(r.Expr, safeRange(fallback)), aggregationHead(agg), groupingText(agg))
	})
}

// labelless reports an expression whose result is one series with no
// labels: vector(N), a number turned into a vector.
func labelless(e parser.Expr) bool {
	c, ok := e.(*parser.Call)
	return ok && callName(c) == "vector"
}

// enclosingAggregation is the innermost aggregation above a node, passing
// only through parentheses and binary operators (a function in between,
// such as label_replace, changes what reaches the aggregation).
func enclosingAggregation(path []parser.Node) *parser.AggregateExpr {
	for i := len(path) - 1; i >= 0; i-- {
		switch n := path[i].(type) {
		case *parser.AggregateExpr:
			return n
		case *parser.ParenExpr, *parser.BinaryExpr:
		default:
			return nil
		}
	}
	return nil
}

func groupsByLabels(a *parser.AggregateExpr) bool {
	if a == nil {
		return false
	}
	return a.Without || len(a.Grouping) > 0
}

func aggregationHead(a *parser.AggregateExpr) string {
	s := a.Op.String()
	if a.Without {
		return s + " without (" + strings.Join(a.Grouping, ", ") + ")"
	}
	if len(a.Grouping) > 0 {
		return s + " by (" + strings.Join(a.Grouping, ", ") + ")"
	}
	return s + "()"
}

func groupingText(a *parser.AggregateExpr) string {
	if a.Without {
		return "every label"
	}
	return strings.Join(a.Grouping, ", ")
}
