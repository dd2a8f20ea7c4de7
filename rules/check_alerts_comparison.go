package rules

import (
	"github.com/prometheus/prometheus/promql/parser"
)

// An alert fires for every series its expression returns. Without a
// comparison that is every series, whatever its value.
//
// Two shapes are conditions without a comparison and are not reported:
// "A unless B" (an absence alert: count(x offset 2h) unless count(x)) and
// an expression with no selector at all (vector(1), the Watchdog alert
// that always fires on purpose).
var checkAlertsComparison = &Check{
	Name:     "alerts/comparison",
	Help:     "Alert expressions compare against a threshold (or use absent()); otherwise every returned series fires.",
	Severity: Warning,
	Rule:     lintComparison,
}

func lintComparison(p *Pass, r *Rule) {
	if !r.IsAlert() || r.Expr == nil || isNilNode(r.Expr.AST) {
		return
	}
	if top, ok := unwrapParens(r.Expr.AST).(*parser.BinaryExpr); ok && top.Op == parser.LUNLESS {
		return
	}
	found, selects := false, false
	walkAST(r.Expr.AST, func(node parser.Node, _ []parser.Node) {
		switch n := node.(type) {
		case *parser.VectorSelector:
			selects = true
		case *parser.BinaryExpr:
			if n != nil && n.Op.IsComparisonOperator() && !n.ReturnBool {
				found = true
			}
		case *parser.Call:
			if n == nil || n.Func == nil {
				break
			}
			switch n.Func.Name {
			case "absent", "absent_over_time":
				found = true
			}
		}
	})
	if !found && selects {
		const msg = "alert expression has no comparison: it fires for every series it returns, whatever the value"
		if pr, ok := nodeRange(r.Expr.AST); ok {
			p.ReportExpr(r, pr, msg)
		} else {
			p.ReportNode(r.Expr.Node, msg)
		}
	}
}
