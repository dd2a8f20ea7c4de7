package rules

import (
	"fmt"
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

// The recording rule that counts is the first of the run to write a name:
// when a file before writes it too, a later writer in the reader's group
// is not the one read, whichever file the workers finish first.
func TestRuleDependencyAcrossFiles(t *testing.T) {
	reader := "groups:\n  - name: a\n    rules:\n      - alert: ReadsLater\n        expr: job:x:rate5m > 1\n" +
		"      - record: job:x:rate5m\n        expr: sum by (job) (rate(x_total[5m]))\n"
	writer := "groups:\n  - name: w\n    rules:\n      - record: job:x:rate5m\n        expr: sum by (job) (rate(x_total[5m]))\n"
	cfg := DefaultConfig()
	cfg.Only = []string{"rule/dependency"}
	for _, tc := range []struct {
		order []string
		want  int
	}{
		{[]string{"reader", "writer"}, 1},
		{[]string{"writer", "reader"}, 0},
	} {
		var files []*File
		for i := range 40 { // enough files for the workers to finish out of order
			for _, name := range tc.order {
				src := map[string]string{"reader": reader, "writer": writer}[name]
				files = append(files, ParseFile(fmt.Sprintf("%02d-%s.yaml", i, name), []byte(src), ParseOptions{}))
			}
		}
		got := 0
		for _, fd := range Lint(files, cfg) {
			if fd.Rule == "ReadsLater" {
				got++
				want := "00-reader.yaml:5:15: info [rule/dependency] job:x:rate5m is written by the recording rule at line 6, later in this group: " +
					"rules run in order, so this one reads the previous evaluation's value (move the recording rule above it)"
				if fd.String() != want {
					t.Errorf("%v: %s\nwant %s", tc.order, fd, want)
				}
			}
		}
		if got != tc.want {
			t.Errorf("files in the order %v: %d findings on ReadsLater, want %d", tc.order, got, tc.want)
		}
	}
}
