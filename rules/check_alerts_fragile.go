package rules

import (
	"github.com/prometheus/prometheus/promql/parser"
)

// topk(3, x) > 10 in an alert: which three series are on top changes from
// one evaluation to the next, so an alert leaves the result (and resolves)
// when another series overtakes it, and comes back pending later: the
// alerts flap and `for` restarts. limitk and limit_ratio pick series in
// an order Prometheus does not promise to keep.
var checkAlertsFragile = &Check{
	Name: "alerts/fragile",
	Help: "Alerts do not select series with topk, bottomk, limitk or limit_ratio: the set changes between evaluations, so " +
		"alerts resolve and re-fire (and `for` restarts) whenever the ranking changes.",
	Severity: Warning,
	Rule:     lintFragile,
}

func lintFragile(p *Pass, r *Rule) {
	if !r.IsAlert() || !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		a, ok := n.(*parser.AggregateExpr)
		if !ok {
			return
		}
		switch a.Op {
		case parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
		default:
			return
		}
		// topk by (every identifying label) (1, x) keeps one series per
		// group: the idiom that removes duplicates (two kube-state-metrics
		// replicas), stable as long as the groups are.
		if a.Op != parser.LIMIT_RATIO && len(a.Grouping) > 0 && !a.Without {
			if k, ok := unwrapParens(a.Param).(*parser.NumberLiteral); ok && k.Val == 1 {
				return
			}
		}
		// Under an aggregation that reduces the picked set to a number
		// (count(topk(...)), sum(topk(...))) nothing flaps unless the
		// aggregation keeps the series' own labels; stay quiet there.
		for _, up := range path {
			if u, ok := up.(*parser.AggregateExpr); ok && u != a {
				return
			}
		}
		p.ReportExpr(r, safeRange(a),
			"%s in an alert: the series it picks change between evaluations, so an alert resolves when another series "+
				"overtakes it and fires again later (its `for` restarting each time); alert on a threshold over all series "+
				"and sort in the notification instead", a.Op)
	})
}
