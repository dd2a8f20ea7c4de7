package rules

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/template/parse"
	"unicode"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/template"
)

// Templates in the labels and annotations of an alerting rule must parse
// with Prometheus's template functions and use only the variables
// Prometheus defines ($labels, $externalLabels, $externalURL, $value), or
// Prometheus refuses the file (rulefmt's testTemplateParsing) and every
// page of the rule says "<error expanding template ...>". The loader
// reports it, not a lint pass (walker.templates), so that whatever reads a
// rule file refuses what Prometheus refuses: lint, check-config, paged
// test, and the engine at start and reload. The check is listed to be
// documented, re-weighted or disabled in lint.
var checkAlertsTemplate = &Check{
	Name:     CheckAlertsTemplate,
	Help:     "Label and annotation templates parse and use only known variables and functions.",
	Severity: Error,
}

// The variables Prometheus defines before every alert template. They hold
// no newline: a line number in a parse error is the template's own.
const templateDefs = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"

// templateName is the name templates are parsed under; Prometheus uses
// "__alert_" and the alert's name, which only shows in error messages, and
// an alert's name may hold anything, ": " included.
const templateName = "alert"

var (
	templateErrRe   = regexp.MustCompile(`(?s)^template: ` + templateName + `:(\d+): (.*)$`)
	templateTokenRe = regexp.MustCompile(`(?:undefined variable|function) "([^"]+)"`)
	// The lexer names the line an action or comment left open started on
	// when it is not the line it stopped on.
	templateUnclosedRe = regexp.MustCompile(`^unclosed (action|comment)(?: started at ` + templateName + `:(\d+))?$`)
)

// templates checks the label and annotation templates of an alerting
// rule.
func (w *walker) templates(g *Group, r *Rule) {
	for _, kv := range r.Labels {
		w.template(g, r, "label", kv)
	}
	for _, kv := range r.Annotations {
		w.template(g, r, "annotation", kv)
	}
}

// groupTemplates checks the labels of a group with an alerting rule:
// Prometheus adds them to each rule's labels and expands them alike.
func (w *walker) groupTemplates(g *Group) {
	for _, r := range g.Rules {
		if r.Alert != nil {
			for _, kv := range g.Labels {
				w.template(g, nil, "group label", kv)
			}
			return
		}
	}
}

// template reports the template of one label or annotation if it does
// not parse; r is nil for a group's label.
func (w *walker) template(g *Group, r *Rule, what string, kv KV) {
	s := kv.Value.Value
	if !strings.Contains(s, "{{") {
		return // text alone always parses
	}
	if w.tmpl == nil {
		w.tmpl = w.opts.templates
		if w.tmpl == nil {
			w.tmpl = templateCache{}
		}
	}
	if w.tmpl.parses(s) {
		return
	}
	_, err := parse.Parse(templateName, templateDefs+s, "", "", templateFuncNames(), textTemplateBuiltins)
	if err == nil {
		return
	}
	msg, start, end := templateErrorAt(s, err)
	rng := w.f.NodeRange(kv.Value.Node)
	if start >= 0 {
		rng = w.f.ValueRange(kv.Value.Node, start, end)
	}
	w.f.Problems = append(w.f.Problems, Finding{
		Path: w.f.Path, Range: rng, Severity: Error, Check: CheckAlertsTemplate,
		Message: fmt.Sprintf("%s %q: template does not parse: %s", what, kv.Key.Value, msg),
		Group:   g.Name.Value, Rule: ruleName(r),
	})
}

// TemplateError parses text as an alert label or annotation template, as
// Prometheus does before it loads a rule, and returns why it does not
// parse, or nil.
func TemplateError(text string) error {
	if !strings.Contains(text, "{{") {
		return nil
	}
	_, err := parse.Parse(templateName, templateDefs+text, "", "", templateFuncNames(), textTemplateBuiltins)
	if err == nil {
		return nil
	}
	msg, _, _ := templateErrorAt(text, err)
	return errors.New(msg)
}

// templateErrorAt reads the reason out of the error of parsing template s
// and the byte offsets [start, end) in s it is about: the unknown variable
// or function, the {{ left open, or the line the parser stopped on. start
// is -1 when nothing narrower than the whole value can be told.
func templateErrorAt(s string, err error) (msg string, start, end int) {
	m := templateErrRe.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error(), -1, -1
	}
	msg = m[2]
	line, _ := strconv.Atoi(m[1])
	ls, le := lineSpan(s, line)
	if t := templateTokenRe.FindStringSubmatch(msg); t != nil {
		if i := indexToken(s[ls:le], t[1]); i >= 0 {
			return msg, ls + i, ls + i + len(t[1])
		}
		if i := indexToken(s, t[1]); i >= 0 {
			return msg, i, i + len(t[1])
		}
	}
	if u := templateUnclosedRe.FindStringSubmatch(msg); u != nil {
		// "unclosed action started at alert:2": the line of its {{,
		// which the caret shows.
		msg = "unclosed " + u[1]
		if u[2] != "" {
			n, _ := strconv.Atoi(u[2])
			ls, le = lineSpan(s, n)
		} else {
			ls, le = 0, len(s)
		}
		if i := strings.LastIndex(s[ls:le], "{{"); i >= 0 {
			return msg, ls + i, ls + i + 2
		}
		if i := strings.LastIndex(s, "{{"); i >= 0 {
			return msg, i, i + 2
		}
	}
	if strings.Contains(s, "\n") && ls < le {
		// A template of several lines: the line the parser stopped on.
		for ls < le && (s[ls] == ' ' || s[ls] == '\t') {
			ls++
		}
		return msg, ls, le
	}
	return msg, -1, -1
}

// lineSpan is the byte span of line n (1-based) of s, without its newline;
// the last line when s has fewer.
func lineSpan(s string, n int) (start, end int) {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(s[start:], '\n')
		if j < 0 {
			break
		}
		start += j + 1
	}
	end = strings.IndexByte(s[start:], '\n')
	if end < 0 {
		return start, len(s)
	}
	return start, start + end
}

// indexToken finds tok in s where it is not the start of a longer name
// ($label, not the start of $labels).
func indexToken(s, tok string) int {
	for off := 0; ; {
		i := strings.Index(s[off:], tok)
		if i < 0 {
			return -1
		}
		i += off
		after := i + len(tok)
		if after >= len(s) || !isNameByte(s[after]) {
			return i
		}
		off = i + 1
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// templateCache answers whether a template parses without parsing it
// whole when it is made of simple actions, each parsed once per cache. A
// lint run keeps one per worker (ParseOptions.templates); a nil cache
// knows nothing.
type templateCache map[string]bool

// parses reports whether a template is known to parse, without
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
func (c templateCache) parses(s string) bool {
	if c == nil {
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
		if !simpleAction(action) || !c.actionParses(action) {
			return false
		}
		s = s[j+2:]
	}
}

// actionParses parses one simple action, once per cache.
func (c templateCache) actionParses(action string) bool {
	ok, seen := c[action]
	if !seen {
		_, err := parse.Parse("action", templateDefs+"{{"+action+"}}", "", "", templateFuncNames(), textTemplateBuiltins)
		ok = err == nil
		c[action] = ok
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

func ruleName(r *Rule) string {
	if r == nil {
		return ""
	}
	return r.Name()
}
