package rules

import (
	"slices"
	"strings"

	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"go.yaml.in/yaml/v3"
)

// PossibleAlert is what one alerting rule (or one of paged's built-in
// alerts) can send to the notifier: its name, the labels whose value is
// known, those present with a value only known at run time, those its
// expression may give, and its annotations. It over-approximates: a check
// that finds no possible alert with a label has proved that none has it.
type PossibleAlert struct {
	Name string
	// builtin: one of paged's own alerts (BuiltinAlerts).
	builtin bool
	// fixed are labels whose value is written in the rule; "" marks a
	// label the rule removes (an empty value deletes it).
	fixed map[string]string
	// templated are labels the rule sets with a template.
	templated map[string]bool
	// expr are the labels the expression's series may carry.
	expr        labelSet
	annotations map[string]bool
}

// MayCarry reports whether the alert can have label l.
func (a *PossibleAlert) MayCarry(l string) bool {
	if l == "alertname" {
		return true
	}
	if v, ok := a.fixed[l]; ok {
		return v != ""
	}
	return a.templated[l] || a.expr.has(l)
}

// HasAnnotation reports whether the alert can have annotation name.
func (a *PossibleAlert) HasAnnotation(name string) bool { return a.annotations[name] }

// CanMatch reports whether some alert of this kind can satisfy m.
func (a *PossibleAlert) CanMatch(m *amlabels.Matcher) bool {
	if m.Name == "alertname" {
		return m.Matches(a.Name)
	}
	if v, ok := a.fixed[m.Name]; ok {
		return m.Matches(v)
	}
	if a.templated[m.Name] || a.expr.has(m.Name) {
		return true // the value is not known: any, or none
	}
	return m.Matches("")
}

// canMatchAll reports whether one alert of this kind can satisfy every
// matcher. Each is tried on its own, which over-approximates.
func (a *PossibleAlert) canMatchAll(ms []RouteMatcher) bool {
	for _, m := range ms {
		if !a.CanMatch(m.Matcher) {
			return false
		}
	}
	return true
}

// NotifierOptions are what LintNotifier knows beside the block.
type NotifierOptions struct {
	// Rules are the rule files and packs the configuration loads. With
	// none, the checks that need to know the alerts say nothing.
	Rules []*File
	// ExternalLabels are paged's global.external_labels, which every alert
	// carries unless its own labels set them.
	ExternalLabels map[string]string
	// Builtin adds paged's built-in alerts (PagedDatasourceDown and the
	// others) to the rules' alerts.
	Builtin bool
	// Annotations every alert may carry beside its rule's own (a pack's
	// dashboard_url when grafana_url is set).
	Annotations []string
}

// BuiltinAlerts are the alerts paged raises itself (engine/health.go,
// engine/builtin.go, engine/noseries.go): names, labels and annotations.
// A test keeps them in step with the engine's constants.
var BuiltinAlerts = []struct {
	Name   string
	Labels map[string]string // "" for a label whose value varies
}{
	{"PagedDatasourceDown", map[string]string{"severity": "critical"}},
	{"PagedStateCorrupted", map[string]string{"severity": "critical", "file": ""}},
	{"PagedStateWriteFailing", map[string]string{"severity": "critical", "file": ""}},
	{"PagedReloadFailed", map[string]string{"severity": "critical", "file": ""}},
	{"PagedRuleNoSeries", map[string]string{"severity": "warning", "rule": "", "group": "", "selector": ""}},
}

var builtinAnnotations = []string{"description", "runbook_url", "summary"}

// possibleAlerts lists what the rules can send, or nil when no alerting
// rule is known or a file could not be read (its alerts are unknown).
func possibleAlerts(opts NotifierOptions) []*PossibleAlert {
	if len(opts.Rules) == 0 {
		return nil
	}
	var out []*PossibleAlert
	for _, f := range opts.Rules {
		for _, p := range f.Problems {
			if p.Check == CheckYAMLParse {
				return nil
			}
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if r.Alert == nil {
					continue
				}
				out = append(out, ruleAlert(r, opts))
			}
		}
	}
	if len(out) == 0 {
		// Only recording rules: paged is likely the notifier of alerts
		// posted to its API, which no file here describes.
		return nil
	}
	if opts.Builtin {
		for _, b := range BuiltinAlerts {
			a := &PossibleAlert{Name: b.Name, builtin: true, fixed: map[string]string{}, templated: map[string]bool{}, expr: onlyLabels(), annotations: map[string]bool{}}
			for k, v := range b.Labels {
				if v == "" {
					a.templated[k] = true
				} else {
					a.fixed[k] = v
				}
			}
			for _, k := range builtinAnnotations {
				a.annotations[k] = true
			}
			addExternal(a, opts.ExternalLabels)
			out = append(out, a)
		}
	}
	for _, a := range out {
		for _, k := range opts.Annotations {
			a.annotations[k] = true
		}
	}
	return out
}

