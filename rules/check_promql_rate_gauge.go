package rules

import (
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules/catalog"
)

// CheckPromQLRateGauge reports rate(), irate() and increase() over a gauge.
const CheckPromQLRateGauge = "promql/rate-gauge"

var checkPromQLRateGauge = &Check{
	Name: CheckPromQLRateGauge,
	Help: "rate(), irate() and increase() assume a counter: every drop of a gauge is read as a counter reset and adds a jump. " +
		"For the trend of a gauge use deriv() or delta(). Gauges are known from the LLM metric catalogue.",
	Severity: Error,
	File:     perRule(promqlRateGauge),
}

func promqlRateGauge(p *Pass, r *Rule, ff *fileFacts) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		c, ok := n.(*parser.Call)
		if !ok || len(c.Args) == 0 {
			return
		}
		fn := callName(c)
		if fn != "rate" && fn != "irate" && fn != "increase" {
			return
		}
		var inner parser.Expr
		switch a := unwrapParens(c.Args[0]).(type) {
		case *parser.MatrixSelector:
			if a != nil {
				inner = a.VectorSelector
			}
		case *parser.SubqueryExpr:
			if a != nil {
				inner = unwrapParens(a.Expr)
			}
		}
		vs, ok := inner.(*parser.VectorSelector)
		if !ok || vs == nil {
			return
		}
		name, ok := selectorName(vs)
		if !ok {
			return
		}
		if t, fromCat := seriesType(name, r, ff); t != catalog.Gauge || !fromCat {
			return
		}
		p.ReportExpr(r, c.PositionRange(), "%s() on %s, which is a gauge: %s assumes a counter and reads every drop as a reset; use deriv() or delta()",
			fn, name, fn)
	})
}
