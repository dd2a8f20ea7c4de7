package rules

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// With --check-links, absolute runbook links are fetched with HTTP HEAD: a
// link that answers 404 is an error, one that answers 200 is fine, and
// without the flag no request is sent.
func TestRunbookCheckLinks(t *testing.T) {
	var heads int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			t.Errorf("method %s, want HEAD", r.Method)
		}
		heads++
		if r.URL.Path == "/ok" {
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	content := fmt.Sprintf(`groups:
  - name: g
    rules:
      - alert: Good
        expr: up == 0
        annotations:
          runbook_url: %[1]s/ok
      - alert: Broken
        expr: up == 0
        annotations:
          runbook_url: %[1]s/missing
`, srv.URL)
	f := ParseFile("links.yaml", []byte(content), ParseOptions{})
	cfg := DefaultConfig()
	cfg.Only = []string{"alerts/runbook"}

	if got := Lint([]*File{f}, cfg); len(got) != 0 || heads != 0 {
		t.Fatalf("without --check-links: findings %v, %d requests", got, heads)
	}

	cfg.CheckLinks = true
	got := Lint([]*File{f}, cfg)
	if len(got) != 1 {
		t.Fatalf("want one finding, got %v", got)
	}
	want := fmt.Sprintf(`links.yaml:11:24: error [alerts/runbook] runbook_url "%s/missing" does not open: HTTP Not Found (404)`, srv.URL)
	if got[0].String() != want {
		t.Errorf("got  %s\nwant %s", got[0], want)
	}
	if heads != 2 || !strings.Contains(got[0].Rule, "Broken") {
		t.Errorf("%d HEAD requests, finding on rule %q", heads, got[0].Rule)
	}
}
