package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// The `paged packs list` output on the README's first screen is what the
// binary prints.
func TestREADMEPacksList(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testbin.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "$ paged packs list\n")
	if !ok {
		t.Fatal("README.md shows no `$ paged packs list`")
	}
	shown, _, _ := strings.Cut(after, "```")
	if got := mainOK(t, "packs", "list"); got != shown {
		t.Errorf("README.md shows:\n%s\npaged packs list prints:\n%s", shown, got)
	}
}
