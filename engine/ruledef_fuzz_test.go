package engine

import (
	"context"
	"log/slog"
	"math"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
)

// rangeOverNumber matches {{range N}}: text/template loops N times, and a
// fuzzed N would spend the run building one enormous string (Prometheus
// has no bound either; rule templates are the operator's).
var rangeOverNumber = regexp.MustCompile(`range\s*[-+(]?\s*[0-9]`)

// FuzzExpandTemplate expands an arbitrary annotation template over an
// arbitrary sample with paged's expander (ruledef.go) and with
// Prometheus's own AlertingRule.Eval, and wants the same text: paged
// promises Prometheus's expansion, static text and errors included. It
// must never panic, and a failing template must read
// "<error expanding template: ...>" and be logged.
func FuzzExpandTemplate(f *testing.F) {
	for _, s := range []string{
		"KV cache of {{ $labels.instance }} at {{ $value | humanizePercentage }}",
		"plain text, no action",
		"{{ $externalLabels.cluster }} {{ $externalURL }}",
		"{{ with query \"up\" }}{{ . | first | value }}{{ end }}",
		"{{ range query \"up\" }}{{ .Labels.q }}{{ end }}",
		"{{ $labels.missing.deeper }}",
		"{{ .Foo }}",
		"{{",
		"}} {{ end }}",
		"{{ template \"nope\" }}",
		"{{ reReplaceAll \"(\" \"\" \"x\" }}",
		"{{ humanizeDuration \"abc\" }}",
		"{{ $value | humanize1024 }} {{ $value | humanizeTimestamp }}",
		"{{ toTime \"x\" }}",
		"{{ index $labels \"instance\" | title | toUpper }}",
		"<error expanding template: fake>",
		"{{/* comment */}}",
		"\xff{{ $labels.instance }}\x00",
	} {
		f.Add(s, "vllm-0:8000", "job", "vllm", 0.97)
	}
	f.Add("{{ $value }}", "", "", "", math.NaN())
	f.Add("{{ $value }}", "a", "instance", "b", math.Inf(-1))

	p := parser.NewParser(parser.Options{})
	expr, err := p.ParseExpr("up")
	if err != nil {
		f.Fatal(err)
	}
	extURL := &url.URL{Scheme: "http", Host: "paged.example:9095"}
	ext := labels.FromStrings("cluster", "prod")
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text, instance, key, value string, v float64) {
		if len(text) > 2000 || rangeOverNumber.MatchString(text) {
			t.Skip("an unbounded loop, not a bug")
		}
		if key == "instance" || key == "" {
			key = "k"
		}
		metric := labels.FromStrings("instance", instance, key, value)
		query := func(_ context.Context, q string, _ time.Time) (promql.Vector, error) {
			return promql.Vector{{Metric: metric, F: v, T: ts.UnixMilli()}}, nil
		}
		var logged []string
		x := &expander{
			query: query, externalURL: extURL.String(), extURL: extURL,
			logf: func(msg string, _ ...any) { logged = append(logged, msg) },
		}
		def := &ruleDef{name: "Fuzz", annotations: labels.FromStrings("summary", text), ext: ext.Map()}
		got := x.expand(context.Background(), def, sampleRecord{metric: metric, f: v, ts: ts}).Get("summary")

		rule := promrules.NewAlertingRule("Fuzz", expr, 0, 0, labels.EmptyLabels(), labels.FromStrings("summary", text), ext, extURL.String(), false, slog.New(slog.DiscardHandler))
		if _, err := rule.Eval(context.Background(), 0, ts, query, extURL, 0); err != nil {
			t.Fatalf("Prometheus's Eval: %v", err)
		}
		active := rule.ActiveAlerts()
		if len(active) != 1 {
			t.Fatalf("Prometheus made %d alerts, want 1", len(active))
		}
		if want := active[0].Annotations.Get("summary"); got != want {
			t.Errorf("template %q:\npaged      %q\nPrometheus %q", text, got, want)
		}
		if !strings.Contains(text, "{{") && got != text {
			t.Errorf("static text %q came out as %q", text, got)
		}
		isErr := strings.HasPrefix(got, "<error expanding template: ") && strings.HasSuffix(got, ">")
		if len(logged) > 0 && !isErr {
			t.Errorf("an error was logged but the text is %q", got)
		}
		if len(logged) == 0 && isErr && !strings.Contains(text, "<error expanding template") {
			t.Errorf("the text reads as an error but none was logged: %q", got)
		}
	})
}

// Templates that fail, at parse or at execution, panicking functions
// included, read "<error expanding template: ...>" and are logged.
func TestExpandTemplateErrors(t *testing.T) {
	for _, text := range []string{"{{", "{{ .Foo }}", "{{ template \"nope\" }}", "{{ define \"x\" }}{{ template \"x\" }}{{ end }}{{ template \"x\" }}", "{{ reReplaceAll \"(\" \"\" \"x\" }}", "{{ humanizeDuration \"abc\" }}"} {
		var logged int
		x := &expander{
			query:       func(context.Context, string, time.Time) (promql.Vector, error) { return nil, nil },
			externalURL: "http://paged.example", extURL: &url.URL{Scheme: "http", Host: "paged.example"},
			logf: func(string, ...any) { logged++ },
		}
		def := &ruleDef{name: "E", annotations: labels.FromStrings("summary", text)}
		got := x.expand(context.Background(), def, sampleRecord{metric: labels.FromStrings("a", "b"), ts: time.Now()}).Get("summary")
		if !strings.HasPrefix(got, "<error expanding template: ") || !strings.HasSuffix(got, ">") || logged != 1 {
			t.Errorf("%q expanded to %q with %d log lines, want one <error expanding template: ...> and one log line", text, got, logged)
		}
	}
}
