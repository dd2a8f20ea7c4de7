package rules

import (
	"testing"
	"text/template/parse"
)

// templateCases are templates on the edge of what templateParses answers
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

// A template templateParses accepts parses whole, and the common ones are
// accepted without a whole parse.
func TestTemplateParses(t *testing.T) {
	w := newWorker()
	for _, s := range templateCases {
		if w.templateParses(s) && !parsesWhole(s) {
			t.Errorf("templateParses(%q) = true, but it does not parse", s)
		}
	}
	for _, s := range templateCases[:4] {
		if !w.templateParses(s) {
			t.Errorf("templateParses(%q) = false, want true", s)
		}
	}
	if newWorker().templateParses("{{ if true }}x{{ end }}") {
		t.Error("a template with a block was accepted without a whole parse")
	}
	var none *worker
	if none.templateParses("{{ $value }}") {
		t.Error("without a worker, every template must be parsed whole")
	}
}

func FuzzTemplateParses(f *testing.F) {
	for _, s := range templateCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if newWorker().templateParses(s) && !parsesWhole(s) {
			t.Errorf("templateParses(%q) = true, but it does not parse", s)
		}
	})
}
