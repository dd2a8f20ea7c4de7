package rules

import (
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// labelSet describes which labels an expression's result can carry: either
// only the listed ones (only == true), or any label except the listed ones.
type labelSet struct {
	only  bool
	names map[string]bool
}

func anyLabels() labelSet { return labelSet{names: map[string]bool{}} }

func onlyLabels(names ...string) labelSet {
	s := labelSet{only: true, names: map[string]bool{}}
	for _, n := range names {
		s.names[n] = true
	}
	return s
}

// has reports whether the label can be present.
func (s labelSet) has(name string) bool {
	if s.only {
		return s.names[name]
	}
	return !s.names[name]
}

func (s labelSet) without(names ...string) labelSet {
	out := labelSet{only: s.only, names: map[string]bool{}}
	for n := range s.names {
		out.names[n] = true
	}
	for _, n := range names {
		if s.only {
			delete(out.names, n)
		} else {
			out.names[n] = true
		}
	}
	return out
}

func (s labelSet) with(names ...string) labelSet {
	out := labelSet{only: s.only, names: map[string]bool{}}
	for n := range s.names {
		out.names[n] = true
	}
	for _, n := range names {
		if s.only {
			out.names[n] = true
		} else {
			delete(out.names, n)
		}
	}
	return out
}

func (s labelSet) intersect(names []string) labelSet {
	out := onlyLabels()
	for _, n := range names {
		if s.has(n) {
			out.names[n] = true
		}
	}
	return out
}

func (s labelSet) union(o labelSet) labelSet {
	switch {
	case s.only && o.only:
		out := onlyLabels()
		for n := range s.names {
			out.names[n] = true
		}
		for n := range o.names {
			out.names[n] = true
		}
		return out
	case !s.only && !o.only:
		out := anyLabels()
		for n := range s.names {
			if o.names[n] {
				out.names[n] = true
			}
		}
		return out
	case s.only:
		return o.with(keys(s.names)...)
	default:
		return s.with(keys(o.names)...)
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// outputLabels works out which labels an expression's result may have.
// Where it cannot tell it answers "any label", so callers only ever report
// labels that are certainly gone.
func outputLabels(e parser.Expr) labelSet {
	s, _ := outLabels(e)
	return s
}

// outLabels also reports whether the expression is a scalar, without
// calling Type() (which walks the whole subtree on every call).
func outLabels(e parser.Expr) (labelSet, bool) {
	if isNilNode(e) {
		return anyLabels(), false
	}
	switch n := e.(type) {
	case *parser.NumberLiteral:
		return onlyLabels(), true
	case *parser.ParenExpr:
		return outLabels(n.Expr)
	case *parser.UnaryExpr:
		return outLabels(n.Expr)
	case *parser.StepInvariantExpr:
		return outLabels(n.Expr)
	case *parser.Call:
		if n.Func != nil && n.Func.ReturnType == parser.ValueTypeScalar {
			return onlyLabels(), true
		}
	case *parser.BinaryExpr:
		lhs, ls := outLabels(n.LHS)
		rhs, rs := outLabels(n.RHS)
		switch {
		case ls && rs:
			return onlyLabels(), true
		case ls:
			return rhs, false
		case rs:
			return lhs, false
		}
		m := n.VectorMatching
		switch n.Op {
		case parser.LAND, parser.LUNLESS:
			return lhs, false
		case parser.LOR:
			return lhs.union(rhs), false
		}
		if m == nil {
			return lhs, false
		}
		switch m.Card {
		case parser.CardManyToOne:
			return lhs.with(m.Include...), false
		case parser.CardOneToMany:
			return rhs.with(m.Include...), false
		}
		if m.On {
			return lhs.intersect(m.MatchingLabels), false
		}
		return lhs.without(m.MatchingLabels...), false
	}
	return outputLabelsOf(e), false
}

func outputLabelsOf(e parser.Expr) labelSet {
	if isNilNode(e) {
		return anyLabels()
	}
	switch n := e.(type) {
	case nil:
		return anyLabels()
	case *parser.ParenExpr:
		return outputLabels(n.Expr)
	case *parser.UnaryExpr:
		return outputLabels(n.Expr)
	case *parser.StepInvariantExpr:
		return outputLabels(n.Expr)
	case *parser.SubqueryExpr:
		return outputLabels(n.Expr)
	case *parser.NumberLiteral, *parser.StringLiteral:
		return onlyLabels()
	case *parser.VectorSelector, *parser.MatrixSelector:
		return anyLabels()
	case *parser.AggregateExpr:
		in := outputLabels(n.Expr)
		switch n.Op {
		case parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
			return in
		}
		var out labelSet
		if n.Without {
			out = in.without(n.Grouping...)
		} else {
			out = in.intersect(n.Grouping)
		}
		if n.Op == parser.COUNT_VALUES {
			if s, ok := n.Param.(*parser.StringLiteral); ok {
				out = out.with(s.Val)
			}
		}
		return out
	case *parser.Call:
		if n.Func == nil {
			return anyLabels()
		}
		switch n.Func.Name {
		case "absent", "absent_over_time":
			var names []string
			for _, a := range n.Args {
				if vs := vectorSelectorOf(a); vs != nil {
					for _, m := range vs.LabelMatchers {
						if m.Type == labels.MatchEqual && m.Name != labels.MetricName {
							names = append(names, m.Name)
						}
					}
				}
			}
			return onlyLabels(names...)
		case "vector", "time", "scalar", "pi", "day_of_month", "day_of_week", "day_of_year", "days_in_month", "hour", "minute", "month", "year":
			if len(n.Args) == 0 || n.Func.Name == "vector" || n.Func.Name == "scalar" || n.Func.Name == "time" || n.Func.Name == "pi" {
				return onlyLabels()
			}
		case "histogram_quantile", "histogram_fraction":
			if len(n.Args) > 0 {
				return outputLabels(n.Args[len(n.Args)-1]).without("le")
			}
		case "label_replace", "label_join":
			if len(n.Args) > 1 {
				in := outputLabels(n.Args[0])
				if s, ok := n.Args[1].(*parser.StringLiteral); ok {
					return in.with(s.Val)
				}
				return anyLabels()
			}
		}
		// Most functions keep the labels of their vector argument.
		for i, a := range n.Args {
			if len(n.Func.ArgTypes) == 0 {
				break
			}
			t := n.Func.ArgTypes[min(i, len(n.Func.ArgTypes)-1)]
			if t == parser.ValueTypeVector || t == parser.ValueTypeMatrix {
				return outputLabels(a)
			}
		}
		return anyLabels()
	}
	return anyLabels()
}

func vectorSelectorOf(e parser.Expr) *parser.VectorSelector {
	switch n := e.(type) {
	case *parser.VectorSelector:
		return n
	case *parser.MatrixSelector:
		vs, _ := n.VectorSelector.(*parser.VectorSelector)
		return vs
	case *parser.ParenExpr:
		return vectorSelectorOf(n.Expr)
	}
	return nil
}
