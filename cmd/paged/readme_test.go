package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/packs"
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

// The README's pack table counts each pack's alerts as the packs do.
func TestREADMEPackTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testbin.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := packs.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(readme), "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "| [`"), "`](docs/packs/")
		if !ok || !strings.HasPrefix(line, "| [`") {
			continue
		}
		cells := strings.Split(strings.Trim(rest, "| "), " | ")
		shown := cells[len(cells)-1]
		i := slices.IndexFunc(all, func(p *packs.Pack) bool { return p.Name == name })
		if i < 0 {
			t.Errorf("README.md's pack table lists %s, which is not a pack", name)
			continue
		}
		rows++
		if want := strconv.Itoa(len(all[i].Alerts())); shown != want {
			t.Errorf("README.md's pack table: %s has %s alerts, the pack %s", name, shown, want)
		}
	}
	if rows != len(all) {
		t.Errorf("README.md's pack table has %d packs, there are %d", rows, len(all))
	}
}
