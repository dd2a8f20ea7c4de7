package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

func TestStatusPage(t *testing.T) {
	ts := newTestServer(t, `
datasource:
  prometheus:
    url: "http://127.0.0.1:9090"
    http_config: {basic_auth: {username: u, password: "s3cret-pass"}}
rule_files: [rules/ui.rules.yaml]
packs: [{name: vllm}]
`+uiNotifier, map[string]string{"rules/ui.rules.yaml": uiRules}, nil)
	code, body := ts.Do(t, http.MethodGet, "/status", nil)
	if code != http.StatusOK {
		t.Fatalf("/status = %d", code)
	}
	doc := testbin.ParseHTML(t, body)
	if p := testbin.Text(testbin.FindByID(doc, "packs")); !strings.Contains(p, "vllm") || !strings.Contains(p, "pack:vllm") {
		t.Errorf("packs = %q", p)
	}
	if rf := testbin.Text(testbin.FindByID(doc, "rule-files")); !strings.Contains(rf, "ui.rules.yaml") {
		t.Errorf("rule files = %q", rf)
	}
	if c := testbin.Text(testbin.FindByID(doc, "config")); !strings.Contains(c, "basic_auth") || !strings.Contains(c, "<secret>") {
		t.Errorf("configuration = %q, want it with the password redacted", c)
	}
	if strings.Contains(body, "s3cret-pass") {
		t.Errorf("the status page shows a secret")
	}
	if b := testbin.Text(testbin.FindByID(doc, "build")); !strings.Contains(b, "go1.") {
		t.Errorf("build = %q", b)
	}
	if c := testbin.Text(testbin.FindByID(doc, "cluster")); !strings.Contains(c, "disabled") {
		t.Errorf("cluster = %q", c)
	}
}
