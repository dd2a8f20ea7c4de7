package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestRunWebConfigFlag runs a real `paged run --web.config.file` process
// with a relative flag path: it serves HTTPS with the test certificate and
// basic auth from that file (over paged.yaml's web.config_file, which
// asks for neither), refuses plain HTTP, and stops cleanly on SIGTERM.
func TestRunWebConfigFlag(t *testing.T) {
	paged, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	dir := t.TempDir()
	cert := testbin.SelfSignedCert(t)
	addr := testbin.FreeAddr(t)
	files := map[string]string{
		"tls/cert.pem": string(cert.CertPEM),
		"tls/key.pem":  string(cert.KeyPEM),
		"flag-web.yml": "tls_server_config: {cert_file: tls/cert.pem, key_file: tls/key.pem}\nbasic_auth_users:\n  ana: " + testbin.BcryptHash(t, "right-pw") + "\n",
		"key-web.yml":  "http_server_config: {headers: {X-Frame-Options: deny}}\n",
		"rules.yaml":   "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: vector(1)\n",
		"paged.yaml": fmt.Sprintf("datasource: {prometheus: {url: 'http://%s', timeout: 1s}}\nrule_files: [rules.yaml]\nstorage: {path: data}\nweb:\n  listen_address: %s\n  config_file: key-web.yml\n",
			testbin.FreeAddr(t), addr),
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := &testbin.SyncBuffer{}
	cmd := exec.Command(paged, "run", "--config", "paged.yaml", "--web.config.file", "flag-web.yml")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})

	client := cert.Client()
	get := func(user, pw string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/api/v1/alerts", nil)
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	// The process starts listening some time after it starts: poll (a
	// bail-out, not a timing assertion).
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := get("ana", "right-pw")
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("paged did not answer over HTTPS in 30s (last: %d, %v); output:\n%s", code, err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The flag's file is the one in effect: paged.yaml's asks for no users.
	if code, body, err := get("", ""); err != nil || code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d %q %v, want 401", code, body, err)
	}
	if code, body, err := get("ana", "wrong-pw"); err != nil || code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d %q %v, want 401", code, body, err)
	}
	if code, body, err := get("ana", "right-pw"); err != nil || code != http.StatusOK || !strings.HasPrefix(body, `{"status":"success"`) {
		t.Errorf("right password: %d %q %v, want 200 with the alerts", code, body, err)
	}
	if resp, err := http.Get("http://" + addr + "/api/v1/alerts"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP answered 200 on the TLS port")
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Errorf("paged run exited with %v after SIGTERM; output:\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "TLS is enabled.") {
		t.Errorf("log does not say TLS is on:\n%s", out.String())
	}
}
