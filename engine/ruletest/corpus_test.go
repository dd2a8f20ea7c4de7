package ruletest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/engine/ruletest/ruletesttest"
	"github.com/pagedhq/paged/internal/testbin"
)

// TestCorpus runs every promtool test file of the shared corpus with the
// flags of corpus/SOURCES.md §1a and §2 and expects promtool 3's verdict.
func TestCorpus(t *testing.T) {
	shared := testbin.SharedDir(t)
	for _, c := range ruletesttest.Corpus {
		t.Run(c.Name, func(t *testing.T) {
			dir := filepath.Join(shared, c.Dir)
			var files []string
			for _, f := range c.Files {
				files = append(files, filepath.Join(dir, f))
			}
			var stdout, stderr bytes.Buffer
			res, err := ruletest.Run(context.Background(), ruletest.Options{
				Run:                   c.Run,
				IgnoreUnknownFields:   c.IgnoreUnknownFields,
				DisableAtModifier:     c.DisableAtModifier,
				DisableNegativeOffset: c.DisableNegativeOffset,
				Stdout:                &stdout,
				Stderr:                &stderr,
			}, files...)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := res.Failed(); got != c.WantFail {
				t.Fatalf("failed = %v, want %v\nstdout:\n%s\nstderr:\n%s", got, c.WantFail, stdout.String(), stderr.String())
			}
			if c.WantFail {
				if !strings.Contains(stderr.String(), "  FAILED:") || !strings.Contains(stderr.String(), c.Reason) {
					t.Errorf("a failing run must print FAILED and %q, got:\n%s", c.Reason, stderr.String())
				}
				return
			}
			if !strings.Contains(stdout.String(), "  SUCCESS") {
				t.Errorf("a passing run must print SUCCESS, got:\n%s", stdout.String())
			}
			for _, f := range res.Files {
				if len(f.Groups) == 0 {
					t.Errorf("%s: no test group ran", f.Path)
				}
			}
		})
	}
}

// TestCorpusIsComplete makes sure the table names every test file of the
// corpus folders, so a new upstream file cannot go untested.
func TestCorpusIsComplete(t *testing.T) {
	shared := testbin.SharedDir(t)
	inTable := map[string]bool{}
	for _, c := range ruletesttest.Corpus {
		for _, f := range c.Files {
			inTable[c.Dir+"/"+f] = true
		}
	}
	for _, dir := range []string{ruletesttest.PromtoolDir, ruletesttest.MixinDir} {
		entries, err := os.ReadDir(filepath.Join(shared, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(shared, dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			isTest := bytes.HasPrefix(b, []byte("tests:")) || bytes.Contains(b, []byte("\ntests:"))
			if isTest && !inTable[dir+"/"+e.Name()] {
				t.Errorf("%s/%s is a promtool test file missing from ruletesttest.Corpus", dir, e.Name())
			}
		}
	}
	for _, f := range ruletesttest.PromtoolTestFiles {
		if !inTable[ruletesttest.PromtoolDir+"/"+f] {
			t.Errorf("%s missing from the table", f)
		}
	}
	if !slices.Contains(ruletesttest.PromtoolTestFiles, "unittest.yml") {
		t.Error("PromtoolTestFiles lost unittest.yml")
	}
}
