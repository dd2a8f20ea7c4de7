package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// runPaged starts Run with the real engine in the background and returns
// its base URL; the returned stop cancels it and returns Run's error.
func runPaged(t *testing.T, dir string, logs, alerts io.Writer) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			ConfigFile:  filepath.Join(dir, "paged.yaml"),
			Getenv:      noEnv,
			Logger:      slog.New(slog.NewTextHandler(logs, nil)),
			Listener:    ln,
			AlertOutput: alerts,
		})
	}()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return fmt.Errorf("Run did not return 30s after cancel")
		}
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

// poll GETs url until check accepts the answer or 30s pass. paged's engine
// runs on the wall clock against an external process here, so the test
// polls.
func poll(t *testing.T, url string, check func(code int, body string) bool) (int, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := 0, ""
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(b)
			if check(code, body) {
				return code, body
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: condition not met in 30s; last answer %d %q (err %v)", url, code, body, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// An unreachable datasource at start: paged runs, not ready, and says why
// in /-/ready and in its logs.
func TestRunUnreachableDatasource(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	dead := testbin.FreeAddr(t)
	writeFile(t, dir, "paged.yaml", fmt.Sprintf(`
datasource:
  prometheus: {url: "http://paged:pw-leak-1@%s/?token=tok-leak-2", timeout: 1s}
rule_files: [rules/basic.rules.yaml]
storage: {path: state}
`, dead))
	logs := &syncBuffer{}
	base, stop := runPaged(t, dir, logs, io.Discard)
	code, body := poll(t, base+"/-/ready", func(code int, body string) bool {
		return code == http.StatusServiceUnavailable && strings.Contains(body, "has not answered yet:")
	})
	if !strings.Contains(body, dead) {
		t.Errorf("/-/ready = %d %q does not name the datasource", code, body)
	}
	if code, _ := poll(t, base+"/-/healthy", func(code int, _ string) bool { return code == 200 }); code != 200 {
		t.Errorf("/-/healthy = %d", code)
	}
	_, status := poll(t, base+"/api/v1/status/config", func(int, string) bool { return true })
	if err := stop(); err != nil {
		t.Errorf("Run returned %v after cancel", err)
	}
	if !strings.Contains(logs.String(), dead) {
		t.Errorf("logs do not mention the unreachable datasource:\n%s", logs.String())
	}
	// The datasource's credentials appear nowhere.
	for _, out := range []string{body, logs.String(), status} {
		for _, secret := range []string{"pw-leak-1", "tok-leak-2"} {
			if strings.Contains(out, secret) {
				t.Errorf("secret %q leaked:\n%s", secret, out)
			}
		}
	}
}

// paged run against Debian's Prometheus: ready once Prometheus answers,
// the alert fires and is printed by the console sink, the API lists it.
func TestRunAgainstPrometheus(t *testing.T) {
	prom := testbin.StartPrometheus(t, "global: {scrape_interval: 1s}\n")
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	writeFile(t, dir, "paged.yaml", fmt.Sprintf(`
global: {evaluation_interval: 1s}
datasource:
  prometheus: {url: %q}
rule_files: [rules/basic.rules.yaml]
storage: {path: state}
`, prom.URL))
	alerts := &syncBuffer{}
	base, stop := runPaged(t, dir, io.Discard, alerts)
	poll(t, base+"/-/ready", func(code int, _ string) bool { return code == http.StatusOK })
	_, body := poll(t, base+"/api/v1/alerts", func(_ int, body string) bool {
		return strings.Contains(body, `"state":"firing"`)
	})
	if !strings.Contains(body, `"alertname":"AlwaysFiring"`) || !strings.Contains(body, `"summary":"value is 1"`) {
		t.Errorf("/api/v1/alerts = %s", body)
	}
	if strings.Contains(body, `"stale":true`) {
		t.Errorf("alert stale while Prometheus answers: %s", body)
	}
	_, metrics := poll(t, base+"/metrics", func(code int, _ string) bool { return code == 200 })
	for _, want := range []string{`paged_datasource_queries_total{outcome="success"}`, "prometheus_rule_group_rules{", "paged_config_last_reload_successful 1", "go_goroutines"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	// Prometheus goes away: the alert stays firing and is shown stale.
	prom.Stop()
	_, body = poll(t, base+"/api/v1/alerts", func(_ int, body string) bool {
		return strings.Contains(body, `"stale":true`)
	})
	if !strings.Contains(body, `"state":"firing"`) || !strings.Contains(body, `"alertname":"AlwaysFiring"`) {
		t.Errorf("alert not kept firing while the datasource is down: %s", body)
	}
	_, body = poll(t, base+"/api/v1/rules", func(_ int, body string) bool { return strings.Contains(body, `"health":"err"`) })
	if !strings.Contains(body, `"lastError":`) {
		t.Errorf("rules API lacks the failing rule's lastError: %s", body)
	}
	if err := stop(); err != nil {
		t.Errorf("Run returned %v after cancel", err)
	}
	if !strings.Contains(alerts.String(), "AlwaysFiring") {
		t.Errorf("console sink printed no alert:\n%s", alerts.String())
	}
}

// Reload with the real engine (no datasource needed to load rules): a
// broken rule file is reported with its position and the old rules stay;
// a good one swaps them.
func TestReloadRealEngine(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	writeFile(t, dir, "paged.yaml", fmt.Sprintf(`
datasource:
  prometheus: {url: "http://%s"}
rule_files: ["rules/*.rules.yaml"]
storage: {path: state}
`, testbin.FreeAddr(t)))
	s, err := New(Options{ConfigFile: filepath.Join(dir, "paged.yaml"), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, ok := s.eng.(io.Closer); ok {
			c.Close()
		}
	})
	names := func() string {
		var out []string
		for _, g := range s.eng.RuleGroups() {
			out = append(out, g.Name())
		}
		return strings.Join(out, ",")
	}
	if got := names(); got != "basic" {
		t.Fatalf("groups = %s", got)
	}
	writeFile(t, dir, "rules/broken.rules.yaml", brokenRules)
	err = s.Reload()
	if err == nil || !strings.Contains(err.Error(), "broken.rules.yaml:5:") {
		t.Errorf("Reload = %v, want the broken file with its position", err)
	}
	if got := names(); got != "basic" {
		t.Errorf("groups after failed reload = %s, want basic", got)
	}
	// A template that does not parse is refused as Prometheus refuses it,
	// not loaded to page "<error expanding template ...>".
	writeFile(t, dir, "rules/broken.rules.yaml", "groups:\n  - name: other\n    rules:\n      - alert: Other\n        expr: vector(1)\n        annotations:\n          summary: 'value {{ .Foo '\n")
	err = s.Reload()
	want := `broken.rules.yaml:7:27: error [alerts/template] annotation "summary": template does not parse: unclosed action`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "previous rules kept") {
		t.Errorf("Reload = %v, want %s and the previous rules kept", err, want)
	}
	if got := names(); got != "basic" {
		t.Errorf("groups after a reload with a broken template = %s, want basic", got)
	}
	writeFile(t, dir, "rules/broken.rules.yaml", otherRules)
	if err := s.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := names(); got != "basic,other" {
		t.Errorf("groups after reload = %s", got)
	}
}

// A failed reload raises the built-in PagedReloadFailed, quoting the
// problem at its position, and a good reload resolves it.
func TestReloadFailedAlert(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	writeFile(t, dir, "paged.yaml", fmt.Sprintf(`
global: {evaluation_interval: 1s}
datasource:
  prometheus: {url: "http://%s", timeout: 1s}
rule_files: ["rules/*.rules.yaml"]
storage: {path: state}
`, testbin.FreeAddr(t)))
	base, stop := runPaged(t, dir, io.Discard, io.Discard)
	poll(t, base+"/-/healthy", func(code int, _ string) bool { return code == 200 })
	reload := func() int {
		resp, err := http.Post(base+"/-/reload", "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if _, body := poll(t, base+"/api/v1/alerts", func(code int, _ string) bool { return code == 200 }); strings.Contains(body, "PagedReloadFailed") {
		t.Fatalf("PagedReloadFailed before any reload: %s", body)
	}

	writeFile(t, dir, "rules/broken.rules.yaml", "groups:\n  - name: b\n    rules:\n      - alert: B\n        expr: vector(1)\n        annotations: {summary: '{{ .Foo '}\n")
	if code := reload(); code != http.StatusInternalServerError {
		t.Errorf("reload with a broken rule file = %d", code)
	}
	_, body := poll(t, base+"/api/v1/alerts", func(_ int, body string) bool { return strings.Contains(body, "PagedReloadFailed") })
	if !strings.Contains(body, `broken.rules.yaml:6:33: error [alerts/template]`) || !strings.Contains(body, `"runbook_url":"paged/PagedReloadFailed"`) {
		t.Errorf("PagedReloadFailed does not quote the problem or lacks its runbook:\n%s", body)
	}

	writeFile(t, dir, "rules/broken.rules.yaml", otherRules)
	if code := reload(); code != http.StatusOK {
		t.Fatalf("good reload = %d", code)
	}
	poll(t, base+"/api/v1/alerts", func(_ int, body string) bool { return !strings.Contains(body, "PagedReloadFailed") })
	if err := stop(); err != nil {
		t.Errorf("Run returned %v after cancel", err)
	}
}
