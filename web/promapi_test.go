package web

import (
	"net/http"
	"testing"
)

// In remote mode paged does not pretend to be a TSDB: the query API is
// the datasource's.
func TestPromAPIRemoteModeAbsent(t *testing.T) {
	ts := newTestServer(t, configWith("rules/ui.rules.yaml"), map[string]string{"rules/ui.rules.yaml": uiRules}, nil)
	if code, _ := ts.Do(t, http.MethodGet, "/api/v1/query?query=up", nil); code != http.StatusNotFound {
		t.Errorf("/api/v1/query in remote mode = %d, want 404", code)
	}
}
