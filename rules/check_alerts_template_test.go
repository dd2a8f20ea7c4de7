package rules

import (
	"testing"
	"text/template/parse"
)

// templateCases are templates on the edge of what templateCache.parses answers
// without a whole parse: actions that depend on their neighbours.
var templateCases = []string{
	"{{ $labels.instance }} is down: {{ $value | humanize }}",
	"{{$value}}{{$labels}}{{ $externalURL }}{{ $externalLabels.cluster }}",
	"{{- $value -}} and {{- $labels.job }}",
	"{{ printf \"%.2f\" $value }}%",
	"{{ if gt $value 1.0 }}high{{ end }}",
	"{{ if gt $value 1.0 }}high",
	"{{ end }}",
	"{{ else }}",
	"{{ $x := $value }}{{ $x }}",
	"{{ $x }}",
	"{{ $x := 1 }}",
	"{{ printf \"}}\" }}",
	"{{ printf \"{{\" }}",
	"{{ \"unterminated }} {{ $value }}",
	"{{ `raw }}` }}",
	"{{/* comment }} */}}",
	"{{- /* comment */ -}}",
	"{{ $value | nosuchfunc }}",
	"{{ $nosuchvar }}",
	"{{}}",
	"{{ ( $value }}",
	"{{ $value ) }}",
	"{{ $value",
	"}} {{ $value }} }}",
	"{{{ $value }}",
	"{{ $value }}}",
	"{{ range $labels }}{{ . }}{{ end }}",
	"{{ range $labels }}{{ break }}{{ end }}",
	"{{ break }}",
	"{{ define \"x\" }}y{{ end }}",
	"{{ template \"x\" }}",
	"{{-3}}",
	"{{-if}}",
	"{{ 'a' }}",
	"{{ '}' }}",
	"{{ nil }}",
	"{{ . }}",
	"{{ $ }}",
	"{{ $labels.a.b }}",
	"{{ index $labels \"instance\" }}",
	"{{ with $labels }}{{ .instance }}{{ end }}",
	"{{\n$value\n}}",
}

func parsesWhole(s string) bool {
	_, err := parse.Parse("t", templateDefs+s, "", "", templateFuncNames(), textTemplateBuiltins)
	return err == nil
}

// A template the cache accepts parses whole, and the common ones are
// accepted without a whole parse.
func TestTemplateParses(t *testing.T) {
	c := templateCache{}
	for _, s := range templateCases {
		if c.parses(s) && !parsesWhole(s) {
			t.Errorf("parses(%q) = true, but it does not parse", s)
		}
	}
	for _, s := range templateCases[:4] {
		if !c.parses(s) {
			t.Errorf("parses(%q) = false, want true", s)
		}
	}
	if (templateCache{}).parses("{{ if true }}x{{ end }}") {
		t.Error("a template with a block was accepted without a whole parse")
	}
	var none templateCache
	if none.parses("{{ $value }}") {
		t.Error("without a cache, every template must be parsed whole")
	}
}

func FuzzTemplateParses(f *testing.F) {
	for _, s := range templateCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if (templateCache{}).parses(s) && !parsesWhole(s) {
			t.Errorf("parses(%q) = true, but it does not parse", s)
		}
	})
}

// The loader itself refuses a broken template, as Prometheus does, so that
// check-config, paged test and the engine refuse the file; lint can still
// be told to leave it out.
func TestLoaderRefusesBrokenTemplate(t *testing.T) {
	src := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      summary: |\n        ok {{ $value }}\n        {{ .Foo \n  - alert: B\n    expr: up == 0\n    annotations: {summary: '{{ $value }}'}\n"
	f := ParseFile("r.yaml", []byte(src), ParseOptions{})
	errs := f.Errors()
	if len(errs) != 1 {
		t.Fatalf("errors = %v, want one", errs)
	}
	want := `r.yaml:9:9: error [alerts/template] annotation "summary": template does not parse: unclosed action`
	if errs[0].Error() != want {
		t.Errorf("error = %q, want %q", errs[0], want)
	}
	if p := f.Problems[0]; p.Group != "g" || p.Rule != "A" {
		t.Errorf("problem belongs to group %q rule %q, want g, A", p.Group, p.Rule)
	}
	if n := len(f.RuleGroups().Groups[0].Rules); n != 2 {
		t.Errorf("%d rules loaded, want both (the broken one with its problem)", n)
	}
	cfg := DefaultConfig()
	cfg.Disabled = []string{"alerts/template"}
	for _, fd := range Lint([]*File{f}, cfg) {
		if fd.Check == CheckAlertsTemplate {
			t.Errorf("disabled check reported: %s", fd)
		}
	}
}

// Wherever the parser stops, the place reported lies inside the template.
func FuzzTemplateErrorAt(f *testing.F) {
	for _, s := range templateCases {
		f.Add(s)
	}
	f.Add("a\n{{ if }}\nb")
	f.Add("{{ $labels }}\n\n{{ $label")
	f.Fuzz(func(t *testing.T, s string) {
		_, err := parse.Parse(templateName, templateDefs+s, "", "", templateFuncNames(), textTemplateBuiltins)
		if err == nil {
			return
		}
		msg, start, end := templateErrorAt(s, err)
		if msg == "" {
			t.Errorf("no reason for %q (%v)", s, err)
		}
		if start != -1 && (start < 0 || start >= end || end > len(s)) {
			t.Errorf("templateErrorAt(%q) = [%d, %d), outside the template of %d bytes", s, start, end, len(s))
		}
	})
}

// A group's label is expanded with each alerting rule's, but a broken one
// is one problem, reported once, at the label.
func TestLoaderGroupLabelTemplateOnce(t *testing.T) {
	src := "groups:\n- name: g\n  labels: {team: '{{ .Team'}\n  rules:\n  - {alert: A, expr: up == 0}\n  - {alert: B, expr: up == 0}\n"
	errs := ParseFile("r.yaml", []byte(src), ParseOptions{}).Errors()
	want := `r.yaml:3:19: error [alerts/template] group label "team": template does not parse: unclosed action`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("errors = %v, want [%s]", errs, want)
	}
}
