package web

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// The server's token guard covers /api/v2 too, and a reload that rotates
// web.auth_token_file applies there at once: the new token creates a
// silence, the old one no longer does.
func TestTokenRotationReachesAPI(t *testing.T) {
	files := map[string]string{"rules/basic.rules.yaml": basicRules, "token": "tok-old\n"}
	addr, s := serveConfig(t, limitsConfig("  auth_token_file: token\n"), files, Options{})
	base := "http://" + addr
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	if code, body := call(t, nil, http.MethodPost, base+"/api/v2/silences", strings.NewReader(silenceBody(10)), bearer("tok-old")); code != http.StatusOK {
		t.Fatalf("silence with the token = %d %q", code, body)
	}
	writeFile(t, filepath.Dir(s.opts.ConfigFile), "token", "tok-new\n")
	if code, body := call(t, nil, http.MethodPost, base+"/-/reload", nil, bearer("tok-old")); code != http.StatusOK {
		t.Fatalf("reload = %d %q", code, body)
	}
	if code, body := call(t, nil, http.MethodPost, base+"/api/v2/silences", strings.NewReader(silenceBody(10)), bearer("tok-new")); code != http.StatusOK {
		t.Errorf("silence with the rotated token = %d %q, want 200", code, body)
	}
	if code, _ := call(t, nil, http.MethodPost, base+"/api/v2/silences", strings.NewReader(silenceBody(10)), bearer("tok-old")); code != http.StatusUnauthorized {
		t.Errorf("silence with the old token after rotation = %d, want 401", code)
	}
	if n := silenceCount(t, base); n != 2 {
		t.Errorf("%d silences, want 2", n)
	}
}
