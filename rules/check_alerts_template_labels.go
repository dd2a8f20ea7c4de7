package rules

import (
	"fmt"
	"regexp"
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

var labelRefRe = regexp.MustCompile(`(?:\$labels|\.Labels)\.([a-zA-Z_][a-zA-Z0-9_]*)|index\s+(?:\$labels|\.Labels)\s+"([^"]+)"`)

func lintTemplateLabels(p *Pass, r *Rule) {
	if !r.IsAlert() || r.Expr == nil || isNilNode(r.Expr.AST) {
		return
	}
	set := outputLabels(r.Expr.AST)
	ruleLabels := map[string]bool{"alertname": true}
	for _, kv := range r.Labels {
		ruleLabels[kv.Key.Value] = true
	}
	for _, kv := range r.Group.Labels {
		ruleLabels[kv.Key.Value] = true
	}
	check := func(kv KV) {
		v := kv.Value.Value
		if !strings.Contains(v, "{{") {
			return
		}
		for _, m := range labelRefRe.FindAllStringSubmatchIndex(v, -1) {
			name := ""
			start, end := m[2], m[3]
			if start >= 0 {
				name = v[start:end]
			} else {
				start, end = m[4], m[5]
				name = v[start:end]
			}
			if ruleLabels[name] || set.has(name) {
				continue
			}
			p.Report(p.File.ValueRange(kv.Value.Node, start, end),
				"%q uses label %q, which the expression does not keep%s: it renders as an empty string",
				kv.Key.Value, name, describeKept(set))
		}
	}
	for _, kv := range r.Annotations {
		check(kv)
	}
	for _, kv := range r.Labels {
		check(kv)
	}
}

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
