package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAllDiscoveryKnown: every mechanism this binary registers is in
// allDiscovery, and a build with every mechanism registers exactly
// allDiscovery, so a new mechanism in a Prometheus upgrade is noticed.
func TestAllDiscoveryKnown(t *testing.T) {
	got := BuiltinDiscovery()
	for _, n := range got {
		if !slices.Contains(allDiscovery, n) {
			t.Errorf("%s_sd_configs is registered but not in allDiscovery", n)
		}
	}
	switch DiscoveryBuild {
	case "all":
		if want := slices.Sorted(slices.Values(allDiscovery)); !slices.Equal(got, want) {
			t.Errorf("a paged_all_discovery build registers\n%v\nallDiscovery lists\n%v", got, want)
		}
	case "default":
		if want := []string{"consul", "dns", "file", "http"}; !slices.Equal(got, want) {
			t.Errorf("the default build registers %v, want %v (docs/embedded.md lists them)", got, want)
		}
	}
}

// TestMissingDiscovery: in the default build each scrape config of
// testdata/scrape/all (valid for Prometheus or not) gets exactly one
// problem, on its *_sd_configs key, naming the build tag and the release
// archive that have the mechanism.
func TestMissingDiscovery(t *testing.T) {
	if DiscoveryBuild == "all" {
		t.Skip("built with every discovery mechanism: TestScrapeConfigsJudgedAsPromtool/all covers testdata/scrape/all")
	}
	files, err := filepath.Glob("testdata/scrape/all/*.yaml")
	more, _ := filepath.Glob("testdata/scrape/all/prom3/*.yaml")
	if files = append(files, more...); err != nil || len(files) < 6 {
		t.Fatalf("testdata/scrape/all: %d files, %v", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			snippet, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// Where the key is in paged.yaml: four lines and four columns
			// of paged.yaml around the snippet.
			var key string
			var line, col int
			for i, l := range strings.Split(string(snippet), "\n") {
				if k, _, ok := strings.Cut(strings.TrimLeft(l, " -"), ":"); ok && strings.HasSuffix(k, "_sd_configs") {
					key, line, col = k, 4+i+1, 4+strings.Index(l, k)+1
					break
				}
			}
			dir := t.TempDir()
			writeFile(t, dir, "basic.rules.yaml", basicRules)
			indented := "    " + strings.ReplaceAll(strings.TrimRight(string(snippet), "\n"), "\n", "\n    ")
			writeFile(t, dir, "paged.yaml", "datasource:\n  type: embedded\n  embedded:\n    scrape_configs:\n"+indented+"\nrule_files: [basic.rules.yaml]\n")
			_, err = Load(filepath.Join(dir, "paged.yaml"), noEnv)
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) != 1 {
				t.Fatalf("want one problem, got %v", err)
			}
			p := ce.Problems[0]
			if p.Line != line || p.Column != col || p.Key != "datasource.embedded.scrape_configs[0]."+key {
				t.Errorf("problem at %d:%d %s, want %d:%d on %s", p.Line, p.Column, p.Key, line, col, key)
			}
			mech := strings.TrimSuffix(key, "_sd_configs")
			for _, want := range []string{"without " + mech + " discovery", "paged-full", "-tags paged_all_discovery"} {
				if !strings.Contains(p.Message, want) {
					t.Errorf("message %q lacks %q", p.Message, want)
				}
			}
		})
	}
	if _, ok := missingDiscovery("file_sd_configs"); ok {
		t.Error("file_sd_configs reported missing in the default build")
	}
	if _, ok := missingDiscovery("kubernets_sd_configs"); ok {
		t.Error("a typo reported as a missing mechanism")
	}
}
