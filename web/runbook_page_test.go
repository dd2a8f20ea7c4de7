package web

import (
	"testing"
)

func TestRewriteRunbookLink(t *testing.T) {
	for in, want := range map[string]string{
		"VLLMPreemptions.md":         "VLLMPreemptions",
		"../tgi/TGIQueueTimeHigh.md": "../tgi/TGIQueueTimeHigh",
		"X.md#confirm":               "X#confirm",
		"https://example.com/a.md":   "https://example.com/a.md",
		"#act":                       "#act",
		"README.md":                  "./",
		"notes.txt":                  "notes.txt",
	} {
		if got := rewriteRunbookLink(in, ""); got != want {
			t.Errorf("rewriteRunbookLink(%q) = %q, want %q", in, got, want)
		}
	}
	if got := rewriteRunbookLink("../tgi/T.md#a", ".html"); got != "../tgi/T.html#a" {
		t.Errorf("site link = %q", got)
	}
}
