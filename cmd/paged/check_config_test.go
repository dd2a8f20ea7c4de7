package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConfigExitCodes pins the exact exit codes of check-config:
// 0 valid, 1 invalid, 2 I/O error (testscript only tells zero from
// non-zero).
func TestCheckConfigExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("r.yaml", "groups: [{name: g, rules: [{alert: A, expr: vector(1)}]}]\n")
	good := write("good.yaml", "datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [r.yaml]\n")
	bad := write("bad.yaml", "datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [r.yaml]\nbogus: 1\n")
	for _, tc := range []struct {
		file     string
		code     int
		contains string
	}{
		{good, 0, "valid (1 rule files, 0 packs, 1 groups, 1 rules)"},
		{bad, 1, "bad.yaml:3:1: bogus: unknown key"},
		{filepath.Join(dir, "missing.yaml"), 2, "no such file or directory"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"check-config", tc.file}, strings.NewReader(""), &out, &errb)
		if code != tc.code {
			t.Errorf("check-config %s = exit %d, want %d\nstdout: %s\nstderr: %s", filepath.Base(tc.file), code, tc.code, out.String(), errb.String())
		}
		if !strings.Contains(out.String()+errb.String(), tc.contains) {
			t.Errorf("check-config %s output lacks %q:\nstdout: %s\nstderr: %s", filepath.Base(tc.file), tc.contains, out.String(), errb.String())
		}
	}
}
