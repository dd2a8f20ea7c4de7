package rules

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestCorpusFindings lints every rule file and PrometheusRule manifest of
// the shared community corpus with the default configuration and compares
// the findings at warning and above with testdata/corpus.golden, line by
// line. Every line of the golden file has been read against its source
// rule: a new line is either a bug the rule really has or a false positive
// to fix, never something to accept with -update unread.
func TestCorpusFindings(t *testing.T) {
	corpus := filepath.Join(testbin.SharedDir(t), "corpus")
	var paths []string
	err := filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		switch filepath.Ext(p) {
		case ".yml", ".yaml", ".json":
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	files := 0
	for _, p := range paths {
		content, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if classifyCorpusFile(content) == "" {
			continue // unit-test files, Alertmanager configs, payloads: not rules
		}
		files++
		rel, _ := filepath.Rel(corpus, p)
		f := ParseFile(filepath.ToSlash(rel), content, ParseOptions{})
		for _, fd := range Lint([]*File{f}, DefaultConfig()) {
			if fd.Severity >= Warning {
				got = append(got, fd.String())
			}
		}
	}
	if files < 150 {
		t.Fatalf("only %d rule files in the corpus; is PAGED_SHARED right?", files)
	}
	compareCorpusGolden(t, "corpus.golden", "TestCorpusFindings", "a real bug, or a false positive to fix", got)
	t.Logf("%d rule files, %d findings at warning and above", files, len(got))
}

// compareCorpusGolden compares the findings on the shared corpus, got, with
// testdata/name line by line (or writes it with -update). A new finding is
// to be read, not accepted unread: readAs says what it may turn out to be.
func compareCorpusGolden(t *testing.T, name, test, readAs string, got []string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./rules -run %s -update)", err, test)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("new finding (read it: %s):\n  %s", readAs, l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("finding gone:\n  %s", l)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d findings, golden has %d", len(got), len(want))
	}
}
