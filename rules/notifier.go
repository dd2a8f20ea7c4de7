package rules

import (
	"strings"

	"github.com/prometheus/alertmanager/matcher/compat"
	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"go.yaml.in/yaml/v3"
)

// Notifier is the notifier block of a paged.yaml, or an alertmanager.yml,
// as the notifier/... checks read it: the route tree, the receivers, the
// inhibit rules and the time intervals, each with the YAML node it was
// written at, and the alerts that the rules the file loads can send.
// Reading it never fails: what does not parse is left out, or marked so
// that no check reasons about it (amtool check-config and paged
// check-config report it).
type Notifier struct {
	Route     *Route // nil when the block has no route:
	Receivers []*NotifierReceiver
	Inhibit   []*InhibitRule
	Intervals []*TimeInterval
	// Forwards: the block has alertmanagers: (paged forwards every alert
	// to them, whatever the route).
	Forwards bool
	// Alerts are the alerts the loaded rules and paged's built-in alerts
	// can send (notifier_alerts.go); nil when no rule is known, and then
	// the checks about labels and annotations say nothing.
	Alerts []*PossibleAlert
}

// Route is one node of the route tree.
type Route struct {
	Node   *yaml.Node // the route's mapping
	Parent *Route
	// Matchers are match:, match_re: and matchers:, each with its node.
	Matchers []RouteMatcher
	// Unknown: a matcher did not parse, so what the route matches is not
	// known and no check compares it.
	Unknown  bool
	Continue bool
	Receiver Scalar // as written; Value "" when inherited
	GroupBy  []Scalar
	Routes   []*Route
}

// RouteMatcher is one matcher of a route or an inhibit rule, with the node
// it was written at.
type RouteMatcher struct {
	*amlabels.Matcher
	Node *yaml.Node
}

// EffectiveReceiver is the receiver the route notifies: its own, or the
// nearest ancestor's.
func (r *Route) EffectiveReceiver() string {
	for ; r != nil; r = r.Parent {
		if r.Receiver.Value != "" {
			return r.Receiver.Value
		}
	}
	return ""
}

// path returns the matchers an alert satisfies to reach r: its own and
// its ancestors', and whether all of them are known.
func (r *Route) path() ([]RouteMatcher, bool) {
	var out []RouteMatcher
	for ; r != nil; r = r.Parent {
		if r.Unknown {
			return nil, false
		}
		out = append(out, r.Matchers...)
	}
	return out, true
}

func (r *Route) hasAncestorNode(n *yaml.Node) bool {
	for ; r != nil; r = r.Parent {
		if r.Node == n {
			return true
		}
	}
	return false
}

// walk calls fn for r and every route under it, parents first.
func (r *Route) walk(fn func(*Route)) {
	if r == nil {
		return
	}
	fn(r)
	for _, c := range r.Routes {
		c.walk(fn)
	}
}

// NotifierReceiver is one entry of receivers:.
type NotifierReceiver struct {
	Node *yaml.Node // the entry's mapping
	Name Scalar
	// Integrations counts the entries of its *_configs lists.
	Integrations int
	// Templates are the string values under its *_configs that hold a
	// Go template ({{ ... }}).
	Templates []*yaml.Node
	// KeyLabels are the label names of paged's slack_configs key_labels.
	KeyLabels []Scalar
}

// InhibitRule is one entry of inhibit_rules:.
type InhibitRule struct {
	Node          *yaml.Node
	Source        []RouteMatcher
	Target        []RouteMatcher
	SourceNode    *yaml.Node // the first source_* value, or Node
	TargetNode    *yaml.Node
	Equal         []Scalar
	Unknown       bool // a matcher did not parse
	Name          string
	HasSourceKeys bool
	HasTargetKeys bool
}

// TimeInterval is one entry of time_intervals: (or mute_time_intervals:):
// a name and its ranges.
type TimeInterval struct {
	Name   Scalar
	Ranges []TimeRange
}

