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
		"compute with rate(), irate() or increase() of it. Types come from the LLM metric catalogue (with --prometheus, " +
		"also from the server's metadata); a name ending in _total alone is not enough, many exporters have _total gauges. Counting series (count, absent, and/unless on the right) is fine.",
	Severity: Warning,
	File:     perRule(promqlCounter),
}

func promqlCounter(p *Pass, r *Rule, ff *fileFacts) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs == nil {
			return
		}
		name, ok := selectorName(vs)
		if !ok {
			return
		}
		t, fromCatalog := seriesType(name, r, ff)
		if t != catalog.Counter || !rawCounterUse(vs, name, path, r.IsAlert()) {
			return
		}
		if !fromCatalog {
			// Only the name says so, and many exporters have _total gauges
			// (minio_cluster_nodes_offline_total, container_fs_inodes_total):
			// without the catalogue, only the server's metadata can tell
			// (the live check, with --prometheus).
			return
		}
		p.ReportExpr(r, vs.PositionRange(), "%s is a counter: its raw value is a running total since the process started; "+
			"use rate(), irate() or increase() on it", name)
	})
}

// rawCounterUse walks up from a counter selector and reports whether its
// raw value reaches a comparison, arithmetic with another vector, or an
// alert's result, and is not then reduced to a series count.
func rawCounterUse(vs *parser.VectorSelector, name string, path []parser.Node, alert bool) bool {
	var child parser.Node = vs
	used := false
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
				return false // only the number of series matters
			}
			if child == n.Param {
				return false
			}
		case *parser.BinaryExpr:
			if n == nil {
				return false
			}
			other := n.LHS
			if child == n.LHS {
				other = n.RHS
			}
			switch {
			case n.Op == parser.LAND || n.Op == parser.LUNLESS:
				if child == n.RHS {
					return false // only the label sets of the right side matter
				}
			case n.Op == parser.LOR:
			case n.Op == parser.SUB && (vs.OriginalOffset != 0 || hasOffsetSelector(other, name)):
				return false // x - x offset 1h is a hand-written increase
			case !n.Op.IsComparisonOperator() && isScalarExpr(other):
				// counter * 1000 is still a counter (a unit change).
			default:
				used = true
			}
		}
		child = path[i]
	}
	return used || alert
}

// isScalarExpr reports whether an expression is a number (or a scalar
// expression of numbers).
func isScalarExpr(e parser.Node) bool {
	switch n := unwrapParens(asExpr(e)).(type) {
	case *parser.NumberLiteral:
		return n != nil
	case *parser.UnaryExpr:
		return n != nil && isScalarExpr(n.Expr)
	case *parser.BinaryExpr:
		return n != nil && isScalarExpr(n.LHS) && isScalarExpr(n.RHS)
	}
	return false
}

func asExpr(n parser.Node) parser.Expr {
	e, _ := n.(parser.Expr)
	return e
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
