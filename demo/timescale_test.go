package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

func TestScaleExpr(t *testing.T) {
	ts := newTimeScale(60, 4*time.Second, time.Second)
	for _, tc := range []struct{ in, want string }{
		{`rate(x_total[5m])`, `rate(x_total[5s])`},
		{`rate(x_total[1h])`, `rate(x_total[1m])`},
		// The floor keeps a few scrapes in a window.
		{`rate(x_total[1m])`, `rate(x_total[4s])`},
		{`max_over_time(x[30m:1m])`, `max_over_time(x[30s:1s])`},
		{`max_over_time(x[30m:])`, `max_over_time(x[30s:])`},
		{`x offset 1h`, `x offset 1m`},
		{`rate(x_total[5m] offset 1d)`, `rate(x_total[5s] offset 24m)`},
		{`x offset -2h`, `x offset -2m`},
		{`histogram_quantile(0.99, sum by (le) (rate(h_bucket{job="vllm"}[5m]))) > 5`, `histogram_quantile(0.99, sum by (le) (rate(h_bucket{job="vllm"}[5s]))) > 5`},
		// Thresholds, matchers and names are untouched.
		{`up{job="vllm"} == 0`, `up{job="vllm"} == 0`},
	} {
		got, err := ts.scaleExpr(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if norm(t, got) != norm(t, tc.want) {
			t.Errorf("scale %s:\n got  %s\n want %s", tc.in, got, tc.want)
		}
	}
}

func norm(t *testing.T, s string) string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return e.String()
}

func TestScaleExprErrors(t *testing.T) {
	ts := newTimeScale(60, 4*time.Second, time.Second)
	for _, in := range []string{`rate(x[5m]`, `sum by (`, ``, `x[5m:1m:1m]`} {
		if got, err := ts.scaleExpr(in); err == nil {
			t.Errorf("%q: no error, got %q", in, got)
		}
	}
}

// TestScaleVLLMPack scales the real pack: every duration is divided, and
// everything else (names, labels, annotations, thresholds) is the pack's.
func TestScaleVLLMPack(t *testing.T) {
	root := testbin.RepoRoot(t)
	src := filepath.Join(root, "examples", "packs", "vllm", "vllm.rules.yaml")
	orig := loadRules(t, src)

	ts := newTimeScale(60, 4*time.Second, time.Second)
	paths, err := ts.writeScaled([]string{src}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || !strings.HasSuffix(paths[0], "00-vllm.rules.yaml") {
		t.Fatalf("paths = %v", paths)
	}
	scaled := loadRules(t, paths[0])

	if len(scaled.Groups) != len(orig.Groups) {
		t.Fatalf("%d groups, want %d", len(scaled.Groups), len(orig.Groups))
	}
	p := parser.NewParser(parser.Options{})
	checked := 0
	for i, g := range orig.Groups {
		sg := scaled.Groups[i]
		if sg.Name != g.Name || len(sg.Rules) != len(g.Rules) {
			t.Fatalf("group %d: %s with %d rules, want %s with %d", i, sg.Name, len(sg.Rules), g.Name, len(g.Rules))
		}
		for j, r := range g.Rules {
			sr := sg.Rules[j]
			if sr.Alert != r.Alert || sr.Record != r.Record {
				t.Errorf("rule %d.%d is %q, want %q", i, j, sr.Alert, r.Alert)
			}
			if !equalMaps(sr.Labels, r.Labels) || !equalMaps(sr.Annotations, r.Annotations) {
				t.Errorf("%s: labels or annotations changed", r.Alert)
			}
			if want := model.Duration(max(time.Duration(r.For)/60, time.Second)); r.For != 0 && sr.For != want {
				t.Errorf("%s: for %s, want %s", r.Alert, sr.For, want)
			}
			// Same expression once every range is divided.
			want, err := ts.scaleExpr(r.Expr)
			if err != nil {
				t.Fatal(err)
			}
			if norm(t, sr.Expr) != norm(t, want) {
				t.Errorf("%s: expr\n%s\nwant\n%s", r.Alert, sr.Expr, want)
			}
			e, err := p.ParseExpr(sr.Expr)
			if err != nil {
				t.Fatalf("%s: scaled expr does not parse: %v", r.Alert, err)
			}
			parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
				if m, ok := n.(*parser.MatrixSelector); ok {
					checked++
					// The longest window of the pack is the SLO alerts' 6h.
					if m.Range > 6*time.Minute || m.Range < 4*time.Second {
						t.Errorf("%s: range %s not scaled into [4s, 6m]", r.Alert, m.Range)
					}
				}
				return nil
			})
		}
	}
	if checked < 10 {
		t.Errorf("only %d range selectors checked; the pack has more", checked)
	}
	// Concretely, for the alerts the demo waits for.
	for _, want := range []string{"for: 10s", "[5s]"} {
		b, _ := os.ReadFile(paths[0])
		if !strings.Contains(string(b), want) {
			t.Errorf("scaled file lacks %q", want)
		}
	}
	// The original is untouched.
	if b, _ := os.ReadFile(src); !strings.Contains(string(b), "for: 10m") {
		t.Error("the pack itself changed")
	}
}

