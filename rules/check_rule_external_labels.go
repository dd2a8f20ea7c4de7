package rules

import (
	"regexp"
	"slices"
	"strings"
)

// A server's external labels (global.external_labels) are added to the
// alerts it sends and the series it exports. A rule that sets one of them
// itself hides the server's value (the rule's label wins), and a template
// that reads $externalLabels.X renders empty where the server has no X.
var checkRuleExternalLabels = &Check{
	Name: "rule/external-labels",
	Help: "With --prometheus URL: rules do not set a label that is one of the server's external labels (theirs would hide the " +
		"server's), and templates read only $externalLabels the server has.",
	Severity: Warning,
	Online:   true,
	Rule:     lintExternalLabels,
}

var externalRefRe = regexp.MustCompile(`\$externalLabels\.([a-zA-Z_][a-zA-Z0-9_]*)`)

func lintExternalLabels(p *Pass, r *Rule) {
	if p.liveDown() || p.live().missing["/api/v1/status/config"] {
		return
	}
	api, ok := p.Config.Prometheus.(LiveAPI)
	if !ok {
		return
	}
	st := p.live()
	if st.external == nil {
		ext, err := api.ExternalLabels()
		if err != nil {
			p.liveError(r, "/api/v1/status/config", err)
			return
		}
		st.external = ext
	}
	for _, kv := range r.Labels {
		if v, ok := st.external[kv.Key.Value]; ok {
			p.ReportNode(kv.Key.Node, "label %s is also an external label of the server (%s=%q): the rule's value %q hides it on what this rule produces",
				kv.Key.Value, kv.Key.Value, v, kv.Value.Value)
		}
	}
	var have []string
	for k := range st.external {
		have = append(have, k)
	}
	slices.Sort(have)
	for _, kv := range append(slices.Clone(r.Annotations), r.Labels...) {
		v := kv.Value.Value
		if !strings.Contains(v, "$externalLabels") {
			continue
		}
		for _, m := range externalRefRe.FindAllStringSubmatchIndex(v, -1) {
			name := v[m[2]:m[3]]
			if _, ok := st.external[name]; ok {
				continue
			}
			desc := "none"
			if len(have) > 0 {
				desc = strings.Join(have, ", ")
			}
			p.Report(p.File.ValueRange(kv.Value.Node, m[2], m[3]), "%q reads $externalLabels.%s, which the server does not have (its external labels: %s): it renders as an empty string",
				kv.Key.Value, name, desc)
		}
	}
}
