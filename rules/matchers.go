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

// positiveMatchers returns, for every vector selector of e, its = and =~
// matchers on name. ok is false when some selector has none (it allows
// any value) or when e has no selector.
func positiveMatchers(e parser.Expr, name string) (ms []*labels.Matcher, ok bool) {
	ok = true
	seen := false
	walkAST(e, func(n parser.Node, _ []parser.Node) {
		vs, isVS := n.(*parser.VectorSelector)
		if !isVS {
			return
		}
		seen = true
		found := false
		for _, m := range vs.LabelMatchers {
			if m == nil {
				continue
			}
			if m.Name == name && (m.Type == labels.MatchEqual || m.Type == labels.MatchRegexp) {
				ms = append(ms, m)
				found = true
			}
		}
		if !found {
			ok = false
		}
	})
	return ms, ok && seen
}

// matchersDisjoint reports whether no label value can satisfy both a and
// b, when that can be proven from their text.
func matchersDisjoint(a, b *labels.Matcher) bool {
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
		if len(sa) > 0 && len(sb) > 0 {
			for _, v := range sa {
				if b.Matches(v) {
					return false
				}
			}
			return true
		}
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
// constrains it, and no matcher of one overlaps a matcher of the other.
func selectorsDisjoint(a, b parser.Expr, name string) bool {
	ma, okA := positiveMatchers(a, name)
	mb, okB := positiveMatchers(b, name)
	if !okA || !okB {
		return false
	}
	for _, x := range ma {
		for _, y := range mb {
			if !matchersDisjoint(x, y) {
				return false
			}
		}
	}
	return true
}