func ruleAlert(r *Rule, opts NotifierOptions) *PossibleAlert {
	a := &PossibleAlert{Name: r.Alert.Value, fixed: map[string]string{}, templated: map[string]bool{}, annotations: map[string]bool{}}
	if r.Expr != nil && !isNilNode(r.Expr.AST) {
		a.expr = outputLabels(r.Expr.AST).without("__name__")
	} else {
		a.expr = anyLabels()
	}
	set := func(kvs []KV) {
		for _, kv := range kvs {
			k, v := kv.Key.Value, kv.Value.Value
			if strings.Contains(v, "{{") {
				delete(a.fixed, k)
				a.templated[k] = true
				continue
			}
			delete(a.templated, k)
			a.fixed[k] = v
		}
	}
	if r.Group != nil {
		set(r.Group.Labels)
	}
	set(r.Labels)
	for _, kv := range r.Annotations {
		a.annotations[kv.Key.Value] = true
	}
	addExternal(a, opts.ExternalLabels)
	return a
}

// addExternal adds the external labels the alert does not set itself.
func addExternal(a *PossibleAlert, ext map[string]string) {
	for k, v := range ext {
		if _, ok := a.fixed[k]; ok || a.templated[k] {
			continue
		}
		if a.expr.has(k) {
			a.templated[k] = true // the series' value, or the external one
			continue
		}
		a.fixed[k] = v
	}
}

// LintNotifier runs the enabled notifier/... checks on the notifier block
// of the file at path: block is its mapping, parsed from content (paged.yaml's
// notifier:, or the root of an alertmanager.yml). It returns the findings,
// sorted, and the source lines they point at, for WriteFindings.
// A "# paged:disable CHECK" comment on a finding's line or on the comment
// lines just above it silences it; "# paged:disable-file CHECK" anywhere
// silences the check in the file.
func LintNotifier(path string, content []byte, block *yaml.Node, opts NotifierOptions, cfg *Config) ([]Finding, SourceFunc) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	f := &File{Path: path, Content: content, index: newLineIndex(content)}
	src := func(p string, line int) string {
		if p != path {
			return ""
		}
		return f.Line(line)
	}
	if block == nil {
		return nil, src
	}
	n := ParseNotifier(block)
	n.Alerts = possibleAlerts(opts)
	var out []Finding
	for _, ch := range Checks() {
		if ch.Notifier == nil || !cfg.Enabled(ch) {
			continue
		}
		p := &Pass{File: f, Config: cfg, check: ch, out: &out}
		ch.Notifier(p, n)
	}
	d := parseDirectives(f)
	out = slices.DeleteFunc(out, func(fd Finding) bool { return d.silences(fd) || lineDisables(f, fd) })
	SortFindings(out)
	return dedupe(out), src
}

// lineDisables reports whether "# paged:disable CHECK" on the finding's
// line, or on the comment lines just above it, names its check.
func lineDisables(f *File, fd Finding) bool {
	match := func(line string) bool {
		for _, m := range directiveRe.FindAllStringSubmatch(commentPart(line), -1) {
			if m[1] == "disable" && matchesAny(splitChecks(m[2]), fd.Check) {
				return true
			}
		}
		return false
	}
	if match(f.Line(fd.Range.Start.Line)) {
		return true
	}
	for l := fd.Range.Start.Line - 1; l >= 1; l-- {
		t := strings.TrimSpace(f.Line(l))
		if !strings.HasPrefix(t, "#") {
			return false
		}
		if match(t) {
			return true
		}
	}
	return false
}
