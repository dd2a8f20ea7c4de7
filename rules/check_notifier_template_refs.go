package rules

import (
	"regexp"
	"strings"
)

// A notification template that reads a label or annotation no alert has
// renders "<no value>" or nothing: a Slack title with a hole in it, a
// runbook button that goes nowhere.
var checkNotifierTemplateRefs = &Check{
	Name:     "notifier/template-refs",
	Help:     "Receiver templates (.CommonLabels.x, .GroupLabels.x, .Labels.x, .CommonAnnotations.y, .Annotations.y) and slack key_labels that name a label or annotation no alert routed to the receiver can have (of the loaded rules and paged's built-in alerts).",
	Severity: Warning,
	Notifier: lintTemplateRefs,
}

// templateRefRe finds .CommonLabels.x and index .CommonLabels "x" (and the
// other label and annotation maps of Alertmanager's template data).
var templateRefRe = regexp.MustCompile(`\.(CommonLabels|GroupLabels|Labels|CommonAnnotations|Annotations)\.([a-zA-Z_][a-zA-Z0-9_]*)|index\s+\.(CommonLabels|GroupLabels|Labels|CommonAnnotations|Annotations)\s+"([^"]+)"`)

// kvMethods are the methods of Alertmanager's template.KV, which the same
// syntax calls.
var kvMethods = map[string]bool{"SortedPairs": true, "Names": true, "Values": true, "Remove": true}

func lintTemplateRefs(p *Pass, n *Notifier) {
	if n.Alerts == nil || n.Route == nil {
		return
	}
	for _, rcv := range n.Receivers {
		var alerts []*PossibleAlert
		seen := map[*PossibleAlert]bool{}
		known := true
		n.Route.walk(func(r *Route) {
			if r.EffectiveReceiver() != rcv.Name.Value {
				return
			}
			reach, ok := reaching(n.Alerts, r)
			known = known && ok
			for _, a := range reach {
				if !seen[a] {
					seen[a] = true
					alerts = append(alerts, a)
				}
			}
		})
		if !known || len(alerts) == 0 {
			continue // unused, or routes whose matchers are not known
		}
		for _, t := range rcv.Templates {
			v := t.Value
			for _, m := range templateRefRe.FindAllStringSubmatchIndex(v, -1) {
				k, l := 2, 4 // the submatches of the first form
				if m[2] < 0 {
					k, l = 6, 8 // of the index form
				}
				kind, name, start, end := v[m[k]:m[k+1]], v[m[l]:m[l+1]], m[l], m[l+1]
				if kvMethods[name] {
					continue
				}
				if strings.HasSuffix(kind, "Annotations") {
					if !annotatedBy(alerts, name) {
						p.Report(p.File.ValueRange(t, start, end), ".%s.%s: none of the alerts routed to receiver %q has annotation %q (%s): it renders empty",
							kind, name, rcv.Name.Value, name, alertNames(alerts))
					}
					continue
				}
				if !carriedBy(alerts, name) {
					p.Report(p.File.ValueRange(t, start, end), ".%s.%s: none of the alerts routed to receiver %q carries label %q (%s): it renders empty",
						kind, name, rcv.Name.Value, name, alertNames(alerts))
				}
			}
		}
		for _, l := range rcv.KeyLabels {
			if !carriedBy(alerts, l.Value) {
				p.ReportNode(l.Node, "key_labels: none of the alerts routed to receiver %q carries label %q (%s): the field is always empty",
					rcv.Name.Value, l.Value, alertNames(alerts))
			}
		}
	}
}

func annotatedBy(alerts []*PossibleAlert, name string) bool {
	for _, a := range alerts {
		if a.HasAnnotation(name) {
			return true
		}
	}
	return false
}