// TimeRange is one entry of a time interval's own time_intervals: list.
type TimeRange struct {
	Node     *yaml.Node
	Location Scalar // Value "" when absent
}

// ParseNotifier reads the notifier block (the mapping node of paged.yaml's
// notifier:, or the root of an alertmanager.yml).
func ParseNotifier(block *yaml.Node) *Notifier {
	n := &Notifier{}
	block = resolve(block)
	if block == nil || block.Kind != yaml.MappingNode {
		return n
	}
	if v := mapValue(block, "route"); v != nil && v.Kind == yaml.MappingNode {
		budget := maxRoutes
		n.Route = parseRoute(v, nil, &budget)
	}
	if v := mapValue(block, "receivers"); v != nil && v.Kind == yaml.SequenceNode {
		for _, item := range v.Content {
			if r := parseReceiver(resolve(item)); r != nil {
				n.Receivers = append(n.Receivers, r)
			}
		}
	}
	if v := mapValue(block, "inhibit_rules"); v != nil && v.Kind == yaml.SequenceNode {
		for _, item := range v.Content {
			if ir := parseInhibit(resolve(item)); ir != nil {
				n.Inhibit = append(n.Inhibit, ir)
			}
		}
	}
	for _, k := range []string{"time_intervals", "mute_time_intervals"} {
		if v := mapValue(block, k); v != nil && v.Kind == yaml.SequenceNode {
			for _, item := range v.Content {
				if ti := parseTimeInterval(resolve(item)); ti != nil {
					n.Intervals = append(n.Intervals, ti)
				}
			}
		}
	}
	if v := mapValue(block, "alertmanagers"); v != nil && v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
		n.Forwards = true
	}
	return n
}

// maxRoutes bounds the routes read from one block: aliases can make a
// tree of a few lines exponentially large.
const maxRoutes = 10000

// parseRoute reads the route at m and its children, leaving out a child
// that is (through an alias) one of its own ancestors.
func parseRoute(m *yaml.Node, parent *Route, budget *int) *Route {
	*budget--
	r := &Route{Node: m, Parent: parent}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, resolve(m.Content[i+1])
		switch k {
		case "receiver":
			if v.Kind == yaml.ScalarNode {
				r.Receiver = Scalar{Value: v.Value, Node: v}
			}
		case "continue":
			r.Continue = v.Kind == yaml.ScalarNode && v.Value == "true"
		case "group_by":
			if v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					if c = resolve(c); c.Kind == yaml.ScalarNode {
						r.GroupBy = append(r.GroupBy, Scalar{Value: c.Value, Node: c})
					}
				}
			}
		case "match", "match_re", "matchers":
			ms, ok := parseMatchers(k, v)
			r.Matchers = append(r.Matchers, ms...)
			r.Unknown = r.Unknown || !ok
		case "routes":
			if v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					if c = resolve(c); c.Kind == yaml.MappingNode && *budget > 0 && !r.hasAncestorNode(c) {
						r.Routes = append(r.Routes, parseRoute(c, r, budget))
					}
				}
			}
		}
	}
	return r
}

// parseMatchers reads a match:/match_re: mapping or a matchers: list the
// way Alertmanager's config does; ok is false when one does not parse.
func parseMatchers(key string, v *yaml.Node) (out []RouteMatcher, ok bool) {
	ok = true
	switch {
	case strings.HasSuffix(key, "matchers"):
		if v.Kind != yaml.SequenceNode {
			return nil, isNullNode(v)
		}
		for _, c := range v.Content {
			c = resolve(c)
			if c.Kind != yaml.ScalarNode {
				ok = false
				continue
			}
			ms, err := compat.Matchers(c.Value, "config")
			if err != nil {
				ok = false
				continue
			}
			for _, m := range ms {
				out = append(out, RouteMatcher{Matcher: m, Node: c})
			}
		}
	default: // match, match_re and their source_/target_ forms
		if v.Kind != yaml.MappingNode {
			return nil, isNullNode(v)
		}
		t := amlabels.MatchEqual
		if strings.HasSuffix(key, "_re") {
			t = amlabels.MatchRegexp
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			kn, vn := v.Content[i], resolve(v.Content[i+1])
			if vn.Kind != yaml.ScalarNode {
				ok = false
				continue
			}
			m, err := amlabels.NewMatcher(t, kn.Value, vn.Value)
			if err != nil {
				ok = false
				continue
			}
			out = append(out, RouteMatcher{Matcher: m, Node: kn})
		}
	}
	return out, ok
}

