package rules

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestChecks runs each check on its testdata: testdata/checks/<area>_<name>/
// holds *.yaml rule files; next to each, a .golden file with the exact text
// output of that one check (path:line:col: severity [check] message, the
// source line and the caret). Good cases have an empty golden file.
func TestChecks(t *testing.T) {
	dirs, err := filepath.Glob("testdata/checks/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no check testdata")
	}
	known := map[string]bool{}
	for _, ch := range Checks() {
		known[ch.Name] = true
	}
	for _, dir := range dirs {
		check := strings.Replace(filepath.Base(dir), "_", "/", 1)
		if !known[check] {
			t.Errorf("%s: no check named %q", dir, check)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, path := range files {
			t.Run(check+"/"+filepath.Base(path), func(t *testing.T) {
				got := lintGolden(t, path, check)
				golden := path + ".golden"
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./rules -run TestChecks -update)", err)
				}
				if got != string(want) {
					t.Errorf("findings differ from %s\n--- got\n%s--- want\n%s", golden, got, want)
				}
				isBad := strings.Contains(filepath.Base(path), ".bad.")
				if isBad && got == "" {
					t.Errorf("%s is a bad case but %s reports nothing", path, check)
				}
				if !isBad && got != "" {
					t.Errorf("%s is a good case but %s reports:\n%s", path, check, got)
				}
			})
		}
	}
}

func lintGolden(t *testing.T, path, check string) string {
	t.Helper()
	if strings.HasPrefix(check, "notifier/") {
		return lintNotifierGolden(t, path, check)
	}
	f, err := ReadFile(path, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Only = []string{check}
	// Loader problems of other checks are not this check's business.
	var fs []Finding
	for _, fd := range Lint([]*File{f}, cfg) {
		if fd.Check == check {
			fs = append(fs, fd)
		}
	}
	var buf bytes.Buffer
	src := func(_ string, line int) string { return f.Line(line) }
	if err := WriteFindings(&buf, FormatText, fs, src, false); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
