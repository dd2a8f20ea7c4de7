package rules

import (
	"slices"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Expressions, or parts of them, that can never return anything, or a
// label that can never be set: a selector with two different values for
// one label, two sides of a binary operation that filter a label they
// match on to disjoint values, group_left(x) copying a label the other
// side does not have.
var checkPromQLImpossible = &Check{
	Name: "promql/impossible",
	Help: "No part of an expression that can never match (one label required to have two values; the sides of a binary " +
		"operation filtered to disjoint values of a label they match on) and no group_left/group_right label that the other side cannot have.",
	Severity: Warning,
	Rule:     lintImpossible,
}

func lintImpossible(p *Pass, r *Rule) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		switch n := n.(type) {
		case *parser.VectorSelector:
			impossibleSelector(p, r, n)
		case *parser.BinaryExpr:
			impossibleMatch(p, r, n)
		}
	})
}

func impossibleSelector(p *Pass, r *Rule, vs *parser.VectorSelector) {
	eq := map[string]*labels.Matcher{}
	for _, m := range vs.LabelMatchers {
		if m == nil {
			continue
		}
		if m.Type != labels.MatchEqual && m.Type != labels.MatchRegexp {
			continue
		}
		if prev, ok := eq[m.Name]; ok && matchersDisjoint(prev, m) {
			p.ReportExpr(r, safeRange(vs), "%s can never match: %s and %s cannot both hold", quoteExpr(r.Expr, safeRange(vs)), prev, m)
			return
		}
		if m.Type == labels.MatchEqual {
			eq[m.Name] = m
		} else if _, ok := eq[m.Name]; !ok {
			eq[m.Name] = m
		}
	}
}

func impossibleMatch(p *Pass, r *Rule, b *parser.BinaryExpr) {
	if b.VectorMatching == nil || b.Op == parser.LOR {
		return
	}
	lhs, ls := outLabels(b.LHS)
	rhs, rs := outLabels(b.RHS)
	if ls || rs {
		return // a scalar side: no vector matching
	}
	vm := b.VectorMatching
	// group_left(x) copies x from the right ("one") side.
	one, oneSide := rhs, "right"
	if vm.Card == parser.CardOneToMany {
		one, oneSide = lhs, "left"
	}
	if vm.Card == parser.CardManyToOne || vm.Card == parser.CardOneToMany {
		for _, l := range vm.Include {
			switch {
			case l == labels.MetricName && !b.Op.IsComparisonOperator() && !b.Op.IsSetOperator():
				p.ReportExpr(r, safeRange(b), "%s(%s): the result of %s has no metric name, so __name__ is never copied",
					groupModifier(vm), l, b.Op)
				return
			case l != labels.MetricName && !one.has(l):
				p.ReportExpr(r, safeRange(b), "%s(%s) copies %s from the %s side, which never has it%s: the result gets no %s label",
					groupModifier(vm), l, l, oneSide, describeKept(one), l)
				return
			}
		}
	}
	// Matching labels filtered to disjoint values on the two sides.
	if usesFunc(b, "label_replace", "label_join") {
		return
	}
	var names []string
	if vm.On {
		names = slices.Clone(vm.MatchingLabels)
	} else {
		for _, l := range selectorLabels(b.LHS) {
			if !slices.Contains(vm.MatchingLabels, l) {
				names = append(names, l)
			}
		}
	}
	for _, l := range names {
		if l == labels.MetricName || !lhs.has(l) || !rhs.has(l) {
			continue
		}
		if selectorsDisjoint(b.LHS, b.RHS, l) {
			what := "nothing"
			if b.Op == parser.LUNLESS {
				what = "the left side unchanged"
			}
			p.ReportExpr(r, safeRange(b), "the two sides of %s select disjoint values of %s, which they are matched on: no series pair ever matches, so it returns %s",
				b.Op, l, what)
			return
		}
	}
}

func groupModifier(vm *parser.VectorMatching) string {
	if vm.Card == parser.CardOneToMany {
		return "group_right"
	}
	return "group_left"
}

// selectorLabels lists the label names the selectors of e have matchers on.
func selectorLabels(e parser.Expr) []string {
	var out []string
	walkAST(e, func(n parser.Node, _ []parser.Node) {
		if vs, ok := n.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m == nil {
					continue
				}
				if !slices.Contains(out, m.Name) {
					out = append(out, m.Name)
				}
			}
		}
	})
	return out
}
