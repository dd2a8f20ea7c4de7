package embedded

import (
	"slices"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// KeepFor derives the Keep filter that stores what the expressions read:
// the metric name of every selector, and for a selector that matches the
// name with a regex (`{__name__=~"vllm:.*"}`) that regex. A selector that
// constrains no name at all (`{job="vllm"}`), or one with a negative name
// matcher, could read any series: KeepFor then returns nil, which keeps
// everything.
func KeepFor(exprs ...parser.Expr) *Keep {
	k := &Keep{}
	all := false
	for _, e := range exprs {
		if e == nil {
			continue
		}
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			if vs.Name != "" {
				k.Names = append(k.Names, vs.Name)
				return nil
			}
			named := false
			for _, m := range vs.LabelMatchers {
				if m.Name != labels.MetricName {
					continue
				}
				switch m.Type {
				case labels.MatchEqual:
					k.Names = append(k.Names, m.Value)
					named = true
				case labels.MatchRegexp:
					k.Patterns = append(k.Patterns, m.Value)
					named = true
				}
			}
			if !named {
				all = true
			}
			return nil
		})
	}
	if all {
		return nil
	}
	slices.Sort(k.Names)
	k.Names = slices.Compact(k.Names)
	slices.Sort(k.Patterns)
	k.Patterns = slices.Compact(k.Patterns)
	return k
}
