package rules

import (
	"strings"
	"testing"
)

func TestRuleDependency(t *testing.T) {
	parse := func(path, src string) *File { return ParseFile(path, []byte(src), ParseOptions{}) }
	base := []*File{
		parse("records.yaml", "groups:\n  - name: r\n    rules:\n      - record: job:errors:rate5m\n        expr: sum by (job) (rate(errors_total[5m]))\n      - record: job:moved:rate5m\n        expr: sum by (job) (rate(moved_total[5m]))\n"),
	}
	current := []*File{
		parse("records.yaml", "groups:\n  - name: r\n    rules: []\n"),
		parse("moved.yaml", "groups:\n  - name: m\n    rules:\n      - record: job:moved:rate5m\n        expr: sum by (job) (rate(moved_total[5m]))\n"),
		parse("alerts.yaml", "groups:\n  - name: a\n    rules:\n      - alert: Errors\n        expr: job:errors:rate5m > 1 or job:moved:rate5m > 1\n"),
	}
	removed := RemovedRecords(base, current, "main")
	if len(removed) != 1 || removed["job:errors:rate5m"].Line != 4 {
		t.Fatalf("removed = %+v, want only job:errors:rate5m (line 4); a moved rule is not removed", removed)
	}
	cfg := DefaultConfig()
	cfg.Only = []string{"rule/dependency"}
	cfg.RemovedRecords = removed
	var got []string
	for _, fd := range Lint(current, cfg) {
		if fd.Check == "rule/dependency" && fd.Severity == Warning {
			got = append(got, fd.String()+" rule="+fd.Rule+" group="+fd.Group)
		}
	}
	want := "alerts.yaml:5:15: warning [rule/dependency] job:errors:rate5m is written by the recording rule at records.yaml:4 in main, " +
		"which this change removes: nothing writes it any more, so this rule sees no data rule=Errors group=a"
	if len(got) != 1 || got[0] != want {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	// Without a base, nothing is a warning.
	cfg.RemovedRecords = nil
	for _, fd := range Lint(current, cfg) {
		if fd.Check == "rule/dependency" && fd.Severity != Info {
			t.Errorf("reported without --base: %s", fd)
		}
	}
}

// As info: a recording rule read from later in the same group is read one
// evaluation late; another group's is not reported.
func TestRuleDependencyOrder(t *testing.T) {
	f := ParseFile("o.yaml", []byte(`groups:
  - name: a
    rules:
      - alert: ReadsLater
        expr: job:x:rate5m > 1
      - record: job:x:rate5m
        expr: sum by (job) (rate(x_total[5m]))
      - alert: ReadsEarlier
        expr: job:x:rate5m > 2
  - name: b
    rules:
      - alert: OtherGroup
        expr: job:x:rate5m > 3
`), ParseOptions{})
	cfg := DefaultConfig()
	cfg.Only = []string{"rule/dependency"}
	var got []string
	for _, fd := range Lint([]*File{f}, cfg) {
		got = append(got, fd.Rule+": "+fd.Message)
	}
	want := []string{
		"ReadsLater: job:x:rate5m is written by the recording rule at line 6, later in this group: rules run in order, so this one reads the previous evaluation's value (move the recording rule above it)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
