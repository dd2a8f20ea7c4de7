package rules

import (
	"maps"
	"slices"
	"strings"

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
		return selectorLabelSet(vectorSelectorOf(e))
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

// selectorLabelSet is what a selector's series can carry. The series of a
// classic histogram or summary say by their name which labels they lack:
// <name>_count and <name>_sum never have le or quantile (only _bucket has
// le, only the summary's own name quantile), <name>_bucket never has
// quantile. A matcher that requires the label overrides the name.
func selectorLabelSet(vs *parser.VectorSelector) labelSet {
	name, ok := selectorName(vs)
	if !ok {
		return anyLabels()
	}
	var lacks []string
	switch {
	case strings.HasSuffix(name, "_count"), strings.HasSuffix(name, "_sum"):
		lacks = []string{"le", "quantile"}
	case strings.HasSuffix(name, "_bucket"):
		lacks = []string{"quantile"}
	}
	certain := selectorCertain(vs)
	lacks = slices.DeleteFunc(lacks, func(l string) bool { return certain[l] })
	return anyLabels().without(lacks...)
}

// selectorCertain lists the labels every series of a selector has: those
// with a matcher that the empty value fails (an absent label reads as
// empty), and le on a classic histogram's _bucket series.
func selectorCertain(vs *parser.VectorSelector) map[string]bool {
	out := map[string]bool{}
	if vs == nil {
		return out
	}
	for _, m := range vs.LabelMatchers {
		if m != nil && m.Name != labels.MetricName && !m.Matches("") {
			out[m.Name] = true
		}
	}
	if name, ok := selectorName(vs); ok && strings.HasSuffix(name, "_bucket") {
		out["le"] = true
	}
	return out
}

// certainLabels works out which labels every series of an expression's
// result certainly has: the counterpart of outputLabels, which says which
// it may have. Where it cannot tell it answers "none".
func certainLabels(e parser.Expr) map[string]bool {
	out, _ := certain(e)
	return out
}

// certain is certainLabels that also reports whether the expression is a
// scalar, so that a binary operation is read in one pass over its operands.
func certain(e parser.Expr) (map[string]bool, bool) {
	none := map[string]bool{}
	if isNilNode(e) {
		return none, false
	}
	switch n := e.(type) {
	case *parser.NumberLiteral:
		return none, true
	case *parser.ParenExpr:
		return certain(n.Expr)
	case *parser.UnaryExpr:
		return certain(n.Expr)
	case *parser.StepInvariantExpr:
		return certain(n.Expr)
	case *parser.SubqueryExpr:
		return certainLabels(n.Expr), false
	case *parser.VectorSelector:
		return selectorCertain(n), false
	case *parser.MatrixSelector:
		return selectorCertain(vectorSelectorOf(n)), false
	case *parser.AggregateExpr:
		in := certainLabels(n.Expr)
		switch n.Op {
		case parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
			return in, false
		}
		out := map[string]bool{}
		for l := range in {
			if slices.Contains(n.Grouping, l) != n.Without {
				out[l] = true
			}
		}
		return out, false
	case *parser.Call:
		return certainOfCall(n), n.Func != nil && n.Func.ReturnType == parser.ValueTypeScalar
	case *parser.BinaryExpr:
		lhs, ls := certain(n.LHS)
		rhs, rs := certain(n.RHS)
		switch {
		case ls && rs:
			return none, true
		case ls:
			return rhs, false
		case rs:
			return lhs, false
		}
		switch n.Op {
		case parser.LAND, parser.LUNLESS:
			return lhs, false
		case parser.LOR:
			out := map[string]bool{}
			for l := range lhs {
				if rhs[l] {
					out[l] = true
				}
			}
			return out, false
		}
		m := n.VectorMatching
		if m == nil {
			return lhs, false
		}
		out := map[string]bool{}
		switch m.Card {
		case parser.CardManyToOne, parser.CardOneToMany:
			many, one := lhs, rhs
			if m.Card == parser.CardOneToMany {
				many, one = rhs, lhs
			}
			maps.Copy(out, many)
			for _, l := range m.Include {
				delete(out, l)
				if one[l] {
					out[l] = true
				}
			}
			return out, false
		}
		for l := range lhs {
			if slices.Contains(m.MatchingLabels, l) == m.On {
				out[l] = true
			}
		}
		return out, false
	}
	return none, false
}

func certainOfCall(n *parser.Call) map[string]bool {
	none := map[string]bool{}
	if n.Func == nil {
		return none
	}
	switch n.Func.Name {
	case "absent", "absent_over_time":
		return none // its equality matchers' labels, but only when the selector has no series: not certain
	case "histogram_quantile", "histogram_fraction":
		if len(n.Args) == 0 {
			return none
		}
		out := maps.Clone(certainLabels(n.Args[len(n.Args)-1]))
		delete(out, "le")
		return out
	case "label_replace", "label_join":
		if len(n.Args) < 2 {
			return none
		}
		s, ok := n.Args[1].(*parser.StringLiteral)
		if !ok {
			return none
		}
		out := maps.Clone(certainLabels(n.Args[0]))
		delete(out, s.Val) // may be set to the empty value, which removes it
		return out
	}
	if n.Func.ReturnType != parser.ValueTypeVector {
		return none
	}
	for i, a := range n.Args {
		if len(n.Func.ArgTypes) == 0 {
			break
		}
		t := n.Func.ArgTypes[min(i, len(n.Func.ArgTypes)-1)]
		if t == parser.ValueTypeVector || t == parser.ValueTypeMatrix {
			return certainLabels(a)
		}
	}
	return none
}
