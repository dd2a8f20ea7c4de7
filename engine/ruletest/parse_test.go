package ruletest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/engine/ruletest/ruletesttest"
	"github.com/pagedhq/paged/internal/testbin"
)

func TestParseBadFile(t *testing.T) {
	b, err := os.ReadFile("testdata/bad.test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, errs := ruletest.Parse("bad.test.yaml", b)
	if f != nil {
		t.Errorf("a bad file returned a File")
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`bad.test.yaml:2:22: evaluation_interval: unknown unit " minute" in duration "1 minute"`,
		`bad.test.yaml:5:5: unknown field "intervall" in test group`,
		`bad.test.yaml:9:9: unknown field "extra" in input series`,
		`bad.test.yaml:12:20: alertname must be a string, got a list`,
		`bad.test.yaml:16:20: value: "notanumber" is not a number`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseFields(t *testing.T) {
	src := `
rule_files: [a.yml, 'b/*.yml']
evaluation_interval: 30s
fuzzy_compare: true
group_eval_order: [g1, g2]
tests:
  - name: all
    interval: 15s
    start_timestamp: 2026-01-02T03:04:05Z
    external_labels: {cluster: prod}
    external_url: http://paged.example
    input_series:
      - series: 'up{job="x"}'
        values: |
          1 _ stale
          0+1x3
    alert_rule_test:
      - eval_time: 1m
        alertname: A
        exp_alerts:
          - exp_labels: {code: 500}
            exp_annotations: {summary: hi}
    promql_expr_test:
      - expr: up
        eval_time: 2m
        exp_samples:
          - labels: 'up{job="x"}'
            value: .inf
          - labels: h
            histogram: '{{count:1}}'
  - start_timestamp: 1700000000.5
`
	f, errs := ruletest.Parse("t.yml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if strings.Join(f.RuleFiles, ",") != "a.yml,b/*.yml" || f.EvaluationInterval != 30*time.Second || !f.FuzzyCompare ||
		strings.Join(f.GroupEvalOrder, ",") != "g1,g2" || len(f.Tests) != 2 {
		t.Fatalf("file fields: %+v", f)
	}
	g := f.Tests[0]
	if g.Name != "all" || g.Interval != 15*time.Second || !g.StartTimestamp.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) ||
		g.ExternalLabels.Get("cluster") != "prod" || g.ExternalURL != "http://paged.example" || g.Pos.Line != 7 {
		t.Errorf("group fields: %+v", g)
	}
	if s := g.InputSeries[0]; s.Values != "1 _ stale 0+1x3" || s.Pos.Line != 13 {
		t.Errorf("series: %+v", s)
	}
	a := g.AlertRuleTests[0]
	if a.EvalTime != time.Minute || a.Alertname != "A" || a.ExpAlerts[0].Labels["code"] != "500" || a.ExpAlerts[0].Annotations["summary"] != "hi" || a.HasPending {
		t.Errorf("alert case: %+v", a)
	}
	p := g.PromQLTests[0]
	if p.EvalTime != 2*time.Minute || p.ExpSamples[0].Value <= 1e308 || p.ExpSamples[1].Histogram != "{{count:1}}" || p.Pos.Line != 24 {
		t.Errorf("promql case: %+v", p)
	}
	if ts := f.Tests[1].StartTimestamp; ts.Unix() != 1700000000 || ts.Nanosecond() != 500000000 {
		t.Errorf("unix start_timestamp: %v", ts)
	}
}

func TestParseHostile(t *testing.T) {
	for name, src := range map[string]string{
		"not a mapping":  "- a\n- b\n",
		"syntax":         "tests: [\n",
		"tests scalar":   "tests: 3\n",
		"repeated key":   "tests: []\ntests: []\n",
		"alias loop":     "a: &x [*x]\ntests: *x\n",
		"bad timestamp":  "tests: [{start_timestamp: yesterday}]\n",
		"huge timestamp": "tests: [{start_timestamp: 1e300}]\n",
		"series newline": "tests: [{input_series: [{series: \"a\\nload 1m\", values: '1'}]}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, errs := ruletest.Parse("h.yml", []byte(src))
			if len(errs) == 0 {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(errs[0].Error(), "h.yml") {
				t.Errorf("error without the file name: %v", errs[0])
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/coverage.test.yaml", "testdata/bad.test.yaml", "testdata/pending_wrong.test.yaml"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	if d := os.Getenv("PAGED_SHARED"); d != "" {
		for _, name := range ruletesttest.PromtoolTestFiles {
			if b, err := os.ReadFile(filepath.Join(d, ruletesttest.PromtoolDir, name)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("tests: [{alert_rule_test: [{exp_alerts: [{exp_labels: {<<: {a: b}}}]}]}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, errs := ruletest.Parse("f.yml", b)
		if len(errs) == 0 && file == nil {
			t.Fatal("no file and no error")
		}
		for _, e := range errs {
			if !strings.HasPrefix(e.Error(), "f.yml") {
				t.Fatalf("error without position: %v", e)
			}
		}
	})
}

// TestParseCorpus parses every corpus test file without error.
func TestParseCorpus(t *testing.T) {
	shared := testbin.SharedDir(t)
	for _, c := range ruletesttest.Corpus {
		for _, name := range c.Files {
			b, err := os.ReadFile(filepath.Join(shared, c.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if _, errs := ruletest.Parse(name, b); len(errs) > 0 {
				t.Errorf("%s: %v", name, errs)
			}
		}
	}
}