func isNullNode(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func parseReceiver(m *yaml.Node) *NotifierReceiver {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	r := &NotifierReceiver{Node: m}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, resolve(m.Content[i+1])
		switch {
		case k == "name" && v.Kind == yaml.ScalarNode:
			r.Name = Scalar{Value: v.Value, Node: v}
		case strings.HasSuffix(k, "_configs") && v.Kind == yaml.SequenceNode:
			r.Integrations += len(v.Content)
			for _, c := range v.Content {
				collectTemplates(resolve(c), r, 0)
			}
		}
	}
	return r
}

// collectTemplates gathers the templated strings and key_labels of one
// integration.
func collectTemplates(n *yaml.Node, r *NotifierReceiver, depth int) {
	if depth > 16 {
		return // no integration is this deep; an alias loop is
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "{{") {
			r.Templates = append(r.Templates, n)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			v := resolve(n.Content[i+1])
			if n.Content[i].Value == "key_labels" && v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					if c = resolve(c); c.Kind == yaml.ScalarNode {
						r.KeyLabels = append(r.KeyLabels, Scalar{Value: c.Value, Node: c})
					}
				}
				continue
			}
			collectTemplates(v, r, depth+1)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			collectTemplates(resolve(c), r, depth+1)
		}
	}
}

func parseInhibit(m *yaml.Node) *InhibitRule {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	ir := &InhibitRule{Node: m}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, resolve(m.Content[i+1])
		switch k {
		case "name":
			ir.Name = v.Value
		case "source_match", "source_match_re", "source_matchers":
			ms, ok := parseMatchers(k, v)
			ir.Source = append(ir.Source, ms...)
			ir.Unknown = ir.Unknown || !ok
			if !ir.HasSourceKeys {
				ir.SourceNode, ir.HasSourceKeys = m.Content[i], true
			}
		case "target_match", "target_match_re", "target_matchers":
			ms, ok := parseMatchers(k, v)
			ir.Target = append(ir.Target, ms...)
			ir.Unknown = ir.Unknown || !ok
			if !ir.HasTargetKeys {
				ir.TargetNode, ir.HasTargetKeys = m.Content[i], true
			}
		case "equal":
			if v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					if c = resolve(c); c.Kind == yaml.ScalarNode {
						ir.Equal = append(ir.Equal, Scalar{Value: c.Value, Node: c})
					}
				}
			}
		}
	}
	if ir.SourceNode == nil {
		ir.SourceNode = m
	}
	if ir.TargetNode == nil {
		ir.TargetNode = m
	}
	return ir
}

func parseTimeInterval(m *yaml.Node) *TimeInterval {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	ti := &TimeInterval{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, resolve(m.Content[i+1])
		switch k {
		case "name":
			ti.Name = Scalar{Value: v.Value, Node: v}
		case "time_intervals":
			if v.Kind != yaml.SequenceNode {
				continue
			}
			for _, c := range v.Content {
				c = resolve(c)
				if c.Kind != yaml.MappingNode {
					continue
				}
				tr := TimeRange{Node: c}
				if l := mapValue(c, "location"); l != nil && l.Kind == yaml.ScalarNode && !isNullNode(l) {
					tr.Location = Scalar{Value: l.Value, Node: l}
				}
				ti.Ranges = append(ti.Ranges, tr)
			}
		}
	}
	if ti.Name.Node == nil {
		ti.Name.Node = m
	}
	return ti
}
