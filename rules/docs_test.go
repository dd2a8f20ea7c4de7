package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's table of checks names every registered check.
func TestREADMEListsEveryCheck(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range Checks() {
		if !strings.Contains(string(b), "| `"+ch.Name+"` |") {
			t.Errorf("README.md does not list check %s", ch.Name)
		}
		if ch.Help == "" {
			t.Errorf("check %s has no help text", ch.Name)
		}
	}
}
