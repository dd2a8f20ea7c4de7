package rules

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// An inhibit rule whose source matchers no alert can satisfy never
// inhibits; one whose target matchers none can satisfy protects nothing;
// an equal: label no alert on either side carries is empty on both, so
// it no longer narrows the rule to the same instance: every target is
// inhibited while any source fires.
var checkNotifierInhibitLabels = &Check{
	Name:     "notifier/inhibit-labels",
	Help:     "Inhibit rules whose source or target matchers no alert of the loaded rules (or paged's built-in alerts) can satisfy, and equal: labels that none of the alerts on either side carries.",
	Severity: Warning,
	Notifier: lintInhibitLabels,
}

func lintInhibitLabels(p *Pass, n *Notifier) {
	if n.Alerts == nil {
		return
	}
	for _, ir := range n.Inhibit {
		if ir.Unknown {
			continue
		}
		sources := matching(n.Alerts, ir.Source)
		targets := matching(n.Alerts, ir.Target)
		if len(sources) == 0 {
			reportNoMatch(p, n.Alerts, ir.Source, ir.SourceNode, "source", "never inhibits anything")
		}
		if len(targets) == 0 {
			reportNoMatch(p, n.Alerts, ir.Target, ir.TargetNode, "target", "inhibits nothing")
		}
		if len(sources) == 0 || len(targets) == 0 {
			continue
		}
		for _, l := range ir.Equal {
			if carriedBy(sources, l.Value) || carriedBy(targets, l.Value) {
				continue
			}
			p.ReportNode(l.Node, "equal label %q is on none of the alerts the source or target matchers select (%s): it is empty on both sides, so the rule inhibits every target while any source fires, whatever its other labels",
				l.Value, alertNames(append(sources, targets...)))
		}
	}
}

// reportNoMatch reports one side of an inhibit rule that no alert
// satisfies: at the matcher no alert satisfies alone, or at the side.
func reportNoMatch(p *Pass, alerts []*PossibleAlert, ms []RouteMatcher, side *yaml.Node, what, effect string) {
	for _, m := range ms {
		if len(matching(alerts, []RouteMatcher{m})) == 0 {
			p.ReportNode(m.Node, "no alert of the loaded rules matches %s matcher %s: the inhibit rule %s", what, m.Matcher, effect)
			return
		}
	}
	p.ReportNode(side, "no alert of the loaded rules matches all the %s matchers together (%s): the inhibit rule %s", what, matcherList(ms), effect)
}

// matching returns the alerts that can satisfy every matcher.
func matching(alerts []*PossibleAlert, ms []RouteMatcher) []*PossibleAlert {
	var out []*PossibleAlert
	for _, a := range alerts {
		if a.canMatchAll(ms) {
			out = append(out, a)
		}
	}
	return out
}

func carriedBy(alerts []*PossibleAlert, label string) bool {
	for _, a := range alerts {
		if a.MayCarry(label) {
			return true
		}
	}
	return false
}

// alertNames lists the names of alerts, at most five, without repeats;
// paged's built-in alerts are named as such.
func alertNames(alerts []*PossibleAlert) string {
	var names []string
	seen := map[string]bool{}
	builtin := false
	for _, a := range alerts {
		if a.builtin {
			builtin = true
			continue
		}
		if !seen[a.Name] {
			seen[a.Name] = true
			names = append(names, a.Name)
		}
	}
	if len(names) > 5 {
		names = append(names[:5], fmt.Sprintf("%d more", len(names)-5))
	}
	if builtin {
		names = append(names, "paged's built-in alerts")
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func matcherList(ms []RouteMatcher) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.Matcher.String()
	}
	return strings.Join(s, ", ")
}
