package packs_test

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/packs"
	"github.com/pagedhq/paged/rules"
)

// The alert counts the README's pack table promises.
var wantAlerts = map[string]int{"vllm": 24, "vllm-features": 5, "vllm-v0": 10, "tgi": 10, "sglang": 18, "triton": 7, "dcgm": 14, "inference-gateway": 9}

// Every built-in pack loads, is named after its directory, states the
// versions it covers, and every alert carries the pack's server label.
func TestBuiltin(t *testing.T) {
	ps, err := packs.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
		if p.Dir != "packs/"+p.Name || !p.Builtin {
			t.Errorf("%s: dir %q builtin %v", p.Name, p.Dir, p.Builtin)
		}
		if p.Versions == "" || p.Description == "" || p.Server == "" {
			t.Errorf("%s: versions %q, description %q, server %q: pack.yaml must state them", p.Name, p.Versions, p.Description, p.Server)
		}
		if got := len(p.Alerts()); got != wantAlerts[p.Name] {
			t.Errorf("%s: %d alerts, want %d", p.Name, got, wantAlerts[p.Name])
		}
		r, err := p.Apply(packs.Overrides{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, g := range r.File.Groups {
			for _, rule := range g.Rules {
				if v, _ := rule.Label("server"); rule.IsAlert() && v.Value != p.Server {
					t.Errorf("%s: %s has server=%q, pack.yaml says %q", p.Name, rule.Name(), v.Value, p.Server)
				}
			}
		}
	}
	want := []string{"dcgm", "inference-gateway", "sglang", "tgi", "triton", "vllm", "vllm-features", "vllm-v0"}
	if !slices.Equal(names, want) {
		t.Errorf("built-in packs %v, want %v", names, want)
	}
}

// Without overrides a pack is its file as written, under a header.
func TestApplyNoOverrides(t *testing.T) {
	p := lookup(t, "vllm")
	r, err := p.Apply(packs.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile("../examples/packs/vllm/vllm.rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(string(r.Content), "\n\n")
	if !ok || body != string(orig) {
		t.Fatalf("content is not the pack file under a header:\n%.400s", r.Content)
	}
	if head != "# Rule pack vllm (built into paged; vllm versions 0.9+): vLLM with the V1 engine.\n"+
		"# VLLMInterTokenLatencyHigh reads vllm:inter_token_latency_seconds (0.11+, PR\n"+
		"# #24110) or, on 0.9 and 0.10, vllm:time_per_output_token_seconds (hidden from\n"+
		"# 0.12 by PR #29330, removed by PR #32661 after 0.14.0rc0).\n"+
		"# VLLMEngineAsleepWithRequestsWaiting needs a release with PR #27867\n"+
		"# (vllm:engine_sleep_state outside dev mode; after 0.11.0, first release not\n"+
		"# established). VLLMRequestsFinishedWithError needs a release with\n"+
		"# finished_reason=\"error\". Speculative decoding and P/D alerts are in the\n"+
		"# vllm-features pack. Servers on the legacy V0 engine need the vllm-v0 pack.\n"+
		"# No overrides." {
		t.Errorf("header %q", head)
	}
	if r.Source != "pack:vllm" || r.Alerts() != wantAlerts["vllm"] {
		t.Errorf("source %q, alerts %d", r.Source, r.Alerts())
	}
}

// Every override key at once, checked on the parsed result rule by rule
// against the pack as written.
func TestApplyEveryOverride(t *testing.T) {
	p := lookup(t, "vllm")
	o := packs.Overrides{
		Selector: `{job="vllm-prod", namespace=~"llm-.*"}`,
		Set:      map[string]float64{"VLLMKVCacheSaturated": 0.9, "VLLMTimeToFirstTokenHigh": 3},
		For:      map[string]model.Duration{"VLLMKVCacheSaturated": model.Duration(5 * time.Minute)},
		Severity: map[string]string{"VLLMQueueBacklog": "critical"},
		Labels:   map[string]string{"team": "llm-platform"},
		Disable:  []string{"VLLMKVCacheOverprovisioned"},
	}
	r, err := p.Apply(o)
	if err != nil {
		t.Fatal(err)
	}
	orig := ruleMap(t, mustApply(t, p, packs.Overrides{}).File)
	got := ruleMap(t, r.File)
	if _, ok := got["VLLMKVCacheOverprovisioned"]; ok || len(got) != wantAlerts["vllm"]-1 {
		t.Errorf("disabled alert still there, or %d alerts instead of %d", len(got), wantAlerts["vllm"]-1)
	}
	pp := parser.NewParser(parser.Options{})
	for name, rule := range got {
		was := orig[name]
		expr, err := pp.ParseExpr(rule.Expr.Value)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Every selector has the new matchers, none the old job matcher,
		// and keeps its other matchers.
		before := selectors(t, was.Expr.Value)
		after := selectors(t, rule.Expr.Value)
		if len(before) != len(after) || len(after) == 0 {
			t.Fatalf("%s: %d selectors before, %d after", name, len(before), len(after))
		}
		for i, vs := range after {
			if !hasMatcher(vs, labels.MatchEqual, "job", "vllm-prod") || !hasMatcher(vs, labels.MatchRegexp, "namespace", "llm-.*") {
				t.Errorf("%s: selector %s lacks the override's matchers", name, vs)
			}
			if hasMatcher(vs, labels.MatchEqual, "job", "vllm") {
				t.Errorf("%s: selector %s keeps job=\"vllm\"", name, vs)
			}
			for _, m := range before[i].LabelMatchers {
				if m.Name != "job" && !hasMatcher(vs, m.Type, m.Name, m.Value) {
					t.Errorf("%s: selector %s lost %s", name, vs, m)
				}
			}
		}
		th := rules.SplitThreshold(expr)
		wantTh := rules.SplitThreshold(parse(t, was.Expr.Value)).Value
		if v, ok := o.Set[name]; ok {
			wantTh = v
		}
		if th == nil || th.Value != wantTh {
			t.Errorf("%s: threshold %v, want %v", name, th, wantTh)
		}
		wantFor := was.For.Value
		if d, ok := o.For[name]; ok {
			wantFor = d
		}
		if rule.For == nil || rule.For.Value != wantFor {
			t.Errorf("%s: for %v, want %v", name, rule.For, wantFor)
		}
		sev, _ := rule.Label("severity")
		wasSev, _ := was.Label("severity")
		wantSev := wasSev.Value
		if s, ok := o.Severity[name]; ok {
			wantSev = s
		}
		team, _ := rule.Label("team")
		server, _ := rule.Label("server")
		if sev.Value != wantSev || team.Value != "llm-platform" || server.Value != "vllm" {
			t.Errorf("%s: severity %q (want %q), team %q, server %q", name, sev.Value, wantSev, team.Value, server.Value)
		}
		for _, a := range was.Annotations {
			if v, _ := rule.Annotation(a.Key.Value); v.Value != a.Value.Value {
				t.Errorf("%s: annotation %s changed", name, a.Key.Value)
			}
		}
	}
	for _, want := range []string{
		`Overrides: selector {job="vllm-prod", namespace=~"llm-.*"}; set VLLMKVCacheSaturated=0.9, VLLMTimeToFirstTokenHigh=3; for VLLMKVCacheSaturated=5m; severity VLLMQueueBacklog=critical; labels team=llm-platform; disable VLLMKVCacheOverprovisioned.`,
		`absent(up{job="vllm-prod",namespace=~"llm-.*"}) == 1`,
	} {
		// Header lines are wrapped: read them as one.
		if !strings.Contains(strings.ReplaceAll(string(r.Content), "\n# ", " "), want) {
			t.Errorf("content lacks %q", want)
		}
	}
}

// The selector reaches every vector selector, replaces the matchers of the
// labels it names and keeps the rest.
func TestSelectorRewrite(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.rules.yaml", `groups:
  - name: g
    rules:
      - alert: A
        expr: absent(up{job=~"tgi|text-generation"}) == 1
      - alert: B
        expr: max_over_time(rate(x_total{job="a", code="5xx"}[5m])[1h:1m]) > 2 or on (job) label_replace(y, "a", "$1", "b", "(.*)") < 1
      - record: job:z:sum
        expr: sum by (job) (z{job!="canary"})
`)
	p, err := packs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := mustApply(t, p, packs.Overrides{Selector: `{job="prod", job!="canary", cluster="eu"}`})
	want := map[string]string{
		"A":         `absent(up{cluster="eu",job!="canary",job="prod"}) == 1`,
		"B":         `max_over_time(rate(x_total{cluster="eu",code="5xx",job!="canary",job="prod"}[5m])[1h:1m]) > 2 or on (job) label_replace(y{cluster="eu",job!="canary",job="prod"}, "a", "$1", "b", "(.*)") < 1`,
		"job:z:sum": `sum by (job) (z{cluster="eu",job!="canary",job="prod"})`,
	}
	for name, rule := range ruleMap(t, r.File) {
		if got := canonical(t, rule.Expr.Value); got != want[name] {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want[name])
		}
	}
}

// Every bad override is reported, each naming its key and alert, with a
// suggestion for a typo; nothing is returned.
func TestApplyErrors(t *testing.T) {
	p := lookup(t, "vllm")
	_, err := p.Apply(packs.Overrides{
		Selector: `{job="vllm-prod"`,
		Set:      map[string]float64{"VLLMKVCacheSaturatd": 0.9, "VLLMQueueBacklog": 5},
		For:      map[string]model.Duration{"Nope": model.Duration(time.Minute)},
		Severity: map[string]string{"VLLMPreemptions": "page"},
		Labels:   map[string]string{"alertname": "x", "__x": "y", "team": "{{ .Foo "},
		Disable:  []string{"VLLMQueueBacklog", "VLLMQueueBacklog"},
	})
	var es packs.Errors
	if !errors.As(err, &es) {
		t.Fatalf("err = %v, want packs.Errors", err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Error())
	}
	want := []string{
		`selector: invalid selector: unexpected end of input inside braces (want label matchers such as {job="vllm-prod"})`,
		`set.VLLMKVCacheSaturatd: pack vllm has no alert VLLMKVCacheSaturatd: did you mean VLLMKVCacheSaturated?`,
		`set.VLLMQueueBacklog: VLLMQueueBacklog is disabled (disable[0]): remove one of the two`,
		`for.Nope: pack vllm has no alert Nope (its alerts: VLLMKVCacheSaturated, `,
		`severity.VLLMPreemptions: severity "page": want one of critical, warning, info`,
		`labels.__x: invalid label name`,
		`labels.alertname: alertname is the alert's name and cannot be set`,
		`labels.team: label template does not parse: unclosed action`,
		`disable[1]: VLLMQueueBacklog is listed twice`,
	}
	if len(got) != len(want) {
		t.Fatalf("errors:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if es[0].Offset != 16 {
		t.Errorf("selector error offset %d, want 16 (the end of the input)", es[0].Offset)
	}
}

// A threshold for an alert whose expression has no number to compare
// with is an error naming the alert and its expression.
func TestSetWithoutPlace(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.rules.yaml", "groups:\n  - name: g\n    rules:\n      - alert: Ratio\n        expr: rate(a_total[5m]) > rate(b_total[5m])\n      - alert: Bool\n        expr: up == bool 0\n")
	p, err := packs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Apply(packs.Overrides{Set: map[string]float64{"Ratio": 1, "Bool": 1}})
	var es packs.Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("err = %v", err)
	}
	for _, e := range es {
		if e.Key != packs.KeySet || !strings.Contains(e.Msg, "has no threshold to set: its expression has no top-level comparison with a number") {
			t.Errorf("%+v", e)
		}
	}
	if !strings.Contains(err.Error(), "set.Ratio: Ratio has no threshold to set: its expression has no top-level comparison with a number (rate(a_total[5m]) > rate(b_total[5m]))") {
		t.Errorf("err = %v", err)
	}
}

// Selectors that are not label matchers are refused, with where in the
// text the problem is.
func TestParseSelector(t *testing.T) {
	for in, want := range map[string]int{
		`job="x"`:               3,
		`up{job="x"}`:           0,
		`{}`:                    0,
		` {}`:                   1,
		`{__name__="up"}`:       1,
		`{job="a"} or {b="c"}`:  10,
		``:                      0,
		`{job=~"("}`:            1,
		"{job=\"a\"}\x00":       9,
		`{job="a"`:              8,
		`{job="a"}`:             -1,
		`{"job.name"="a"}`:      -1,
		` {job="a", b!~"x"} `:   -1,
		`{job="vllm", job!=""}`: -1,
	} {
		ms, err := packs.ParseSelector(in)
		if want < 0 {
			if err != nil || len(ms) == 0 {
				t.Errorf("%q: %v, %v", in, ms, err)
			}
			continue
		}
		var e *packs.Error
		if !errors.As(err, &e) {
			t.Errorf("%q: accepted (%v)", in, ms)
			continue
		}
		if e.Offset != want {
			t.Errorf("%q: offset %d, want %d (%s)", in, e.Offset, want, e.Msg)
		}
	}
}

// Runbook links: relative ones get the suffix and the base, absolute ones
// stay.
func TestRunbookLinks(t *testing.T) {
	p := lookup(t, "vllm")
	base := mustURL(t, "https://runbooks.example.com/llm/")
	r := mustApply(t, p, packs.Overrides{RunbookBaseURL: base, RunbookSuffix: ".html"})
	v, _ := ruleMap(t, r.File)["VLLMKVCacheSaturated"].Annotation("runbook_url")
	if v.Value != "https://runbooks.example.com/llm/vllm/VLLMKVCacheSaturated.html" {
		t.Errorf("runbook_url %q", v.Value)
	}
	if got := packs.RunbookLink("https://wiki/x.md", packs.Overrides{RunbookBaseURL: base, RunbookSuffix: ".html"}); got != "https://wiki/x.md" {
		t.Errorf("absolute link changed to %q", got)
	}
}

// Pack directories: without pack.yaml, every *.rules.yaml; problems in
// pack.yaml and in the rule files with their positions.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.rules.yaml", "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n")
	write(t, dir, "notes.yaml", "not: rules\n")
	p, err := packs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != filepath.Base(dir) || p.Builtin || !slices.Equal(p.Alerts(), []string{"A"}) {
		t.Errorf("pack %+v", p)
	}

	bad := t.TempDir()
	write(t, bad, "pack.yaml", "name: mine\nserver: [x]\nrule: [a.rules.yaml]\n")
	_, err = packs.Open(bad)
	wantLoadError(t, err, []string{
		"pack.yaml:2:9: error [pack/metadata] server must be a string",
		"pack.yaml:3:1: error [pack/metadata] unknown key rule",
		"pack.yaml:1:1: error [pack/metadata] rules is required",
	})

	broken := t.TempDir()
	write(t, broken, "pack.yaml", "name: mine\nrules: [a.rules.yaml, missing.rules.yaml]\n")
	write(t, broken, "a.rules.yaml", "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: sum(up\n")
	_, err = packs.Open(broken)
	wantLoadError(t, err, []string{"a.rules.yaml:5:18: error [promql/syntax] could not parse expression: unclosed left parenthesis"})
	if err == nil || !strings.Contains(err.Error(), "rule file missing.rules.yaml: no such file or directory") {
		t.Errorf("missing rule file: %v", err)
	}

	if _, err := packs.Open(filepath.Join(dir, "a.rules.yaml")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file: %v", err)
	}
	if _, err := packs.Open(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("missing directory: %v", err)
	}
	if _, err := packs.Lookup("vlm"); err == nil || !strings.Contains(err.Error(), `no built-in pack "vlm": did you mean vllm?`) {
		t.Errorf("Lookup(vlm): %v", err)
	}
}

func wantLoadError(t *testing.T, err error, want []string) {
	t.Helper()
	var le *packs.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a LoadError", err)
	}
	var got []string
	for _, f := range le.Findings {
		got = append(got, f.String())
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasSuffix(g, w) || strings.Contains(g, "/"+w) }) {
			t.Errorf("no finding %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// Hostile overrides never panic and never produce rules that do not load.
func FuzzApply(f *testing.F) {
	f.Add(`{job="vllm-prod"}`, 0.9, "VLLMKVCacheSaturated", "critical", "team", "x")
	f.Add(`{job=~"(",}`, 1e308, "", "", "", "")
	f.Add("{\"\xff\"=\"a\"}", -0.0, "VLLMTargetMissing", "info", "le", "\x00")
	p, err := packs.Lookup("vllm")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sel string, v float64, alert, sev, lname, lvalue string) {
		o := packs.Overrides{Selector: sel, Set: map[string]float64{alert: v}, Severity: map[string]string{alert: sev}, Labels: map[string]string{lname: lvalue}}
		r, err := p.Apply(o)
		if err != nil {
			return
		}
		if fe := r.File.Errors(); len(fe) > 0 {
			t.Fatalf("rewritten pack does not load: %v", fe)
		}
	})
}

func lookup(t *testing.T, name string) *packs.Pack {
	t.Helper()
	p, err := packs.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustApply(t *testing.T, p *packs.Pack, o packs.Overrides) *packs.Rendered {
	t.Helper()
	r, err := p.Apply(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ruleMap(t *testing.T, f *rules.File) map[string]*rules.Rule {
	t.Helper()
	out := map[string]*rules.Rule{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out[r.Name()] = r
		}
	}
	return out
}

func parse(t *testing.T, s string) parser.Expr {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func canonical(t *testing.T, s string) string {
	t.Helper()
	e := parse(t, s)
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			slices.SortFunc(vs.LabelMatchers, func(a, b *labels.Matcher) int { return strings.Compare(a.String(), b.String()) })
		}
		return nil
	})
	return e.String()
}

func selectors(t *testing.T, s string) []*parser.VectorSelector {
	t.Helper()
	var out []*parser.VectorSelector
	parser.Inspect(parse(t, s), func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out
}

func hasMatcher(vs *parser.VectorSelector, typ labels.MatchType, name, value string) bool {
	return slices.ContainsFunc(vs.LabelMatchers, func(m *labels.Matcher) bool {
		return m.Type == typ && m.Name == name && m.Value == value
	})
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
