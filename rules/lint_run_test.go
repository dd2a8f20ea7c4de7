package rules

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// LintFiles finds what Lint finds on the same files, in the same order,
// and keeps the source line of every finding.
func TestLintFilesAsLint(t *testing.T) {
	paths, err := ExpandPaths([]string{"testdata/checks"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := ReadFiles(paths, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := Lint(files, DefaultConfig())
	if len(want) < 100 {
		t.Fatalf("only %d findings in testdata/checks", len(want))
	}
	for range 3 { // the workers finish in a different order each time
		got, src, err := LintFiles(nil, paths, ParseOptions{}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("LintFiles found %d findings, Lint %d, or in another order", len(got), len(want))
		}
		byPath := map[string]*File{}
		for _, f := range files {
			byPath[f.Path] = f
		}
		for _, fd := range got {
			if line, want := src(fd.Path, fd.Range.Start.Line), byPath[fd.Path].Line(fd.Range.Start.Line); line != want {
				t.Errorf("%s: source line %q, want %q", fd, line, want)
			}
		}
	}
}

// A file that cannot be read stops the run before any check, with the
// error of the first such file in the order given.
func TestLintFilesReadError(t *testing.T) {
	dir := t.TempDir()
	good := "testdata/checks/alerts_for/for.bad.yaml"
	paths := []string{good, filepath.Join(dir, "missing1.yaml"), filepath.Join(dir, "missing2.yaml")}
	_, _, err := LintFiles(nil, paths, ParseOptions{}, DefaultConfig())
	if err == nil || !strings.Contains(err.Error(), "missing1.yaml") {
		t.Fatalf("err = %v, want the error of missing1.yaml", err)
	}
}

// A path given twice, as a loaded file and as a file read, shows the lines
// of the last one, as a map from path to file does.
func TestLintFilesSamePath(t *testing.T) {
	path := "testdata/checks/alerts_for/for.bad.yaml"
	loaded := ParseFile(path, []byte("# another version of the file\ngroups: []\n"), ParseOptions{})
	read, err := ReadFile(path, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found, src, err := LintFiles([]*File{loaded}, []string{path}, ParseOptions{}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatalf("no findings in %s", path)
	}
	for n := 1; n <= 3; n++ {
		if got, want := src(path, n), read.Line(n); got != want {
			t.Errorf("line %d: %q, want %q", n, got, want)
		}
	}
}
