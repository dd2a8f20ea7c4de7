package rules

import (
	"github.com/prometheus/prometheus/promql/parser"
)

// sum(a / b): where b is 0 for one series, a/b is NaN (0/0) or ±Inf, and
// the sum of anything with a NaN is NaN: one idle replica makes the whole
// aggregate unusable, and NaN compares false with every threshold, so the
// alert silently stops firing.
var checkPromQLNaN = &Check{
	Name: "promql/nan",
	Help: "No division whose denominator can be zero inside sum, avg, stddev or stdvar: one NaN or Inf poisons the aggregate; " +
		"aggregate first and divide after, or filter the denominator (b > 0).",
	Severity: Warning,
	Rule:     lintNaN,
}

func lintNaN(p *Pass, r *Rule) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		b, ok := n.(*parser.BinaryExpr)
		if !ok || (b.Op != parser.DIV && b.Op != parser.MOD) || b.ReturnBool {
			return
		}
		agg := enclosingAggregation(path)
		if agg == nil {
			return
		}
		switch agg.Op {
		case parser.SUM, parser.AVG, parser.STDDEV, parser.STDVAR:
		default:
			return // max, min, count, group, topk... are not poisoned by one NaN
		}
		if !canBeZero(b.RHS) {
			return
		}
		p.ReportExpr(r, safeRange(b),
			"division inside %s: where %s is 0 the ratio is NaN or Inf, and so is the %s of its whole group "+
				"(NaN compares false with any threshold); aggregate numerator and denominator first and divide after, or filter the denominator (> 0)",
			aggregationHead(agg), quoteExpr(r.Expr, safeRange(b.RHS)), agg.Op)
	})
}

// canBeZero reports whether an expression may be 0 for some series: any
// vector unless it is a non-zero number, filtered with a comparison that
// excludes 0, or clamp_min'ed above 0.
func canBeZero(e parser.Expr) bool {
	switch n := unwrapParens(e).(type) {
	case *parser.NumberLiteral:
		return n.Val == 0
	case *parser.UnaryExpr:
		return canBeZero(n.Expr)
	case *parser.BinaryExpr:
		if n.Op.IsComparisonOperator() && !n.ReturnBool {
			if lit, ok := unwrapParens(n.RHS).(*parser.NumberLiteral); ok {
				// What the filter keeps satisfies v OP c: 0 survives iff 0 OP c.
				c := lit.Val
				switch n.Op {
				case parser.GTR:
					return 0 > c
				case parser.GTE:
					return 0 >= c
				case parser.LSS:
					return 0 < c
				case parser.LTE:
					return 0 <= c
				case parser.NEQ:
					return c != 0
				case parser.EQLC:
					return c == 0
				}
			}
			return true
		}
		if n.Op == parser.ADD {
			if lit, ok := unwrapParens(n.RHS).(*parser.NumberLiteral); ok && lit.Val > 0 && !canBeNegative(n.LHS) {
				return false
			}
		}
		if isScalarExpr(n) {
			return false
		}
		return true
	case *parser.Call:
		switch callName(n) {
		case "clamp_min":
			if len(n.Args) == 2 {
				if lit, ok := unwrapParens(n.Args[1]).(*parser.NumberLiteral); ok && lit.Val > 0 {
					return false
				}
			}
		case "time", "pi", "vector", "scalar":
			if len(n.Args) == 1 {
				return canBeZero(n.Args[0])
			}
			return false
		}
		return true
	}
	return true
}

func canBeNegative(e parser.Expr) bool {
	switch n := unwrapParens(e).(type) {
	case *parser.Call:
		switch callName(n) {
		case "rate", "increase", "irate", "count_over_time", "abs":
			return false
		}
	case *parser.AggregateExpr:
		return n.Op != parser.COUNT
	}
	return true
}
