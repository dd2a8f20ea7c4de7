package rules

import (
	"strings"

	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"go.yaml.in/yaml/v3"
)

// A route after a sibling that matches everything it matches, and has no
// continue: true, never receives an alert: Alertmanager stops at the first
// matching child.
var checkNotifierRouteShadowed = &Check{
	Name:     "notifier/route-shadowed",
	Help:     "A route no alert can reach: an earlier sibling without continue: true matches every alert it matches (compared matcher by matcher, reported only when provable).",
	Severity: Warning,
	Notifier: lintRouteShadowed,
}

func lintRouteShadowed(p *Pass, n *Notifier) {
	n.Route.walk(func(parent *Route) {
		above, ok := parent.path()
		if !ok {
			return
		}
		for j, later := range parent.Routes {
			if later.Unknown {
				continue
			}
			constraints := append(append([]RouteMatcher(nil), later.Matchers...), above...)
			for _, earlier := range parent.Routes[:j] {
				if earlier.Continue || earlier.Unknown || !coversAll(earlier.Matchers, constraints) {
					continue
				}
				why := "matches every alert this one matches"
				if len(earlier.Matchers) == 0 {
					why = "has no matchers, so it matches every alert"
				}
				p.ReportNode(routeAnchor(later), "this route is never reached: the route at line %d before it, without continue: true, %s and stops there (send to %s)",
					earlier.Node.Line, why, earlier.EffectiveReceiver())
				break
			}
		}
	})
}

// routeAnchor is the node a finding about a route points at: its first
// key.
func routeAnchor(r *Route) *yaml.Node {
	if len(r.Node.Content) > 0 {
		return r.Node.Content[0]
	}
	return r.Node
}

// coversAll reports whether every alert that satisfies constraints also
// satisfies each of ms. It only answers true when it can prove it.
func coversAll(ms, constraints []RouteMatcher) bool {
	for _, m := range ms {
		if !implied(m.Matcher, constraints) {
			return false
		}
	}
	return true
}

func implied(m *amlabels.Matcher, constraints []RouteMatcher) bool {
	for _, c := range constraints {
		if c.Name == m.Name && impliesMatcher(c.Matcher, m) {
			return true
		}
	}
	return false
}

// impliesMatcher reports whether every value c accepts, m accepts too.
func impliesMatcher(c, m *amlabels.Matcher) bool {
	if c.Type == m.Type && c.Value == m.Value {
		return true
	}
	switch c.Type {
	case amlabels.MatchEqual:
		return m.Matches(c.Value)
	case amlabels.MatchRegexp:
		values, ok := literalAlternation(c.Value)
		if !ok {
			return false
		}
		for _, v := range values {
			if !m.Matches(v) {
				return false
			}
		}
		return true
	}
	return false
}

// literalAlternation returns the values a regexp such as "a|b|c" matches
// (anchored, as Alertmanager anchors them), when it is only literals
// separated by |.
func literalAlternation(re string) ([]string, bool) {
	if strings.ContainsAny(re, `\.+*?()[]{}^$`) {
		return nil, false
	}
	return strings.Split(re, "|"), true
}
