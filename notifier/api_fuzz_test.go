package notifier

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAPIBodies posts arbitrary bodies to the mutating API endpoints: the
// handler must answer (never panic) and refuse garbage with a 4xx.
func FuzzAPIBodies(f *testing.F) {
	f.Add("/api/v2/silences", `{"matchers":[{"name":"alertname","value":"X","isRegex":false}],"startsAt":"2026-01-01T00:00:00Z","endsAt":"2036-01-01T00:00:00Z","createdBy":"a","comment":"c"}`)
	f.Add("/api/v2/silences", `{"matchers":[{"name":"a","value":"(","isRegex":true}]}`)
	f.Add("/api/v2/alerts", `[{"labels":{"alertname":"X"},"annotations":{"a":"b"}}]`)
	f.Add("/api/v2/alerts", `[{"labels":{}}]`)
	f.Add("/api/v2/silences", `{`)
	n, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	h := n.APIHandler()
	f.Fuzz(func(t *testing.T, path, body string) {
		if path != "/api/v2/silences" && path != "/api/v2/alerts" {
			path = "/api/v2/silences"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", path, body, rec.Code, rec.Body)
		}
	})
}
