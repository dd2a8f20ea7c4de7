package ruletest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pagedhq/paged/engine/ruletest"
)

func TestCoverage(t *testing.T) {
	res, _, stderr := run(t, ruletest.Options{}, "testdata/coverage.test.yaml")
	if res.Failed() {
		t.Fatalf("coverage.test.yaml failed:\n%s", stderr)
	}
	cov := res.Coverage
	if len(cov.Alerts) != 3 {
		t.Fatalf("alerts = %+v, want 3 alerting rules (the recording rule is not one)", cov.Alerts)
	}
	byName := map[string]ruletest.AlertCoverage{}
	for _, a := range cov.Alerts {
		byName[a.Alert] = a
	}
	kv := byName["KVCacheFull"]
	if !kv.Covered() || kv.Line != 4 || kv.Group != "llm" || len(kv.Firing) != 1 || kv.Firing[0].Pos.Line != 16 ||
		len(kv.NotFiring) != 1 || kv.NotFiring[0].Pos.Line != 10 || kv.NotFiring[0].Group != "kv cache fires after 5m and is pending before" {
		t.Errorf("KVCacheFull: %+v", kv)
	}
	if q := byName["QueueBacklog"]; q.Covered() || len(q.Firing) != 1 || len(q.NotFiring) != 0 {
		t.Errorf("QueueBacklog: %+v", q)
	}
	if n := byName["NeverTested"]; n.Covered() || len(n.Firing)+len(n.NotFiring) != 0 {
		t.Errorf("NeverTested: %+v", n)
	}
	if c, total := cov.Counts(); c != 1 || total != 3 {
		t.Errorf("counts = %d/%d", c, total)
	}
	var buf bytes.Buffer
	if err := cov.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{
		"ok       KVCacheFull   testdata/coverage.rules.yaml:4   testdata/coverage.test.yaml:16:9  testdata/coverage.test.yaml:10:9",
		"MISSING  QueueBacklog  testdata/coverage.rules.yaml:11",
		"MISSING  NeverTested   testdata/coverage.rules.yaml:17  -",
		"coverage: 1/3 alerting rules tested firing and not firing (33.3%)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("coverage text lacks %q:\n%s", w, out)
		}
	}
}

func TestCoverageSkipsGroupsNotRun(t *testing.T) {
	res, _, _ := run(t, ruletest.Options{Run: []string{"queue"}}, "testdata/coverage.test.yaml")
	for _, a := range res.Coverage.Alerts {
		if a.Alert == "KVCacheFull" && len(a.Firing)+len(a.NotFiring) != 0 {
			t.Errorf("a group skipped by --run counted for coverage: %+v", a)
		}
	}
}

func TestCoverageEmpty(t *testing.T) {
	c := &ruletest.Coverage{}
	if c.Percent() != 100 {
		t.Errorf("no alerting rules: %v%%, want 100", c.Percent())
	}
}

// TestPendingAlerts checks the exp_pending_alerts extension both ways.
func TestPendingAlerts(t *testing.T) {
	res, _, stderr := run(t, ruletest.Options{}, "testdata/pending_wrong.test.yaml")
	if !res.Failed() {
		t.Fatal("a wrong exp_pending_alerts passed")
	}
	want := "testdata/pending_wrong.test.yaml:8:9: alert_rule_test exp_pending_alerts\n" +
		"    name: wrong pending,\n" +
		"    pending alertname: KVCacheFull, time: 2m, \n" +
		"        exp:[], \n" +
		"        got:[\n" +
		"            0:\n" +
		"              Labels:{alertname=\"KVCacheFull\", job=\"vllm\", severity=\"warning\"}\n" +
		"              Annotations:{summary=\"KV cache at 0.95\"}\n" +
		"            ]\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks\n%s\ngot:\n%s", want, stderr)
	}
	// Without the key, a pending alert is not checked, exactly as promtool.
	if f := res.Files[0].Groups[0].Failures; len(f) != 1 {
		t.Errorf("failures = %+v, want only the pending one", f)
	}
}

// TestCRDRuleFile: a PrometheusRule custom resource works as a rule file,
// and its alerts are found for coverage with their lines.
func TestCRDRuleFile(t *testing.T) {
	res, _, stderr := run(t, ruletest.Options{}, "testdata/crd.test.yaml")
	if res.Failed() {
		t.Fatalf("crd.test.yaml failed:\n%s", stderr)
	}
	if a := res.Coverage.Alerts; len(a) != 1 || a[0].Alert != "QueueBacklog" || a[0].Line != 9 || !a[0].Covered() {
		t.Errorf("coverage: %+v", a)
	}
}

// A failing case proves nothing about the rule: it does not count.
func TestCoverageCountsOnlyPassingCases(t *testing.T) {
	res, _, _ := run(t, ruletest.Options{}, "testdata/coverage_failing.test.yaml")
	if !res.Failed() {
		t.Fatal("the wrong case passed")
	}
	for _, a := range res.Coverage.Alerts {
		if a.Alert != "KVCacheFull" {
			continue
		}
		if len(a.NotFiring) != 0 || a.Covered() {
			t.Errorf("the failing not-firing case counted: %+v", a)
		}
		if len(a.Firing) != 1 || a.Firing[0].Pos.Line != 15 {
			t.Errorf("the passing firing case at line 15 is not counted: %+v", a)
		}
		return
	}
	t.Fatal("KVCacheFull not in the coverage")
}
