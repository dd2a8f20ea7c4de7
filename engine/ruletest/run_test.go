package ruletest_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/engine/ruletest/ruletesttest"
	"github.com/pagedhq/paged/internal/testbin"
)

func promtoolFile(t *testing.T, name string) string {
	return filepath.Join(testbin.SharedDir(t), ruletesttest.PromtoolDir, name)
}

func run(t *testing.T, opts ruletest.Options, files ...string) (*ruletest.Result, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts.Stdout, opts.Stderr = &stdout, &stderr
	res, err := ruletest.Run(context.Background(), opts, files...)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res, stdout.String(), stderr.String()
}

// TestFailingOutput checks the failure text of failing.yml: promtool's
// expected/got blocks, each headed by the test case's position.
func TestFailingOutput(t *testing.T) {
	path := promtoolFile(t, "failing.yml")
	res, stdout, stderr := run(t, ruletest.Options{}, path)
	if !res.Failed() {
		t.Fatal("failing.yml passed")
	}
	if !strings.Contains(stdout, "Processing test file: "+path+"\n") {
		t.Errorf("stdout lacks the file header:\n%s", stdout)
	}
	want := []string{
		path + ":20:9: alert_rule_test\n" +
			"    name: Failing test,\n" +
			"    alertname: Test, time: 0s, \n" +
			"        exp:[\n" +
			"            0:\n" +
			"              Labels:{alertname=\"Test\"}\n" +
			"              Annotations:{}\n" +
			"            ], \n" +
			"        got:[]\n",
		path + ":13:9: promql_expr_test\n" +
			"    expr: \"test\", time: 0s,\n" +
			"        exp: {__name__=\"test\"} 1E+00\n" +
			"        got: {__name__=\"test\"} 0E+00\n",
		path + ":33:9: alert_rule_test\n" +
			"    name: Failing alert test,\n" +
			"    alertname: InstanceDown, time: 5m, \n" +
			"        exp:[], \n" +
			"        got:[\n" +
			"            0:\n" +
			"              Labels:{alertname=\"InstanceDown\", job=\"test\", severity=\"page\"}\n" +
			"              Annotations:{description=\" of job test has been down for more than 5 minutes.\", summary=\"Instance  down\"}\n" +
			"            ]\n",
		path + ":36:9: alert_rule_test\n" +
			"    name: Failing alert test,\n" +
			"    alertname: AlwaysFiring, time: 5m, \n" +
			"        exp:[], \n" +
			"        got:[\n" +
			"            0:\n" +
			"              Labels:{alertname=\"AlwaysFiring\"}\n" +
			"              Annotations:{}\n" +
			"            ]\n",
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks\n%s\ngot:\n%s", w, stderr)
		}
	}
	if n := len(res.Files[0].Groups); n != 2 {
		t.Fatalf("groups = %d, want 2", n)
	}
	if f := res.Files[0].Groups[0].Failures; len(f) != 2 || f[0].Pos.Line != 20 || f[1].Pos.Line != 13 {
		t.Errorf("failures of group 0 = %+v", f)
	}
}

func TestDiffOutput(t *testing.T) {
	path := promtoolFile(t, "failing.yml")
	_, _, stderr := run(t, ruletest.Options{Diff: true}, path)
	for _, w := range []string{
		"    alertname: Test, time: 0s, \n        diff (- expected, + got):\n            - {alertname=\"Test\"} {}\n",
		"        diff (- expected, + got):\n            - {__name__=\"test\"} 1E+00\n            + {__name__=\"test\"} 0E+00\n",
		"            + {alertname=\"AlwaysFiring\"} {}\n",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks\n%s\ngot:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "exp:[") {
		t.Errorf("--diff still prints exp/got lists:\n%s", stderr)
	}
}

func TestRunSelectsGroups(t *testing.T) {
	res, _, _ := run(t, ruletest.Options{Run: []string{"correct"}}, promtoolFile(t, "rules_run.yml"))
	if res.Failed() || len(res.Files[0].Groups) != 1 || res.Files[0].Groups[0].Name != "correct test" {
		t.Fatalf("--run correct: %+v", res.Files[0].Groups)
	}
	if _, err := ruletest.Run(context.Background(), ruletest.Options{Run: []string{"("}}, promtoolFile(t, "rules_run.yml")); !isUsage(err) {
		t.Fatalf("bad --run: err = %v, want a UsageError", err)
	}
	if _, err := ruletest.Run(context.Background(), ruletest.Options{}, filepath.Join(t.TempDir(), "missing.yml")); !isUsage(err) {
		t.Fatalf("missing file: err = %v, want a UsageError", err)
	}
}

func isUsage(err error) bool {
	var ue *ruletest.UsageError
	return errors.As(err, &ue)
}

