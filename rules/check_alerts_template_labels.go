package rules

import (
	"fmt"
	"iter"
	"slices"
	"strings"
)

// An annotation or label that uses $labels.X when the expression's
// aggregation has removed X renders an empty string: a summary that says
// "on instance " at 3 a.m.
var checkAlertsTemplateLabels = &Check{
	Name:     "alerts/template-labels",
	Help:     "Templates use only labels the alert expression keeps ($labels.X after sum by (...) without X renders empty).",
	Severity: Warning,
	Rule:     lintTemplateLabels,
}

func lintTemplateLabels(p *Pass, r *Rule) {
	if !r.IsAlert() || r.Expr == nil || isNilNode(r.Expr.AST) {
		return
	}
	ruleLabels := map[string]bool{"alertname": true}
	for _, kv := range r.Labels {
		ruleLabels[kv.Key.Value] = true
	}
	for _, kv := range r.Group.Labels {
		ruleLabels[kv.Key.Value] = true
	}
	var kept *labelSet // the expression's output labels, once a template needs them
	check := func(kv KV) {
		v := kv.Value.Value
		if !strings.Contains(v, "{{") {
			return
		}
		for start, end := range labelRefs(v) {
			name := v[start:end]
			if ruleLabels[name] {
				continue
			}
			if kept == nil {
				set := outputLabels(r.Expr.AST)
				kept = &set
			}
			if kept.has(name) {
				continue
			}
			p.Report(p.File.ValueRange(kv.Value.Node, start, end),
				"%q uses label %q, which the expression does not keep%s: it renders as an empty string",
				kv.Key.Value, name, describeKept(*kept))
		}
	}
	for _, kv := range r.Annotations {
		check(kv)
	}
	for _, kv := range r.Labels {
		check(kv)
	}
}

// labelRefs yields the offsets of the label names a template refers to
// ($labels.X, .Labels.X, index $labels "X"), in order: what the regexp
//
//	(?:\$labels|\.Labels)\.([a-zA-Z_][a-zA-Z0-9_]*)|index\s+(?:\$labels|\.Labels)\s+"([^"]+)"
//
// finds with FindAllStringSubmatchIndex, at a fraction of its cost.
func labelRefs(v string) iter.Seq2[int, int] {
	return func(yield func(start, end int) bool) {
		for i := 0; i < len(v); {
			j := nextLabelRef(v[i:])
			if j < 0 {
				return
			}
			i += j
			start, end, next := labelRefAt(v, i)
			if next < 0 {
				i++
				continue
			}
			if !yield(start, end) {
				return
			}
			i = next
		}
	}
}

// nextLabelRef is the offset of the first place in v where a reference
// may start, or -1.
func nextLabelRef(v string) int {
	next := -1
	for _, start := range [...]string{"$labels.", ".Labels.", "index"} {
		if j := strings.Index(v, start); j >= 0 && (next < 0 || j < next) {
			next = j
		}
	}
	return next
}

// labelRefAt matches a label reference at v[i:]: the offsets of the name
// and of the end of the reference, or next < 0.
func labelRefAt(v string, i int) (start, end, next int) {
	rest := v[i:]
	if strings.HasPrefix(rest, "$labels.") || strings.HasPrefix(rest, ".Labels.") {
		start = i + len("$labels.")
		end = start
		for end < len(v) && (v[end] == '_' || isASCIILetter(v[end]) || end > start && isASCIIDigit(v[end])) {
			end++
		}
		if end == start {
			return 0, 0, -1
		}
		return start, end, end
	}
	if !strings.HasPrefix(rest, "index") {
		return 0, 0, -1
	}
	j := skipRESpace(v, i+len("index"))
	if j == i+len("index") || !(strings.HasPrefix(v[j:], "$labels") || strings.HasPrefix(v[j:], ".Labels")) {
		return 0, 0, -1
	}
	j += len("$labels")
	k := skipRESpace(v, j)
	if k == j || k >= len(v) || v[k] != '"' {
		return 0, 0, -1
	}
	start = k + 1
	q := strings.IndexByte(v[start:], '"')
	if q < 1 {
		return 0, 0, -1
	}
	end = start + q
	return start, end, end + 1
}

// skipRESpace skips the characters a regexp's \s matches: [\t\n\f\r ].
func skipRESpace(v string, i int) int {
	for i < len(v) && strings.IndexByte("\t\n\f\r ", v[i]) >= 0 {
		i++
	}
	return i
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isASCIIDigit(c byte) bool  { return '0' <= c && c <= '9' }

func describeKept(s labelSet) string {
	if !s.only {
		return ""
	}
	if len(s.names) == 0 {
		return " (its result has no labels)"
	}
	names := keys(s.names)
	slices.Sort(names)
	return fmt.Sprintf(" (it keeps only %s)", strings.Join(names, ", "))
}
