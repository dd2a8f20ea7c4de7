package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/engine/ruletest/ruletesttest"
	"github.com/pagedhq/paged/internal/testbin"
)

func runPaged(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestTestCorpus runs `paged test` through the command line on every
// promtool test file of the corpus with SOURCES.md's flags, and expects
// promtool 3's exit code.
func TestTestCorpus(t *testing.T) {
	shared := testbin.SharedDir(t)
	for _, c := range ruletesttest.Corpus {
		if c.APIOnly() {
			continue // needs @ or negative offsets off, which the CLI never does
		}
		t.Run(c.Name, func(t *testing.T) {
			if testing.Short() && c.Name == "tests.yaml" {
				t.Skip("kubernetes-mixin tests.yaml takes ~40s of CPU; run without -short (CI does)")
			}
			args := append([]string{"test"}, c.Args(filepath.Join(shared, c.Dir))...)
			code, stdout, stderr := runPaged(t, args...)
			want := exitOK
			if c.WantFail {
				want = exitProblems
			}
			if code != want {
				t.Fatalf("paged %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
			}
			if !strings.Contains(stdout, "Processing test file: ") {
				t.Errorf("no progress output:\n%s", stdout)
			}
			if c.WantFail != strings.Contains(stderr, "  FAILED:") || !strings.Contains(stderr, c.Reason) {
				t.Errorf("want FAILED = %v and %q in stderr:\n%s", c.WantFail, c.Reason, stderr)
			}
		})
	}
}

func TestTestExitCodes(t *testing.T) {
	shared := testbin.SharedDir(t)
	rulesRun := filepath.Join(shared, ruletesttest.PromtoolDir, "rules_run.yml")
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"missing file", []string{"test", filepath.Join(dir, "nope.yml")}, exitUsage, "no such file"},
		{"glob matches nothing", []string{"test", filepath.Join(dir, "*.test.yaml")}, exitUsage, "no file matches this pattern"},
		{"bad --run", []string{"test", "--run", "(", rulesRun}, exitUsage, "--run: error parsing regexp"},
		{"bad --min-coverage", []string{"test", "--min-coverage", "101", rulesRun}, exitUsage, "--min-coverage must be between 0 and 100"},
		{"junit in a missing folder", []string{"test", "--run", "correct", "--junit", filepath.Join(dir, "no", "such", "r.xml"), rulesRun}, exitUsage, "writing JUnit report"},
		{"no files", []string{"test"}, exitUsage, "expected"},
		{"pass", []string{"test", "--run", "correct", rulesRun}, exitOK, ""},
		{"fail", []string{"test", "--run", "wrong", rulesRun}, exitProblems, "rules_run.yml:26:9: promql_expr_test\n    expr: \"test\", time: 0s,\n        exp: {__name__=\"test\"} 1E+00\n        got: {__name__=\"test\"} 0E+00\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runPaged(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Errorf("exit %d, want %d; stderr (want %q):\n%s", code, c.code, c.stderr, stderr)
			}
		})
	}
}

func TestTestJUnitFile(t *testing.T) {
	shared := testbin.SharedDir(t)
	out := filepath.Join(t.TempDir(), "report.xml")
	code, _, _ := runPaged(t, "test", "--junit", out,
		filepath.Join(shared, ruletesttest.PromtoolDir, "rules_run.yml"),
		filepath.Join(shared, ruletesttest.PromtoolDir, "no-test-group-interval.yml"))
	if code != exitProblems {
		t.Fatalf("exit %d, want 1", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name     string   `xml:"name,attr"`
				Failures []string `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("invalid XML: %v\n%s", err, b)
	}
	if len(doc.Suites) != 2 || len(doc.Suites[0].Cases) != 2 || len(doc.Suites[1].Cases) != 1 ||
		len(doc.Suites[0].Cases[1].Failures) != 1 || !strings.HasSuffix(doc.Suites[1].Name, "no-test-group-interval.yml") {
		t.Errorf("unexpected report:\n%s", b)
	}
}

// TestTestNotifications runs notification tests through the command line:
// exit codes, positions, --update without --config, and a file with
// notification_tests run without --config.
func TestTestNotifications(t *testing.T) {
	td := filepath.Join("..", "..", "notifier", "notificationtest", "testdata")
	conf := filepath.Join(td, "paged.yaml")
	bare := filepath.Join(t.TempDir(), "paged.yaml")
	if err := os.WriteFile(bare, []byte("datasource: {type: prometheus, prometheus: {url: http://127.0.0.1:9090}}\npacks: [{name: vllm}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"pass", []string{"test", "--config", conf, filepath.Join(td, "notifications.test.yaml")}, exitOK, ""},
		{"fail", []string{"test", "--config", conf, "--run", "wrong receivers", filepath.Join(td, "failing.test.yaml")}, exitProblems,
			"failing.test.yaml:5:5: notification_test exp_receivers\n    name: wrong receivers,\n        diff (- expected, + got):\n            - pager\n              llm-slack\n            + pager\n"},
		{"no --config", []string{"test", filepath.Join(td, "notifications.test.yaml")}, exitProblems,
			"notifications.test.yaml:1:1: notification_tests\n    notification_tests need the notifier configuration: run paged test --config paged.yaml"},
		{"--update without --config", []string{"test", "--update", filepath.Join(td, "notifications.test.yaml")}, exitUsage, "--update needs --config"},
		{"config without a notifier", []string{"test", "--config", bare, filepath.Join(td, "notifications.test.yaml")}, exitUsage, "no notifier: block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runPaged(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Errorf("exit %d, want %d; stderr (want %q):\n%s", code, c.code, c.stderr, stderr)
			}
		})
	}
}
