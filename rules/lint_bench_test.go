package rules

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// BenchmarkLintCorpus is `paged lint` on the awesome-prometheus-alerts
// rules, the corpus lint's speed and memory are compared with promtool's
// on: read and parse every file, lint them, write the text output.
func BenchmarkLintCorpus(b *testing.B) {
	dir := filepath.Join(testbin.SharedDir(b), "corpus", "samber-awesome-prometheus-alerts", "dist", "rules")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("awesome-prometheus-alerts corpus not found under PAGED_SHARED: %v", err)
	}
	paths, err := ExpandPaths([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		findings, src, err := LintFiles(nil, paths, ParseOptions{}, DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		if len(findings) == 0 {
			b.Fatal("no findings on the corpus")
		}
		if err := WriteFindings(io.Discard, FormatText, findings, src, false); err != nil {
			b.Fatal(err)
		}
	}
}
