package web

import (
	"crypto/tls"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/web/webtest"
)

// With tls_server_config, paged serves HTTPS: a client that trusts the
// certificate gets answers, plain HTTP on the same port gets none, and
// the default external URL (the links in alerts) is https.
func TestWebConfigTLS(t *testing.T) {
	files, client := webtest.WebFiles(t, webtest.TLSWebConfig)
	addr, s := serveConfig(t, limitsConfig("  config_file: web.yml\n"), files, Options{})
	base := "https://" + addr

	if code, body := call(t, client, http.MethodGet, base+"/-/ready", nil, nil); code != http.StatusOK || !strings.Contains(body, "Ready") {
		t.Errorf("GET /-/ready over HTTPS = %d %q", code, body)
	}
	if code, body := call(t, client, http.MethodGet, base+"/api/v1/alerts", nil, nil); code != http.StatusOK || !strings.HasPrefix(body, `{"status":"success"`) {
		t.Errorf("GET /api/v1/alerts over HTTPS = %d %q", code, body)
	}
	_, status := call(t, client, http.MethodGet, base+"/api/v1/status/config", nil, nil)
	for _, want := range []string{"external_url: https://127.0.0.1:9095", "config_file: " + filepath.Join(filepath.Dir(s.opts.ConfigFile), "web.yml")} {
		if !strings.Contains(status, want) {
			t.Errorf("status config lacks %q:\n%s", want, status)
		}
	}

	// Plain HTTP to the TLS port: net/http's TLS server answers 400.
	resp, err := http.Get("http://" + addr + "/-/ready")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP to the TLS port answered 200")
		}
	}
	// A client that does not trust the certificate fails the handshake.
	if _, err := http.Get(base + "/-/ready"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("GET without trusting the certificate: err = %v, want a certificate error", err)
	}
	if _, err := (&tls.Dialer{Config: &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11, InsecureSkipVerify: true}}).Dial("tcp", addr); err == nil {
		t.Errorf("TLS 1.1 accepted; exporter-toolkit's default minimum is TLS 1.2")
	}
}

// basic_auth_users guards every request; a request that passed basic
// auth also satisfies web.auth_token_file (it cannot carry the bearer
// token as well). Users are read per request: removing them brings the
// bearer token back without a reload.
func TestWebConfigBasicAuth(t *testing.T) {
	hash := testbin.BcryptHash(t, "right-pw")
	files, client := webtest.WebFiles(t, webtest.TLSWebConfig+"basic_auth_users:\n  ana: "+hash+"\n")
	addr, s := serveConfig(t, limitsConfig("  config_file: web.yml\n  auth_token_file: token\n"), files, Options{})
	base := "https://" + addr
	basic := func(user, pw string) http.Header {
		r, _ := http.NewRequest(http.MethodGet, base, nil)
		r.SetBasicAuth(user, pw)
		return r.Header
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		header http.Header
		want   int
	}{
		{"no credentials", http.MethodGet, "/api/v1/alerts", nil, http.StatusUnauthorized},
		{"wrong password", http.MethodGet, "/api/v1/alerts", basic("ana", "wrong-pw"), http.StatusUnauthorized},
		{"unknown user", http.MethodGet, "/api/v1/alerts", basic("bob", "right-pw"), http.StatusUnauthorized},
		{"right password", http.MethodGet, "/api/v1/alerts", basic("ana", "right-pw"), http.StatusOK},
		{"bearer token alone", http.MethodPost, "/-/reload", http.Header{"Authorization": {"Bearer tok-web-1"}}, http.StatusUnauthorized},
		{"reload, wrong password", http.MethodPost, "/-/reload", basic("ana", "wrong-pw"), http.StatusUnauthorized},
		{"reload, right password", http.MethodPost, "/-/reload", basic("ana", "right-pw"), http.StatusOK},
	} {
		code, body := call(t, client, tc.method, base+tc.path, nil, tc.header)
		if code != tc.want {
			t.Errorf("%s: %s %s = %d %q, want %d", tc.name, tc.method, tc.path, code, body, tc.want)
		}
	}
	if got, _ := testbin.GatherSum(s.Registry(), "paged_config_reloads_total", "result", "success"); got != 1 {
		t.Errorf("reloads = %v, want the one with the right password", got)
	}

	// Without users, basic credentials are no longer a way past the token.
	writeFile(t, filepath.Dir(s.opts.ConfigFile), "web.yml", webtest.TLSWebConfig)
	if code, _ := call(t, client, http.MethodPost, base+"/-/reload", nil, basic("ana", "right-pw")); code != http.StatusUnauthorized {
		t.Errorf("reload with basic credentials once users are gone = %d, want 401", code)
	}
	if code, body := call(t, client, http.MethodPost, base+"/-/reload", nil, http.Header{"Authorization": {"bearer tok-web-1"}}); code != http.StatusOK {
		t.Errorf("reload with the bearer token once users are gone = %d %q, want 200", code, body)
	}
}
