package rules

import (
	"slices"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// "X == 0 or absent(X)" fires from two branches. When it fires from the
// absent() one, the alert has only the labels absent() builds: those of
// its selector's equality matchers. A template that uses $labels.instance
// then renders an empty string exactly when the target is gone.
var checkAlertsAbsentLabels = &Check{
	Name: "alerts/absent-labels",
	Help: "In \"X or absent(Y)\", templates use only labels the absent() branch has too (the equality matchers of its selector); " +
		"others render empty when that branch fires.",
	Severity: Warning,
	Rule:     lintAbsentLabels,
}

func lintAbsentLabels(p *Pass, r *Rule) {
	if !r.IsAlert() || !ruleExprOK(r) {
		return
	}
	var absents []*parser.Call
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		c, ok := n.(*parser.Call)
		if !ok || (callName(c) != "absent" && callName(c) != "absent_over_time") {
			return
		}
		// The branch reaches the result only through parentheses and or.
		inOr := false
		for _, a := range path {
			switch a := a.(type) {
			case *parser.ParenExpr:
			case *parser.BinaryExpr:
				if a.Op != parser.LOR {
					return
				}
				inOr = true
			default:
				return
			}
		}
		if inOr {
			absents = append(absents, c)
		}
	})
	if len(absents) == 0 {
		return
	}
	fixed := map[string]bool{"alertname": true}
	for _, kv := range r.Labels {
		fixed[kv.Key.Value] = true
	}
	for _, kv := range r.Group.Labels {
		fixed[kv.Key.Value] = true
	}
	// Labels the whole expression never keeps are alerts/template-labels'.
	whole := outputLabels(r.Expr.AST)
	for _, c := range absents {
		set := outputLabels(c)
		have := keys(set.names)
		slices.Sort(have)
		desc := "no labels"
		if len(have) > 0 {
			desc = "only " + strings.Join(have, ", ")
		}
		text := quoteExpr(r.Expr, safeRange(c))
		reported := map[string]bool{}
		for _, kv := range append(slices.Clone(r.Annotations), r.Labels...) {
			v := kv.Value.Value
			if !strings.Contains(v, "{{") {
				continue
			}
			for start, end := range labelRefs(v) {
				name := v[start:end]
				if fixed[name] || set.has(name) || !whole.has(name) || reported[kv.Key.Value+"\x00"+name] {
					continue
				}
				reported[kv.Key.Value+"\x00"+name] = true
				p.Report(p.File.ValueRange(kv.Value.Node, start, end),
					"%q uses label %q, but when the %s branch fires the alert has %s (absent() keeps only its selector's equality matchers): it renders as an empty string",
					kv.Key.Value, name, text, desc)
			}
		}
	}
}
