package rules

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzLintNotifier: a notifier block of any shape (wrong kinds, aliases,
// matchers that do not parse, routes: [null]) never panics the checks.
func FuzzLintNotifier(f *testing.F) {
	for _, s := range []string{
		"route: {receiver: a, routes: [null, {matchers: ['a=~\"(']}, {}]}\nreceivers: [{name: a}]",
		"route: []\nreceivers: {}\ninhibit_rules: [1, {source_matchers: 'x'}, {equal: [a, [b]]}]",
		"route: &r {receiver: a, routes: [*r]}\nreceivers: [{name: a}]",
		"time_intervals: [{name: x, time_intervals: [{location: Europe/Paris}, {}, 3]}, null]",
		"route: {routes: [{continue: true}, {match: {a: [1]}}, {match_re: {a: '('}}]}",
		"receivers: [{name: a, slack_configs: [{title: '{{ .CommonLabels. }}', key_labels: [a, {b: c}]}]}]",
	} {
		f.Add(s, "groups: [{name: g, rules: [{alert: A, expr: up == 0, labels: {x: '{{ $labels.y }}'}}]}]")
	}
	f.Fuzz(func(t *testing.T, block, ruleText string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(block), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		opts := NotifierOptions{Builtin: true, ExternalLabels: map[string]string{"cluster": "c"}}
		opts.Rules = []*File{ParseFile("rules.yaml", []byte(ruleText), ParseOptions{})}
		LintNotifier("paged.yaml", []byte(block), doc.Content[0], opts, nil)
	})
}
