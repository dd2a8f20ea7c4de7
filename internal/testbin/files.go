package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to name under dir, making the directories it
// needs, and returns its path; it fails the test on error.
func WriteFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
