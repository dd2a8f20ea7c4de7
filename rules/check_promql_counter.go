package rules

import (
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules/catalog"
)

// CheckPromQLCounter reports counters whose raw value is compared or
// computed with, instead of going through rate(), irate() or increase().
const CheckPromQLCounter = "promql/counter"

var checkPromQLCounter = &Check{
	Name: CheckPromQLCounter,
	Help: "A counter only grows (and restarts at 0), so its raw value is a running total since the process started: compare or " +
		"compute with rate(), irate() or increase() of it. Types come from the LLM metric catalogue, else from the name " +
		"(_total and _bucket are counters). Counting series (count, absent, and/unless on the right) is fine.",
	Severity: Warning,
	Rule:     promqlCounter,
}

func promqlCounter(p *Pass, r *Rule) {
	if !ruleExprOK(r) {
		return
	}
	recorded := recordedNames(p.File)
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs == nil {
			return
		}
		name, ok := selectorName(vs)
		if !ok {
			return
		}
		t, _ := seriesType(name, recorded)
		if t != catalog.Counter || !rawCounterUse(vs, name, path, r.IsAlert()) {
			return
		}
		p.ReportExpr(r, vs.PositionRange(), "%s is a counter: its raw value is a running total since the process started; "+
			"use rate(), irate() or increase() on it", name)
	})
}

// rawCounterUse walks up from a counter selector and reports whether its
// raw value reaches a comparison, arithmetic, or an alert's result.
func rawCounterUse(vs *parser.VectorSelector, name string, path []parser.Node, alert bool) bool {
	var child parser.Node = vs
	for i := len(path) - 1; i >= 0; i-- {
		switch n := path[i].(type) {
		case *parser.MatrixSelector, *parser.SubqueryExpr:
			return false // a range: the function over it decides
		case *parser.Call:
			switch callName(n) {
			case "absent", "timestamp", "changes", "resets", "present_over_time", "absent_over_time", "count_over_time", "vector", "scalar":
				return false
			}
		case *parser.AggregateExpr:
			if n == nil {
				return false
			}
			switch n.Op {
			case parser.COUNT, parser.GROUP, parser.COUNT_VALUES:
				return false
			}
			if child == n.Param {
				return false
			}
		case *parser.BinaryExpr:
			if n == nil {
				return false
			}
			switch n.Op {
			case parser.LAND, parser.LUNLESS:
				if child == n.RHS {
					return false // only the label sets of the right side matter
				}
				child = n
				continue
			case parser.LOR:
				child = n
				continue
			}
			other := n.LHS
			if child == n.LHS {
				other = n.RHS
			}
			// x - x offset 1h is a hand-written increase.
			if n.Op == parser.SUB && (vs.OriginalOffset != 0 || hasOffsetSelector(other, name)) {
				return false
			}
			return true
		}
		child = path[i]
	}
	return alert
}

func hasOffsetSelector(e parser.Node, name string) bool {
	found := false
	walkAST(e, func(n parser.Node, _ []parser.Node) {
		if vs, ok := n.(*parser.VectorSelector); ok && vs != nil && vs.OriginalOffset != 0 {
			if nm, _ := selectorName(vs); nm == name {
				found = true
			}
		}
	})
	return found
}
