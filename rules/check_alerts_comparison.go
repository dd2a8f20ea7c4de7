package rules

import (
	"github.com/prometheus/prometheus/promql/parser"
)

// An alert fires for every series its expression returns. Without a
// comparison that is every series, whatever its value.
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
	found := false
	walkAST(r.Expr.AST, func(node parser.Node, _ []parser.Node) {
		switch n := node.(type) {
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
	if !found {
		const msg = "alert expression has no comparison: it fires for every series it returns, whatever the value"
		if pr, ok := nodeRange(r.Expr.AST); ok {
			p.ReportExpr(r, pr, msg)
		} else {
			p.ReportNode(r.Expr.Node, msg)
		}
	}
}
