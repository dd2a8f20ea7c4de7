package rules

import (
	"slices"
	"strings"
)

// Two rules with the same name and the same labels write the same series
// (recording rules) or fight over the same alert identity (alerting
// rules): Prometheus's promtool reports the first case as a lint warning.
var checkRuleDuplicate = &Check{
	Name:     "rule/duplicate",
	Help:     "No two rules in a file share a name and label set (they would produce the same series or alert).",
	Severity: Warning,
	File:     lintDuplicates,
}

func lintDuplicates(p *Pass, f *File) {
	type key struct{ name, labels string }
	first := map[key]*Rule{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			name := r.Name()
			if name == "" {
				continue
			}
			var ls []string
			for _, kv := range r.Labels {
				ls = append(ls, kv.Key.Value+"="+kv.Value.Value)
			}
			slices.Sort(ls)
			k := key{name, strings.Join(ls, ",")}
			prev, seen := first[k]
			if !seen {
				first[k] = r
				continue
			}
			kind := "recording rule"
			what := "both write the same series"
			if r.IsAlert() {
				kind = "alert"
				what = "alerts from both share one identity and flap between their annotations"
			}
			n := r.Node
			if r.Alert != nil {
				n = r.Alert.Node
			} else if r.Record != nil {
				n = r.Record.Node
			}
			p.ReportNode(n, "%s %q with the same labels is already defined at line %d (group %q): %s",
				kind, name, prev.Node.Line, prev.Group.Name.Value, what)
		}
	}
}
