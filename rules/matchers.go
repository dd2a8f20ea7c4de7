package rules

import (
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Helpers that reason about label matchers: which values a selector
// allows for a label, and whether two selectors can ever match the same
// value. They answer "can't tell" (false) whenever they are not sure, so
// that the checks built on them stay free of false positives.

// labelMatchers returns, for every vector selector of e, its matchers on
// name. ok is false when some selector has none (it allows any value) or
// when e has no selector.
func labelMatchers(e parser.Expr, name string) (sels [][]*labels.Matcher, ok bool) {
	ok = true
	walkAST(e, func(n parser.Node, _ []parser.Node) {
		vs, isVS := n.(*parser.VectorSelector)
		if !isVS {
			return
		}
		var ms []*labels.Matcher
		for _, m := range vs.LabelMatchers {
			if m != nil && m.Name == name {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			ok = false
		}
		sels = append(sels, ms)
	})
	return sels, ok && len(sels) > 0
}

// matchersDisjoint reports whether no label value can satisfy both a and
// b, when that can be proven from their text.
func matchersDisjoint(a, b *labels.Matcher) bool {
	if a == nil || b == nil {
		return false
	}
	neg := func(m *labels.Matcher) bool { return m.Type == labels.MatchNotEqual || m.Type == labels.MatchNotRegexp }
	if neg(a) && neg(b) {
		return false // both allow nearly everything
	}
	if neg(a) {
		a, b = b, a
	}
	// a is = or =~ from here on.
	if neg(b) {
		// Every value a allows is one b forbids.
		if a.Type == labels.MatchEqual {
			return !b.Matches(a.Value)
		}
		if set := a.SetMatches(); len(set) > 0 {
			return allMiss(b, set)
		}
		return false
	}
	if a.Type == labels.MatchRegexp && b.Type == labels.MatchEqual {
		a, b = b, a
	}
	switch {
	case a.Type == labels.MatchEqual && b.Type == labels.MatchEqual:
		return a.Value != b.Value
	case a.Type == labels.MatchEqual && b.Type == labels.MatchRegexp:
		return !b.Matches(a.Value)
	case a.Type == labels.MatchRegexp && b.Type == labels.MatchRegexp:
		sa, sb := a.SetMatches(), b.SetMatches()
		if len(sa) > 0 {
			return allMiss(b, sa)
		}
		if len(sb) > 0 {
			return allMiss(a, sb)
		}
		pa, pb := a.Prefix(), b.Prefix()
		return pa != "" && pb != "" && !strings.HasPrefix(pa, pb) && !strings.HasPrefix(pb, pa)
	}
	return false
}

func allMiss(m *labels.Matcher, values []string) bool {
	for _, v := range values {
		if m.Matches(v) {
			return false
		}
	}
	return true
}

// selectorsDisjoint reports whether the expressions a and b certainly
// select different series on label name: every selector of each
// constrains it, and for every pair of selectors, one from each side,
// some matcher of one excludes every value some matcher of the other
// allows.
func selectorsDisjoint(a, b parser.Expr, name string) bool {
	sa, okA := labelMatchers(a, name)
	sb, okB := labelMatchers(b, name)
	if !okA || !okB {
		return false
	}
	for _, x := range sa {
		for _, y := range sb {
			if !anyDisjoint(x, y) {
				return false
			}
		}
	}
	return true
}

func anyDisjoint(xs, ys []*labels.Matcher) bool {
	for _, x := range xs {
		for _, y := range ys {
			if matchersDisjoint(x, y) {
				return true
			}
		}
	}
	return false
}
