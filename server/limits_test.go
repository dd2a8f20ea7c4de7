package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/web/webtest"
)

// serveConfig writes config (and files) into a temp dir, builds the server
// with New and runs Serve on a free loopback port until the test ends. It
// returns the address and the server.
func serveConfig(t *testing.T, config string, files map[string]string, opts Options) (string, *Server) {
	t.Helper()
	dir := webtest.ConfigDir(t, config, files)
	var eng *webtest.Engine
	opts.ConfigFile = filepath.Join(dir, "paged.yaml")
	opts.Getenv = noEnv
	opts.NewEngine = managerFactory(t, &eng)
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), s
}

var call = webtest.Call

// limitsConfig is a server with a notifier (so /api/v2 exists) and the
// given web block.
func limitsConfig(web string) string {
	return configWith("rules/basic.rules.yaml") + uiNotifier + "web:\n" + web
}

var limitsFiles = map[string]string{"rules/basic.rules.yaml": basicRules}

// silencesBody is a POST /api/v2/silences body with a comment of n bytes.
func silenceBody(n int) string {
	return fmt.Sprintf(`{"matchers":[{"name":"alertname","value":"X","isRegex":false,"isEqual":true}],"startsAt":%q,"endsAt":%q,"createdBy":"ana","comment":%q}`,
		time.Now().UTC().Format(time.RFC3339), time.Now().Add(time.Hour).UTC().Format(time.RFC3339), strings.Repeat("c", n))
}

// web.max_header_bytes is the HTTP server's header limit: a request with
// larger headers gets 431 from net/http.
func TestMaxHeaderBytes(t *testing.T) {
	addr, _ := serveConfig(t, limitsConfig("  max_header_bytes: 2KiB\n"), limitsFiles, Options{})
	base := "http://" + addr
	h := http.Header{"X-Big": {strings.Repeat("h", 64<<10)}}
	if code, _ := call(t, nil, http.MethodGet, base+"/-/healthy", nil, h); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("GET with 64KiB of headers = %d, want 431", code)
	}
	if code, body := call(t, nil, http.MethodGet, base+"/-/healthy", nil, http.Header{"X-Small": {"h"}}); code != http.StatusOK {
		t.Errorf("GET with small headers = %d %q", code, body)
	}
}

func TestLimitsConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "r.yaml", "groups: []\n")
	for _, tc := range []struct {
		web          string
		body, header int64
		alerts       int
	}{
		{"", config.DefaultMaxRequestBodyBytes, config.DefaultMaxHeaderBytes, config.DefaultMaxAlertsPerRequest},
		{"{max_request_body_bytes: 512KiB, max_header_bytes: 64KiB, max_alerts_per_request: 7}", 512 << 10, 64 << 10, 7},
		{"{max_request_body_bytes: 4MiB, max_header_bytes: 1048576}", 4 << 20, 1 << 20, config.DefaultMaxAlertsPerRequest},
		{"{max_request_body_bytes: 1.5MiB, max_header_bytes: 8KB}", 3 << 19, 8 << 10, config.DefaultMaxAlertsPerRequest},
		{"{max_request_body_bytes: '1000'}", 1000, config.DefaultMaxHeaderBytes, config.DefaultMaxAlertsPerRequest},
	} {
		conf := "datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [r.yaml]\n"
		if tc.web != "" {
			conf += "web: " + tc.web + "\n"
		}
		cfg, err := config.Parse([]byte(conf), filepath.Join(dir, "paged.yaml"), noEnv)
		if err != nil {
			t.Errorf("web %s: %v", tc.web, err)
			continue
		}
		w := cfg.Web
		if w.MaxRequestBodyBytes != tc.body || w.MaxHeaderBytes != tc.header || w.MaxAlertsPerRequest != tc.alerts {
			t.Errorf("web %s = body %d header %d alerts %d, want %d %d %d", tc.web, w.MaxRequestBodyBytes, w.MaxHeaderBytes, w.MaxAlertsPerRequest, tc.body, tc.header, tc.alerts)
		}
		red := redacted(t, cfg)
		for _, want := range []string{fmt.Sprintf("max_request_body_bytes: %d\n", tc.body), fmt.Sprintf("max_header_bytes: %d\n", tc.header), fmt.Sprintf("max_alerts_per_request: %d\n", tc.alerts)} {
			if !strings.Contains(red, want) {
				t.Errorf("redacted config lacks %q:\n%s", want, red)
			}
		}
	}
}

// A reload applies new body and alert limits to the running server; a new
// header limit needs a restart (the HTTP server holds it) and is refused.
func TestLimitsOnReload(t *testing.T) {
	addr, s := serveConfig(t, limitsConfig("  max_request_body_bytes: 4096\n"), limitsFiles, Options{})
	base := "http://" + addr
	body := silenceBody(6000)
	if code, _ := call(t, nil, http.MethodPost, base+"/api/v2/silences", strings.NewReader(body), nil); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("silence of %d bytes under a 4096-byte limit = %d, want 413", len(body), code)
	}
	writeFile(t, filepath.Dir(s.opts.ConfigFile), "paged.yaml", limitsConfig("  max_request_body_bytes: 8KiB\n"))
	if code, out := call(t, nil, http.MethodPost, base+"/-/reload", nil, nil); code != http.StatusOK {
		t.Fatalf("POST /-/reload = %d %q", code, out)
	}
	if code, out := call(t, nil, http.MethodPost, base+"/api/v2/silences", strings.NewReader(body), nil); code != http.StatusOK {
		t.Errorf("silence of %d bytes after raising the limit to 8KiB = %d %q, want 200", len(body), code, out)
	}

	writeFile(t, filepath.Dir(s.opts.ConfigFile), "paged.yaml", limitsConfig("  max_request_body_bytes: 8KiB\n  max_header_bytes: 4KiB\n"))
	code, out := call(t, nil, http.MethodPost, base+"/-/reload", nil, nil)
	if code != http.StatusInternalServerError || !strings.Contains(out, "web.max_header_bytes changed: restart paged to apply") {
		t.Errorf("reload changing web.max_header_bytes = %d %q, want a restart-required error", code, out)
	}
}

