package rules

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"text/template/parse"
	"unicode"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/template"
)

// Templates in labels and annotations must parse with Prometheus's template
// functions and use only the variables Prometheus defines ($labels,
// $externalLabels, $externalURL, $value).
var checkAlertsTemplate = &Check{
	Name:     "alerts/template",
	Help:     "Label and annotation templates parse and use only known variables and functions.",
	Severity: Error,
	Rule:     lintTemplates,
}

// The variables Prometheus defines before every alert template.
const templateDefs = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"

var templateTokenRe = regexp.MustCompile(`(?:undefined variable|function) "([^"]+)"`)

func lintTemplates(p *Pass, r *Rule) {
	if !r.IsAlert() {
		return
	}
	test := func(what string, kv KV) {
		if !strings.Contains(kv.Value.Value, "{{") || p.worker.templateParses(kv.Value.Value) {
			return
		}
		_, err := parse.Parse("__alert_"+r.Name(), templateDefs+kv.Value.Value, "", "", templateFuncNames(), textTemplateBuiltins)
		if err == nil {
			return
		}
		msg := err.Error()
		// "template: __alert_X:1: undefined variable "$label"": keep the reason.
		if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "template: ") {
			rest := msg[i+2:]
			if j := strings.Index(rest, ": "); j >= 0 {
				msg = rest[j+2:]
			}
		}
		rng := p.File.NodeRange(kv.Value.Node)
		if m := templateTokenRe.FindStringSubmatch(err.Error()); m != nil {
			if i := strings.Index(kv.Value.Value, m[1]); i >= 0 {
				rng = p.File.ValueRange(kv.Value.Node, i, i+len(m[1]))
			}
		}
		p.Report(rng, "%s %q: template does not parse: %s", what, kv.Key.Value, msg)
	}
	for _, kv := range r.Labels {
		test("label", kv)
	}
	for _, kv := range r.Annotations {
		test("annotation", kv)
	}
}

// templateParses reports whether a template is known to parse, without
// parsing it whole: false means "parse it to know". Most alert templates
// are text with a few actions that print a value ({{ $labels.instance }},
// {{ $value | humanize }}), the same ones in every rule; each such action
// is parsed once, after templateDefs, and the answer kept.
//
// That is exact for simple actions (simpleAction): such an action ends at
// the first }} after its {{, declares no variable and opens or closes no
// block, so the lexer and the parser read it alike whatever text and
// actions surround it. A template made only of them parses when each of
// its actions does.
func (w *worker) templateParses(s string) bool {
	if w == nil {
		return false
	}
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			return true
		}
		s = s[i+2:]
		j := strings.Index(s, "}}")
		if j < 0 {
			return false
		}
		action := s[:j]
		if !simpleAction(action) || !w.actionParses(action) {
			return false
		}
		s = s[j+2:]
	}
}

// actionParses parses one simple action, once per worker.
func (w *worker) actionParses(action string) bool {
	ok, seen := w.templateActions[action]
	if !seen {
		_, err := parse.Parse("action", templateDefs+"{{"+action+"}}", "", "", templateFuncNames(), textTemplateBuiltins)
		ok = err == nil
		w.templateActions[action] = ok
	}
	return ok
}

// simpleAction: the text between {{ and }} holds no brace (so no string
// in it hides a }}), no backquote, no comment (/), no declaration or
// assignment (=), and does not start with a keyword (if, end, range,
// define, ...).
func simpleAction(a string) bool {
	if strings.ContainsAny(a, "{}`/=") {
		return false
	}
	first := strings.TrimLeft(a, " \t\r\n-")
	end := strings.IndexFunc(first, func(r rune) bool {
		return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
	})
	if end >= 0 {
		first = first[:end]
	}
	switch first {
	case "block", "break", "continue", "define", "else", "end", "if", "range", "template", "with":
		return false
	}
	return true
}

// templateFuncNames are the functions Prometheus's alert templates offer
// (humanize, query, first, label, ...). Only the names matter for parsing;
// building a text/template FuncMap for every annotation costs more than
// parsing it, so the names are read once from an expander.
var templateFuncNames = sync.OnceValue(func() map[string]any {
	data := template.AlertTemplateData(map[string]string{}, map[string]string{}, "", promql.Sample{})
	exp := template.NewTemplateExpander(context.Background(), "", "probe", data, model.Time(0), nil, nil, nil)
	names := map[string]any{}
	fm := reflect.ValueOf(exp).Elem().FieldByName("funcMap")
	if fm.IsValid() && fm.Kind() == reflect.Map {
		for _, k := range fm.MapKeys() {
			names[k.String()] = struct{}{}
		}
	}
	return names
})

// textTemplateBuiltins are text/template's own functions.
var textTemplateBuiltins = func() map[string]any {
	m := map[string]any{}
	for _, n := range []string{"and", "call", "html", "index", "slice", "js", "len", "not", "or",
		"print", "printf", "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne"} {
		m[n] = struct{}{} // the parser only asks whether a name is defined (non-nil)
	}
	return m
}()
