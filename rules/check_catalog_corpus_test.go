package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// lintOnly lints files with just the given checks and returns the
// findings of those checks.
func lintOnly(t *testing.T, paths []string, checks []string) []Finding {
	t.Helper()
	var files []*File
	for _, p := range paths {
		f, err := ReadFile(p, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	cfg := DefaultConfig()
	cfg.Only = checks
	var out []Finding
	for _, fd := range Lint(files, cfg) {
		for _, c := range checks {
			if fd.Check == c {
				out = append(out, fd)
			}
		}
	}
	return out
}

// The rule packs we ship must pass the catalog and type checks with no
// finding at all.
func TestCatalogChecksOnPacks(t *testing.T) {
	root := filepath.Join(testbin.RepoRoot(t), "examples", "packs")
	paths, err := ExpandPaths([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no rule files under %s", root)
	}
	var servers []string
	for _, p := range paths {
		servers = append(servers, filepath.Base(filepath.Dir(p)))
	}
	for _, want := range []string{"vllm", "vllm-v0"} {
		if !strings.Contains(" "+strings.Join(servers, " ")+" ", " "+want+" ") {
			t.Errorf("pack %s missing from %s", want, root)
		}
	}
	for _, fd := range lintOnly(t, paths, catalogCheckNames) {
		t.Errorf("%s", fd)
	}
}

// No catalog finding on the community rules of awesome-prometheus-alerts:
// they are not about LLM servers (except LiteLLM), and the catalog checks
// must stay silent on metrics they do not know.
func TestCatalogChecksOnAwesomeCorpus(t *testing.T) {
	root := filepath.Join(testbin.SharedDir(t), "corpus", "samber-awesome-prometheus-alerts")
	if _, err := os.Stat(root); err != nil {
		t.Fatal(err)
	}
	paths, err := ExpandPaths([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 50 {
		t.Fatalf("only %d rule files under %s", len(paths), root)
	}
	checks := []string{CheckCatalogUnknownMetric, CheckCatalogCounterSuffix, CheckCatalogRemovedMetric,
		CheckCatalogSeriesSuffix, CheckCatalogLabel, CheckPromQLRateGauge, CheckPromQLLeBucket}
	for _, fd := range lintOnly(t, paths, checks) {
		t.Errorf("%s", fd)
	}
}

// BenchmarkCatalogChecks times the catalog and type checks alone on
// promtool's rules_large.yml (10,000 rules) and on the vLLM pack.
func BenchmarkCatalogChecks(b *testing.B) {
	for _, path := range []string{
		filepath.Join(testbin.SharedDir(b), "corpus", "prometheus-prometheus", "cmd", "promtool", "testdata", "rules_large.yml"),
		filepath.Join(testbin.RepoRoot(b), "examples", "packs", "vllm", "vllm.rules.yaml"),
	} {
		f, err := ReadFile(path, ParseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Only = catalogCheckNames
		b.Run(filepath.Base(path), func(b *testing.B) {
			for b.Loop() {
				Lint([]*File{f}, cfg)
			}
		})
	}
}

// Over the whole external corpus (427 community rule files, none about
// LLM servers), the catalog and type checks find exactly one real bug at
// warning level or above: a Thanos mixin alert whose histogram_quantile
// aggregates the buckets by job only. Everything else they say is info
// (counters guessed from a _total name).
func TestCatalogChecksOnWholeCorpus(t *testing.T) {
	root := filepath.Join(testbin.SharedDir(t), "corpus")
	paths, err := ExpandPaths([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fd := range lintOnly(t, paths, catalogCheckNames) {
		if fd.Severity == Info {
			continue
		}
		rel, _ := filepath.Rel(root, fd.Path)
		fd.Path = filepath.ToSlash(rel)
		got = append(got, fd.String())
	}
	want := "monitoring-mixins-website/assets/thanos/alerts.yaml:594:34: error [promql/histogram-le] " +
		"histogram_quantile needs the le label of the buckets, but sum by (job) drops it: keep le, as in sum by (le, ...)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}
