package rules

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Routing depends on labels: an alert without `severity` (or with a value
// the routing tree does not know) goes to the default receiver or nowhere.
// Which labels and values is the team's policy: info until the team
// writes required_labels in .paged-lint.yaml, then warning.
var checkAlertsLabels = &Check{
	Name: "alerts/labels",
	Help: "Alerts carry the required labels (default: severity = critical|warning|info); configurable in .paged-lint.yaml. " +
		"A policy check: info while the defaults stand, warning once .paged-lint.yaml sets required_labels.",
	Severity: Info,
	Rule:     lintRequiredLabels,
}

func lintRequiredLabels(p *Pass, r *Rule) {
	if !r.IsAlert() {
		return
	}
	sev := policySeverity(p.Config.RequiredLabelsSet)
	names := keys(mapOf(p.Config.RequiredLabels))
	slices.Sort(names)
	for _, name := range names {
		allowed := p.Config.RequiredLabels[name]
		v, ok := r.Label(name)
		if !ok {
			if gv, gok := lookupKV(r.Group.Labels, name); gok {
				v, ok = gv, true
			}
		}
		if !ok {
			hint := ""
			if len(allowed) > 0 {
				hint = " (one of " + strings.Join(allowed, ", ") + ")"
			}
			p.ReportSeverity(sev, p.File.NodeRange(ruleNameNode(r)), "alert %q has no %q label%s", r.Name(), name, hint)
			continue
		}
		if len(allowed) > 0 && !strings.Contains(v.Value, "{{") && !slices.Contains(allowed, v.Value) {
			p.ReportSeverity(sev, p.File.NodeRange(v.Node), "label %s: %q is not one of %s", name, v.Value, strings.Join(allowed, ", "))
		}
	}
}

func mapOf(m map[string][]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// ruleNameNode is the node to report rule-level findings at.
func ruleNameNode(r *Rule) *yaml.Node {
	switch {
	case r.Alert != nil:
		return r.Alert.Node
	case r.Record != nil:
		return r.Record.Node
	}
	return r.Node
}
