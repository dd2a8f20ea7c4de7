package server

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/web/webtest"
)

// Options.WebConfigFile (paged run --web.config.file) wins over
// web.config_file: here the flag's file serves TLS without users, the
// key's file would ask for basic auth.
func TestWebConfigFileOptionWins(t *testing.T) {
	hash := testbin.BcryptHash(t, "pw")
	files, client := webtest.WebFiles(t, "basic_auth_users:\n  ana: "+hash+"\n")
	files["flag-web.yml"] = webtest.TLSWebConfig
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, dir, name, content)
	}
	addr, s := serveConfig(t, limitsConfig("  config_file: "+filepath.Join(dir, "web.yml")+"\n"), limitsFiles, Options{WebConfigFile: filepath.Join(dir, "flag-web.yml")})
	if code, body := call(t, client, http.MethodGet, "https://"+addr+"/api/v1/alerts", nil, nil); code != http.StatusOK {
		t.Errorf("GET over HTTPS without credentials = %d %q, want 200 (the flag's file has no users)", code, body)
	}
	if got := s.Config().Web.ConfigFile; got != filepath.Join(dir, "flag-web.yml") {
		t.Errorf("web.config_file in effect = %q, want the option's", got)
	}
	// A reload keeps the option's file: nothing to restart for.
	if err := s.Reload(); err != nil {
		t.Errorf("Reload: %v", err)
	}
}

// A web configuration file that exporter-toolkit refuses is a positioned
// problem naming the file, and never quotes a value from it.
func TestWebConfigFileProblems(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "r.yaml", "groups: []\n")
	cert := testbin.SelfSignedCert(t)
	writeFile(t, dir, "cert.pem", string(cert.CertPEM))
	for _, tc := range []struct {
		name, web, want string
	}{
		{"missing file", "", "web.config_file: invalid web configuration file " + filepath.Join(dir, "web.yml") + ": no such file or directory"},
		{"unknown key", "tls_server_confg: {}\n", "field tls_server_confg not found"},
		{"missing key file", "tls_server_config: {cert_file: cert.pem}\n", "missing one of key or key_file"},
		{"unreadable key", "tls_server_config: {cert_file: cert.pem, key_file: nope.pem}\n", "nope.pem"},
		{"not a bcrypt hash", "basic_auth_users: {ana: plain-secret-pw}\n", "bcrypt"},
		{"inline key of the wrong type", "tls_server_config: {cert_file: cert.pem, key: [inline-secret-key]}\n", "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.web != "" {
				writeFile(t, dir, "web.yml", tc.web)
			}
			_, err := config.Parse([]byte("datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [r.yaml]\nweb:\n  config_file: web.yml\n"), filepath.Join(dir, "paged.yaml"), noEnv)
			if err == nil || !strings.Contains(err.Error(), "paged.yaml:4:16: web.config_file: invalid web configuration file "+filepath.Join(dir, "web.yml")+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want the position, the file and %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), "plain-secret-pw") || strings.Contains(err.Error(), "inline-secret-key")) {
				t.Errorf("error quotes a secret: %v", err)
			}
		})
	}
}