func loadRules(t *testing.T, path string) *rulefmt.RuleGroups {
	t.Helper()
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := rules.ParseFile(path, content, rules.ParseOptions{Parser: parser.NewParser(parser.Options{})})
	if errs := f.Errors(); len(errs) > 0 {
		t.Fatalf("%s: %v", path, errs)
	}
	return f.RuleGroups()
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestScaleFile covers the other durations, CRDs and hostile files.
func TestScaleFile(t *testing.T) {
	ts := newTimeScale(30, 4*time.Second, time.Second)
	got, err := ts.scaleFile("g.yaml", []byte(`groups:
  - name: g
    interval: 1m
    query_offset: 30s
    rules:
      - alert: A
        expr: rate(x_total[10m]) > 1
        for: 15m
        keep_firing_for: 5m
      - record: r
        expr: sum(x)
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"interval: 2s", "query_offset: 1s", "for: 30s", "keep_firing_for: 10s", "rate(x_total[20s]) > 1", "# Generated by paged demo"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("scaled file lacks %q:\n%s", want, got)
		}
	}

	crd, err := ts.scaleFile("crd.yaml", []byte(`apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: x}
spec:
  groups:
    - name: g
      rules:
        - alert: A
          expr: rate(x_total[10m]) > 1
          for: 1m
`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(crd), "for: 2s") || !strings.Contains(string(crd), "[20s]") || !strings.Contains(string(crd), "kind: PrometheusRule") {
		t.Errorf("CRD not scaled:\n%s", crd)
	}

	for name, tc := range map[string]struct{ in, want string }{
		"bad PromQL":   {"groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: rate(x[5m]\n", "bad.yaml:5:15:"},
		"bad duration": {"groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: x\n        for: soon\n", "bad.yaml:6:14:"},
		"no groups":    {"rules: []\n", "bad.yaml:1:1: no groups"},
		"bad YAML":     {"groups: [\n", "bad.yaml"},
		"scalar":       {"groups: 3\n", "bad.yaml:1:1: no groups"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ts.scaleFile("bad.yaml", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if out, err := ts.scaleFile("empty.yaml", nil); err != nil || len(out) != 0 {
		t.Errorf("empty file: %q, %v", out, err)
	}
}

func FuzzScaleFile(f *testing.F) {
	f.Add([]byte("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: rate(x[5m]) > 1\n        for: 10m\n"))
	f.Add([]byte("spec:\n  groups: [{name: g, rules: [{record: r, expr: 'x[1h:5m] offset 1d'}]}]\n"))
	f.Add([]byte("groups: [{interval: -1m}]"))
	ts := newTimeScale(60, 4*time.Second, time.Second)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ts.scaleFile("fuzz.yaml", b)
	})
}