func TestDebugDump(t *testing.T) {
	_, _, stderr := run(t, ruletest.Options{Debug: true, Run: []string{"correct"}}, promtoolFile(t, "rules_run.yml"))
	for _, w := range []string{"DEBUG: Starting test correct test", "DEBUG: Dump of all data (input_series and rules) at 1s:", "{__name__=\"fixed_data\"} =>\n1 @[0]", "DEBUG: Test correct test finished, took "} {
		if !strings.Contains(stderr, w) {
			t.Errorf("debug output lacks %q:\n%s", w, stderr)
		}
	}
}

type junitXML struct {
	Suites []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name     string   `xml:"name,attr"`
			Failures []string `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestJUnit mirrors promtool's own JUnit test: the four files that need @
// and negative offsets, run with both off, give one suite per file, each
// with at least one case, and the run fails.
func TestJUnit(t *testing.T) {
	files := []string{
		promtoolFile(t, "at-modifier-test.yml"),
		promtoolFile(t, "negative-offset-test.yml"),
		promtoolFile(t, "no-test-group-interval.yml"),
		promtoolFile(t, "start-time-test.yml"),
		promtoolFile(t, "rules_run.yml"),
	}
	var buf bytes.Buffer
	res, _, _ := run(t, ruletest.Options{
		JUnit:             &buf,
		DisableAtModifier: true, DisableNegativeOffset: true,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}, files...)
	if !res.Failed() {
		t.Fatal("run passed with @ and negative offsets off")
	}
	var doc junitXML
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid XML: %v\n%s", err, buf.String())
	}
	if !strings.HasPrefix(buf.String(), "<testsuites>") || !strings.Contains(buf.String(), `timestamp="2026-01-02T03:04:05"`) {
		t.Errorf("unexpected XML:\n%s", buf.String())
	}
	if len(doc.Suites) != len(files) {
		t.Fatalf("suites = %d, want %d", len(doc.Suites), len(files))
	}
	for i, s := range doc.Suites {
		if s.Name != files[i] || len(s.Cases) == 0 || s.Tests != len(s.Cases) {
			t.Errorf("suite %d: name %q, %d cases, tests=%d", i, s.Name, len(s.Cases), s.Tests)
		}
	}
	if s := doc.Suites[0]; s.Failures == 0 || len(s.Cases[0].Failures) == 0 || !strings.Contains(s.Cases[0].Failures[0], "at-modifier-test.yml:") {
		t.Errorf("at-modifier suite should fail with a positioned message: %+v", s)
	}
	rr := doc.Suites[4]
	if len(rr.Cases) != 2 || rr.Cases[0].Name != "correct test" || rr.Cases[1].Name != "wrong test" ||
		len(rr.Cases[0].Failures) != 0 || len(rr.Cases[1].Failures) != 1 {
		t.Errorf("rules_run.yml suite: want one case per group, only the wrong one failing: %+v", rr)
	}
}

func TestExpandPaths(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/x.test.yaml", "a/y.test.yml", "a/rules.yaml", "b/z.test.yaml", "c/notes.txt"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ruletest.ExpandPaths([]string{filepath.Join(dir, "a"), filepath.Join(dir, "*", "z.test.yaml"), filepath.Join(dir, "a", "rules.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/x.test.yaml", "a/y.test.yml", "b/z.test.yaml", "a/rules.yaml"}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ExpandPaths = %v, want %v", got, want)
	}
	for _, bad := range []string{"nothing*.yaml", "missing.yaml", "c"} {
		if _, err := ruletest.ExpandPaths([]string{filepath.Join(dir, bad)}); err == nil {
			t.Errorf("ExpandPaths(%q): no error", bad)
		}
	}
}

func TestGroupEvalOrder(t *testing.T) {
	for _, f := range []string{"testdata/order.test.yaml", "testdata/order_first.test.yaml"} {
		res, _, stderr := run(t, ruletest.Options{}, f)
		if res.Failed() {
			t.Errorf("%s failed:\n%s", f, stderr)
		}
	}
	res, _, stderr := run(t, ruletest.Options{}, "testdata/order_repeated.test.yaml")
	if !res.Failed() || !strings.Contains(stderr, "testdata/order_repeated.test.yaml:2:35: group_eval_order\n    group name repeated in evaluation order: first\n") {
		t.Errorf("repeated group name:\n%s", stderr)
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ruletest.Run(ctx, ruletest.Options{}, "testdata/coverage.test.yaml")
	if !errors.Is(err, context.Canceled) || isUsage(err) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestHugeExpansion: a few bytes that expand to 10^11 samples fail the group
// with a position instead of exhausting memory.
func TestHugeExpansion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.test.yaml")
	src := "tests:\n  - name: huge\n    input_series:\n      - series: up\n        values: '1 0+1x5 1x100000000000'\n" +
		"    promql_expr_test:\n      - expr: up\n        eval_time: 0m\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _, stderr := run(t, ruletest.Options{}, path)
	if !res.Failed() || !strings.Contains(stderr, path+":4:9: input_series\n    input series expand to more than 10000000 samples") {
		t.Fatalf("stderr:\n%s", stderr)
	}
}
