package web

import (
	"net/http"
	"strings"
	"testing"
)

func TestRunbooks(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml")+"web: {runbooks_dir: runbooks}\n", map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"runbooks/vllm/KVCacheSaturated.md": "# KV cache saturated\n\nThe **KV cache** is full.\n\n" +
			"- check `vllm:kv_cache_usage_perc`\n- see [docs](https://docs.vllm.ai/)\n- [bad](javascript:alert(1))\n\n```\nkubectl get pods\n```\n<script>x</script>\n",
		"secret.txt": "not a runbook",
	}, nil)
	html := http.Header{"Accept": {"text/html,application/xhtml+xml"}}
	code, body := ts.Do(t, http.MethodGet, "/runbooks/vllm/KVCacheSaturated", html)
	if code != 200 {
		t.Fatalf("runbook = %d %s", code, body)
	}
	for _, want := range []string{`<h1 id="kv-cache-saturated">KV cache saturated</h1>`, "<strong>KV cache</strong>", "<code>vllm:kv_cache_usage_perc</code>", `<a href="https://docs.vllm.ai/">docs</a>`, "<pre><code>kubectl get pods\n</code></pre>"} {
		if !strings.Contains(body, want) {
			t.Errorf("HTML runbook lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "javascript:") && strings.Contains(body, `href="javascript`) {
		t.Errorf("javascript: link rendered as a link")
	}
	// Raw HTML in a runbook is dropped, never passed through.
	if strings.Contains(body, "<script>") {
		t.Errorf("raw HTML passed through:\n%s", body)
	}
	// The .md link paged sends opens as the page in a browser; ?raw is
	// the source.
	code, body = ts.Do(t, http.MethodGet, "/runbooks/vllm/KVCacheSaturated.md", html)
	if code != 200 || !strings.Contains(body, `<h1 id="kv-cache-saturated">`) {
		t.Errorf(".md path in a browser = %d %q, want the page", code, body)
	}
	code, body = ts.Do(t, http.MethodGet, "/runbooks/vllm/KVCacheSaturated.md?raw", html)
	if code != 200 || !strings.HasPrefix(body, "# KV cache saturated") {
		t.Errorf(".md?raw = %d %q, want the markdown text", code, body)
	}
	code, body = ts.Do(t, http.MethodGet, "/runbooks/vllm/", nil)
	if code != 200 || strings.TrimSpace(body) != "KVCacheSaturated" {
		t.Errorf("index = %d %q", code, body)
	}
	if code, _ := ts.Do(t, http.MethodGet, "/runbooks/vllm/Nope", nil); code != 404 {
		t.Errorf("missing runbook = %d, want 404", code)
	}
	code, body = ts.Do(t, http.MethodGet, "/runbooks/../secret.txt", nil)
	if code == 200 || strings.Contains(body, "not a runbook") {
		t.Errorf("path traversal served %d %q", code, body)
	}
}
