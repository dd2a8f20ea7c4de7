package web

import (
	"testing"
)

func TestUIRunbookBaseURL(t *testing.T) {
	ts := newTestHandler(t, "runbook_base_url: https://wiki.example/runbooks\n")
	for ref, want := range map[string]string{
		"vllm/VLLMKVCacheSaturated":      "https://wiki.example/runbooks/vllm/VLLMKVCacheSaturated",
		"/vllm/X.md#confirm":             "https://wiki.example/runbooks/vllm/X.md#confirm",
		"https://other.example/a":        "https://other.example/a",
		"javascript:alert(document.URL)": "",
		"data:text/html,hi":              "",
		"  ":                             "",
	} {
		if got := ts.uiRunbookLink(ref); got != want {
			t.Errorf("runbook %q -> %q, want %q", ref, got, want)
		}
	}
}
