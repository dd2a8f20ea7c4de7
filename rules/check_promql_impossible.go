package rules

import (
	"maps"
	"slices"
	"strings"

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
		"operation filtered to disjoint values of a label they match on; a one-to-one match where every series of one side has a " +
		"label no series of the other side has, as a histogram's _bucket{le=\"0.5\"} against its _count, or a by (instance, code) " +
		"against a by (instance)) and no group_left/group_right label that the other side cannot have.",
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
	if vm.Card == parser.CardOneToOne && oneSidedLabel(p, r, b, lhs, rhs) {
		return
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

// oneSidedLabel reports a one-to-one match in which every series of one
// side has a label that no series of the other side has, and the matching
// compares it (no on() without it, no ignoring() with it): label sets never
// agree, so no pair matches. The classic case is a histogram's
// _bucket{le="0.5"} divided by its _count, which has no le.
func oneSidedLabel(p *Pass, r *Rule, b *parser.BinaryExpr, lhs, rhs labelSet) bool {
	vm := b.VectorMatching
	compared := func(l string) bool { return slices.Contains(vm.MatchingLabels, l) == vm.On }
	sides := []struct {
		certain    map[string]bool
		other      labelSet
		has, lacks string
		otherExpr  parser.Expr
	}{
		{certainLabels(b.LHS), rhs, "left", "right", b.RHS},
		{certainLabels(b.RHS), lhs, "right", "left", b.LHS},
	}
	for _, sd := range sides {
		for _, l := range slices.Sorted(maps.Keys(sd.certain)) {
			if l == labels.MetricName || !compared(l) {
				continue
			}
			why := whyLacks(sd.otherExpr, sd.other, l)
			if sd.other.has(l) {
				if why = catalogLacks(p, r, sd.otherExpr, l); why == "" {
					continue
				}
			}
			what := "nothing"
			if b.Op == parser.LUNLESS {
				what = "the left side unchanged"
			}
			how, fix := "one-to-one matching compares every label", "match with ignoring ("+l+")"
			if vm.On {
				how, fix = "on ("+strings.Join(vm.MatchingLabels, ", ")+") compares it", "leave "+l+" out of on (...)"
			}
			p.ReportExpr(r, safeRange(b), "every series on the %s side of %s has the label %s and no series on the %s side has it%s: "+
				"%s, so no pair ever matches and it returns %s; %s, or aggregate %s away",
				sd.has, b.Op, l, sd.lacks, why, how, what, fix, l)
			return true
		}
	}
	return false
}

// whyLacks says why an expression's result never has a label: a
// histogram's _count or _sum series, or the labels an aggregation keeps.
func whyLacks(e parser.Expr, set labelSet, l string) string {
	if vs := vectorSelectorOf(unwrapCall(e)); vs != nil && (l == "le" || l == "quantile") {
		if name, ok := selectorName(vs); ok {
			if i := strings.LastIndexByte(name, '_'); i > 0 {
				return " (" + name + " is a histogram's or summary's " + name[i:] + " series, which has no " + l + ")"
			}
		}
	}
	return describeKept(set)
}

// catalogLacks says why a catalogued metric's series never have label l,
// when e is that metric's selector (or a function of it that keeps its
// labels) and the catalogue knows its labels; "" otherwise. Only labels
// some LLM server uses are judged: target labels are unknowable.
func catalogLacks(p *Pass, r *Rule, e parser.Expr, l string) string {
	vs := vectorSelectorOf(unwrapCall(e))
	name, ok := selectorName(vs)
	cat := llmCatalog()
	if !ok || !cat.KnownLabel(l) || recordedNames(p.File)[name] {
		return ""
	}
	v0 := targetsV0(r)
	sel := classify(cat, name, v0, ruleIsVLLM(r))
	if sel.Verdict != vKnown || sel.Series.Metric.Labels == nil || seriesHasLabel(sel.Series, l, v0) {
		return ""
	}
	have := "no labels besides the target labels"
	if ls := sel.Series.Metric.Labels; len(ls) > 0 {
		have = "only " + strings.Join(ls, ", ") + " besides the target labels"
	}
	return " (" + sel.Server.Title + "'s " + name + " has " + have + ")"
}

// unwrapCall skips parentheses and the functions that keep their
// argument's labels (rate(x[5m]) is x's series).
func unwrapCall(e parser.Expr) parser.Expr {
	for i := 0; i < maxWalkDepth; i++ {
		switch n := unwrapParens(e).(type) {
		case *parser.Call:
			if n == nil || len(n.Args) != 1 {
				return n
			}
			e = n.Args[0]
		default:
			return n
		}
	}
	return e
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
