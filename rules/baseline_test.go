package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lintText lints one file's text with the default configuration and
// returns its findings and their source lines.
func lintText(t *testing.T, path, text string) ([]Finding, SourceFunc) {
	t.Helper()
	f := ParseFile(path, []byte(text), ParseOptions{})
	return Lint([]*File{f}, DefaultConfig()), func(_ string, line int) string { return f.Line(line) }
}

const baselineBefore = `groups:
  - name: api
    rules:
      - alert: ServerErrors
        expr: sum by (instance, code) (rate(http_requests_total{code="500"}[5m])) / sum by (instance) (rate(http_requests_total[5m])) > 0.05
        labels: {severity: page}
      - alert: NoRunbook
        expr: up == 0
        labels: {severity: critical}
`

// Lines added above, a rule added, another edited: the accepted findings
// still match by fingerprint; the new ones are reported.
const baselineAfter = `# Rules of the API team.
# Reviewed 2026-12.
groups:
  - name: api
    rules:
      - alert: Added
        expr: vllm:kv_cache_usage_perc > 95
        labels: {severity: warning}
        annotations: {summary: s, runbook_url: https://r.example/Added}
      - alert: ServerErrors
        expr: sum by (instance, code) (rate(http_requests_total{code="500"}[5m])) / sum by (instance) (rate(http_requests_total[5m])) > 0.05
        labels: {severity: page}
      - alert: NoRunbook
        expr: up{job="api"} == 0
        labels: {severity: critical}
`

func TestBaselineMatchesMovedFindings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	before, src := lintText(t, path, baselineBefore)
	if len(before) < 4 {
		t.Fatalf("want at least 4 findings to accept, got %v", before)
	}
	b := NewBaseline(dir, before, src)
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), dir) || !strings.Contains(buf.String(), `"path": "rules.yaml"`) {
		t.Errorf("paths are not relative to the baseline's folder:\n%s", buf.String())
	}
	bfile := filepath.Join(dir, "baseline.json")
	if err := WriteBaselineFile(bfile, b); err != nil {
		t.Fatal(err)
	}
	read, err := ReadBaseline(bfile)
	if err != nil {
		t.Fatal(err)
	}

	// The same findings are all accepted.
	kept, accepted, stale := read.Filter(before, src)
	if len(kept) != 0 || accepted != len(before) || stale != 0 {
		t.Errorf("same file: kept %v, accepted %d of %d, stale %d", kept, accepted, len(before), stale)
	}

	after, src2 := lintText(t, path, baselineAfter)
	kept, accepted, stale = read.Filter(after, src2)
	var keptRules []string
	for _, f := range kept {
		keptRules = append(keptRules, f.Rule+" "+f.Check)
	}
	slices.Sort(keptRules)
	want := []string{"Added catalog/threshold-unit"}
	if !slices.Equal(keptRules, want) {
		t.Errorf("new findings: got %q, want %q\n%v", keptRules, want, kept)
	}
	// NoRunbook's expression changed, but its findings point at its name:
	// still accepted. Nothing accepted is gone.
	if accepted != len(before) || stale != 0 {
		t.Errorf("accepted %d (want %d), stale %d (want 0)", accepted, len(before), stale)
	}
}

// A second identical finding in the same rule is new: entries count.
// A finding reworded by a later paged still matches its fingerprint.
// Fixed findings are stale.
func TestBaselineCountsRewordingStale(t *testing.T) {
	f := Finding{Path: "r.yaml", Range: Range{Start: Pos{3, 10}, End: Pos{3, 14}}, Severity: Warning,
		Check: "catalog/label", Message: "old words", Group: "g", Rule: "A"}
	src := func(_ string, line int) string { return "      expr: foo{model=\"x\"} > 1" }
	b := NewBaseline("", []Finding{f}, src)
	if len(b.Findings) != 1 || b.Findings[0].Count != 1 {
		t.Fatalf("baseline %+v", b.Findings)
	}
	moved := f
	moved.Range.Start.Line, moved.Range.End.Line = 30, 30
	reworded := moved
	reworded.Message = "new words"
	kept, accepted, stale := b.Filter([]Finding{reworded, moved}, src)
	if accepted != 1 || len(kept) != 1 || stale != 0 {
		t.Fatalf("kept %v, accepted %d, stale %d", kept, accepted, stale)
	}
	if kept[0].Message != "new words" {
		t.Errorf("the finding with the accepted message should be the one accepted; kept %q", kept[0].Message)
	}
	other := f
	other.Range.Start.Column, other.Range.End.Column = 1, 4 // another text under it
	kept, accepted, stale = b.Filter([]Finding{other}, src)
	if accepted != 0 || len(kept) != 1 || stale != 1 {
		t.Errorf("another text: kept %v, accepted %d, stale %d", kept, accepted, stale)
	}
}

func TestReadBaselineErrors(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"version":  `{"paged_lint_baseline": 2, "findings": []}`,
		"unknown":  `{"paged_lint_baseline": 1, "findings": [], "extra": 1}`,
		"count":    `{"paged_lint_baseline": 1, "findings": [{"path": "a", "check": "c", "fingerprint": "f", "count": 0}]}`,
		"not json": `groups: []`,
	} {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadBaseline(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: got %v, want an error naming the file", name, err)
		}
	}
}

// A baseline file comes from users: any text is an error or a baseline
// that filters without panicking.
func FuzzParseBaseline(f *testing.F) {
	f.Add([]byte(`{"paged_lint_baseline": 1, "findings": [{"path": "r.yaml", "check": "alerts/for", "fingerprint": "abc", "message": "m", "count": 2}]}`))
	f.Add([]byte(`{"paged_lint_baseline": 1, "findings": null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBaseline("b.json", data)
		if err != nil {
			return
		}
		fs := []Finding{{Path: "r.yaml", Check: "alerts/for", Message: "m", Range: Range{Start: Pos{1, 1}, End: Pos{1, 3}}}}
		kept, accepted, _ := b.Filter(fs, func(string, int) string { return "abcdef" })
		if len(kept)+accepted != len(fs) {
			t.Fatalf("kept %d + accepted %d != %d", len(kept), accepted, len(fs))
		}
	})
}
