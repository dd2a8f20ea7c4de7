package web

import (
	"strings"
	"testing"
)

// FuzzRenderMarkdown: the runbook renderer never panics and never lets a
// tag or a javascript: link through.
func FuzzRenderMarkdown(f *testing.F) {
	for _, s := range []string{"# T\n\n- a\n- b\n\n```\ncode\n```\n", "[x](javascript:alert(1))", "**<b>**", "1. a\n  more\n2. b", "`unclosed", "[a](b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(renderMarkdown(s))
		if strings.Contains(out, "<script") || strings.Contains(strings.ToLower(out), `href="javascript:`) {
			t.Fatalf("unsafe output for %q: %s", s, out)
		}
	})
}