// The keys of issue 39's HTTP limits: defaults, units, and a budget for
// bodies in flight that could not hold one body of the largest size.
func TestHostileLimitsConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "r.yaml", "groups: []\n")
	conf := "datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [r.yaml]\n"
	cfg, err := config.Parse([]byte(conf), filepath.Join(dir, "paged.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := config.WebConfig{ReadTimeout: 30 * time.Second, IdleTimeout: 6 * time.Minute, MaxRequestBytesInFlight: 32 << 20, MaxLabelsPerAlert: 128,
		MaxLabelNameBytes: 1 << 10, MaxLabelValueBytes: 4 << 10, MaxRegexpSize: 4096, RegexpQueryTimeout: 10 * time.Second}
	got := cfg.Web
	if got.ReadTimeout != want.ReadTimeout || got.IdleTimeout != want.IdleTimeout || got.MaxRequestBytesInFlight != want.MaxRequestBytesInFlight ||
		got.MaxLabelsPerAlert != want.MaxLabelsPerAlert || got.MaxLabelNameBytes != want.MaxLabelNameBytes || got.MaxLabelValueBytes != want.MaxLabelValueBytes ||
		got.MaxRegexpSize != want.MaxRegexpSize || got.RegexpQueryTimeout != want.RegexpQueryTimeout {
		t.Errorf("defaults = %+v", got)
	}
	red := redacted(t, cfg)
	for _, line := range []string{"read_timeout: 30s", "idle_timeout: 6m", "max_request_bytes_in_flight: 33554432", "max_labels_per_alert: 128",
		"max_label_name_bytes: 1024", "max_label_value_bytes: 4096", "max_regexp_size: 4096", "regexp_query_timeout: 10s"} {
		if !strings.Contains(red, line+"\n") {
			t.Errorf("redacted config lacks %q:\n%s", line, red)
		}
	}
	cfg, err = config.Parse([]byte(conf+"web: {read_timeout: 5s, idle_timeout: 1m, max_request_bytes_in_flight: 8MiB, max_labels_per_alert: 40, max_label_name_bytes: 200, max_label_value_bytes: 16KiB, max_regexp_size: 1KiB, regexp_query_timeout: 2s}\n"),
		filepath.Join(dir, "paged.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Web; w.ReadTimeout != 5*time.Second || w.IdleTimeout != time.Minute || w.MaxRequestBytesInFlight != 8<<20 || w.MaxLabelsPerAlert != 40 ||
		w.MaxLabelNameBytes != 200 || w.MaxLabelValueBytes != 16<<10 || w.MaxRegexpSize != 1024 || w.RegexpQueryTimeout != 2*time.Second {
		t.Errorf("set = %+v", w)
	}
	for web, msg := range map[string]string{
		"{max_request_bytes_in_flight: 1MiB}":                     "web.max_request_bytes_in_flight (1048576 bytes) is smaller than web.max_request_body_bytes (4194304 bytes)",
		"{read_timeout: 0s}":                                      "must be greater than 0",
		"{max_labels_per_alert: -1}":                              "must be a whole number greater than 0",
		"{max_label_value_bytes: lots}":                           "invalid size",
		"{regexp_query_timeout: forever}":                         "invalid duration",
		"{max_request_body_bytes: 64MiB, max_header_bytes: 1KiB}": "smaller than web.max_request_body_bytes (67108864 bytes)",
	} {
		_, err := config.Parse([]byte(conf+"web: "+web+"\n"), filepath.Join(dir, "paged.yaml"), noEnv)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("web %s: %v, want %q", web, err, msg)
		}
	}
}

// web.idle_timeout closes a kept-alive connection that sends no further
// request.
func TestIdleTimeout(t *testing.T) {
	addr, _ := serveConfig(t, limitsConfig("  idle_timeout: 1s\n"), limitsFiles, Options{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_ = c.SetDeadline(start.Add(60 * time.Second))
	if _, err := io.WriteString(c, "GET /-/healthy HTTP/1.1\r\nHost: paged\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c) // the answer, then paged closes the idle connection
	if err != nil || !strings.HasPrefix(string(out), "HTTP/1.1 200") {
		t.Fatalf("kept-alive connection: %v, read %q; want 200 and the connection closed", err, out)
	}
	if d := time.Since(start); d < time.Second || d > 30*time.Second {
		t.Errorf("idle connection closed after %v, want after web.idle_timeout (1s)", d)
	}
}

// uiNotifier gives the test server an embedded notifier, so that
// /api/v2/silences exists.
const uiNotifier = `
storage: {path: data}
notifier:
  route: {receiver: devnull}
  receivers: [{name: devnull}]
`
