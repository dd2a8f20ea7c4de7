package examples

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

var packs = []string{"vllm", "vllm-features", "vllm-v0", "tgi", "sglang", "triton", "dcgm", "inference-gateway"}

func ruleFile(pack string) string { return filepath.Join("packs", pack, pack+".rules.yaml") }
func testFile(pack string) string { return filepath.Join("packs", pack, pack+".test.yaml") }

// Every pack lints clean with every offline check on: not even an info.
func TestPacksLintClean(t *testing.T) {
	paths, err := rules.ExpandPaths([]string{"packs"})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(packs) {
		t.Fatalf("found rule files %v, want one per pack %v", paths, packs)
	}
	var files []*rules.File
	for _, p := range paths {
		f, err := rules.ReadFile(p, rules.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for _, f := range rules.Lint(files, rules.DefaultConfig()) {
		t.Errorf("%s", f)
	}
}

// Debian's promtool (Prometheus 2.42) accepts every pack, with no warning,
// so the packs load into the Prometheus that teams already run.
func TestPacksPromtoolCheck(t *testing.T) {
	promtool := testbin.Require(t, "promtool")
	for _, pack := range packs {
		out, err := exec.Command(promtool, "check", "rules", ruleFile(pack)).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check rules %s: %v\n%s", ruleFile(pack), err, out)
			continue
		}
		if !strings.Contains(string(out), "SUCCESS") || strings.Contains(string(out), "WARNING") {
			t.Errorf("promtool check rules %s:\n%s", ruleFile(pack), out)
		}
	}
}

// Every alert of every pack has a test where it fires and one where it must
// not, and all tests pass under paged's Prometheus 3 runner.
func TestPacksUnitTestsFullCoverage(t *testing.T) {
	var files []string
	for _, pack := range packs {
		files = append(files, testFile(pack))
	}
	var stderr strings.Builder
	res, err := ruletest.Run(context.Background(), ruletest.Options{Stderr: &stderr}, files...)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("pack tests failed:\n%s", stderr.String())
	}
	covered, total := res.Coverage.Counts()
	if total < 50 {
		t.Fatalf("only %d alerting rules found in the packs", total)
	}
	for _, a := range res.Coverage.Alerts {
		if !a.Covered() {
			t.Errorf("%s:%d: alert %s: firing cases %d, not-firing cases %d", a.File, a.Line, a.Alert, len(a.Firing), len(a.NotFiring))
		}
	}
	if covered != total {
		t.Errorf("coverage %d/%d", covered, total)
	}
}

// Every alert's relative runbook link names a runbook that exists, and
// every runbook belongs to an alert (no orphans). paged's own built-in
// alerts (every one the engine lists) have theirs under runbooks/paged/.
func TestRunbooksMatchAlerts(t *testing.T) {
	want := map[string]bool{}
	for _, name := range engine.BuiltinAlertNames() {
		want[filepath.Join("paged", name+".md")] = true
	}
	if len(want) < 5 {
		t.Fatalf("built-in alerts: %v", engine.BuiltinAlertNames())
	}
	for _, pack := range packs {
		f, err := rules.ReadFile(ruleFile(pack), rules.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if !r.IsAlert() {
					continue
				}
				v, ok := r.Annotation("runbook_url")
				if !ok {
					t.Errorf("%s: %s has no runbook_url", ruleFile(pack), r.Name())
					continue
				}
				want[filepath.FromSlash(v.Value)] = true
			}
		}
	}
	err := filepath.WalkDir("runbooks", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("runbooks", p)
		if !want[rel] {
			t.Errorf("runbook %s belongs to no alert", p)
		}
		delete(want, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for missing := range want {
		t.Errorf("runbook %s is missing", missing)
	}
}
