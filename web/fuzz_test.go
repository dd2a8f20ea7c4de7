package web

import (
	"net/http"
	"net/http/httptest"
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

// FuzzRulesQuery: any query string on /api/v1/rules gives 200 or a 400
// with Prometheus's error body, never a panic.
func FuzzRulesQuery(f *testing.F) {
	for _, q := range []string{"type=alert", "rule_name[]=A&rule_group[]=g", "match[]={a=\"b\"}", "exclude_alerts=maybe", "match[]={", "%zz", "file[]=x&type=RECORD"} {
		f.Add(q)
	}
	ts := newTestServer(f, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	h := ts.Handler()
	f.Fuzz(func(t *testing.T, q string) {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/rules", nil)
		req.URL.RawQuery = q
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			if !strings.HasPrefix(rec.Body.String(), `{"status":"success"`) {
				t.Fatalf("200 without success body: %s", rec.Body.String())
			}
		case http.StatusBadRequest:
			if !strings.Contains(rec.Body.String(), `"errorType":"bad_data"`) {
				t.Fatalf("400 without bad_data: %s", rec.Body.String())
			}
		default:
			t.Fatalf("query %q: status %d", q, rec.Code)
		}
	})
}
