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
	if !r.IsAlert() || r.Expr == nil || r.Expr.AST == nil {
		return
	}
	found := false
	parser.Inspect(r.Expr.AST, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.BinaryExpr:
			if n.Op.IsComparisonOperator() && !n.ReturnBool {
				found = true
			}
		case *parser.Call:
			switch n.Func.Name {
			case "absent", "absent_over_time":
				found = true
			}
		}
		return nil
	})
	if !found {
		p.ReportExpr(r, r.Expr.AST.PositionRange(), "alert expression has no comparison: it fires for every series it returns, whatever the value")
	}
}
