package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/config"
)

const basicRules = `groups:
  - name: basic
    interval: 1s
    rules:
      - alert: AlwaysFiring
        expr: vector(1) > 0
        labels: {severity: warning}
        annotations: {summary: "value is {{ $value }}"}
      - record: basic:three
        expr: vector(3)
`

const otherRules = `groups:
  - name: other
    interval: 1s
    rules:
      - alert: OtherFiring
        expr: vector(2)
        labels: {severity: critical}
`

const brokenRules = `groups:
  - name: broken
    rules:
      - alert: Broken
        expr: sum(
`

// testServer is a Server over a managerEngine in a temp dir.
type testServer struct {
	*Server
	eng  *managerEngine
	dir  string
	logs *syncBuffer
}

type syncBuffer = testbin.SyncBuffer

func newTestServer(t testing.TB, config string, files map[string]string, env map[string]string) *testServer {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, dir, name, content)
	}
	writeFile(t, dir, "paged.yaml", config)
	ts := &testServer{dir: dir, logs: &syncBuffer{}}
	s, err := New(Options{
		ConfigFile: filepath.Join(dir, "paged.yaml"),
		Getenv:     func(k string) string { return env[k] },
		Logger:     slog.New(slog.NewTextHandler(ts.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		NewEngine:  managerFactory(t, &ts.eng),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts.Server = s
	return ts
}

// rewrite replaces the configuration file.
func (ts *testServer) rewrite(t *testing.T, config string) {
	t.Helper()
	writeFile(t, ts.dir, "paged.yaml", config)
}

// evalAll evaluates every group once at now, as the engine's loop would.
func (ts *testServer) evalAll(now time.Time) {
	for _, g := range ts.eng.RuleGroups() {
		g.Eval(context.Background(), now)
	}
}

func (ts *testServer) do(t *testing.T, method, path string, header http.Header) (int, string) {
	t.Helper()
	rec := ts.record(t, method, path, header)
	return rec.Code, rec.Body.String()
}

// record serves one request and returns the whole response.
func (ts *testServer) record(t *testing.T, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	ts.Handler().ServeHTTP(rec, req)
	return rec
}

func groupNames(groups []*promrules.Group) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g.Name())
	}
	slices.Sort(out)
	return out
}

const minimalConfig = `
datasource:
  prometheus: {url: "http://127.0.0.1:9"}
rule_files: [%s]
`

func configWith(ruleFiles string) string {
	return strings.Replace(minimalConfig, "%s", ruleFiles, 1)
}

func TestReloadSwapsRules(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"rules/other.rules.yaml": otherRules,
	}, nil)
	if got := groupNames(ts.eng.RuleGroups()); !slices.Equal(got, []string{"basic"}) {
		t.Fatalf("groups at start = %v", got)
	}
	// State of an unchanged group survives the reload.
	t0 := time.Now().Truncate(time.Second)
	ts.evalAll(t0)
	before := ts.eng.RuleGroups()[0].AlertingRules()[0].ActiveAlerts()
	if len(before) != 1 {
		t.Fatalf("want 1 active alert before reload, got %d", len(before))
	}

	ts.rewrite(t, configWith("rules/*.rules.yaml"))
	if err := ts.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := groupNames(ts.eng.RuleGroups()); !slices.Equal(got, []string{"basic", "other"}) {
		t.Fatalf("groups after reload = %v", got)
	}
	for _, g := range ts.eng.RuleGroups() {
		if g.Name() != "basic" {
			continue
		}
		after := g.AlertingRules()[0].ActiveAlerts()
		if len(after) != 1 || !after[0].ActiveAt.Equal(before[0].ActiveAt) {
			t.Errorf("basic group lost its state across reload: %+v", after)
		}
	}
	if !strings.Contains(redacted(t, ts.Config()), "rules/*.rules.yaml") {
		t.Errorf("config in effect was not swapped")
	}
	code, body := ts.do(t, http.MethodGet, "/metrics", nil)
	if code != 200 || !strings.Contains(body, "paged_config_last_reload_successful 1") || !strings.Contains(body, `paged_config_reloads_total{result="success"} 1`) {
		t.Errorf("reload metrics wrong:\n%s", grepLines(body, "paged_config"))
	}
}

func TestReloadBrokenRuleFileKeepsOldRules(t *testing.T) {
	ts := newTestServer(t, configWith("rules/*.rules.yaml"), map[string]string{
		"rules/basic.rules.yaml": basicRules,
	}, nil)
	old := ts.Config()
	writeFile(t, ts.dir, "rules/broken.rules.yaml", brokenRules)

	err := ts.Reload()
	if err == nil {
		t.Fatal("Reload with a broken rule file succeeded")
	}
	if !strings.Contains(err.Error(), "broken.rules.yaml") || !strings.Contains(err.Error(), "previous configuration kept") {
		t.Errorf("error does not name the file or say the old config runs: %v", err)
	}
	if got := groupNames(ts.eng.RuleGroups()); !slices.Equal(got, []string{"basic"}) {
		t.Errorf("groups after failed reload = %v, want the old [basic]", got)
	}
	if ts.Config() != old {
		t.Error("config was swapped by a failed reload")
	}

	// Over HTTP: 500 with the reason; the metric says the last reload failed.
	code, body := ts.do(t, http.MethodPost, "/-/reload", nil)
	if code != http.StatusInternalServerError || !strings.Contains(body, "broken.rules.yaml") {
		t.Errorf("POST /-/reload = %d %q", code, body)
	}
	_, metrics := ts.do(t, http.MethodGet, "/metrics", nil)
	if !strings.Contains(metrics, "paged_config_last_reload_successful 0") || !strings.Contains(metrics, `paged_config_reloads_total{result="failure"} 2`) {
		t.Errorf("metrics after failed reloads:\n%s", grepLines(metrics, "paged_config"))
	}

	// Fixing the file makes the next reload succeed.
	if err := os.Remove(filepath.Join(ts.dir, "rules/broken.rules.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ts.dir, "rules/other.rules.yaml", otherRules)
	code, body = ts.do(t, http.MethodPost, "/-/reload", nil)
	if code != http.StatusOK {
		t.Fatalf("POST /-/reload after fix = %d %q", code, body)
	}
	if got := groupNames(ts.eng.RuleGroups()); !slices.Equal(got, []string{"basic", "other"}) {
		t.Errorf("groups after fixed reload = %v", got)
	}
}

func TestReloadInvalidConfigKeepsOld(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	old := ts.Config()
	ts.rewrite(t, configWith("rules/basic.rules.yaml")+"unknown_block: {}\n")
	code, body := ts.do(t, http.MethodPost, "/-/reload", nil)
	if code != http.StatusBadRequest {
		t.Errorf("POST /-/reload with an unknown key = %d, want 400", code)
	}
	if !strings.Contains(body, "paged.yaml:5:1: unknown_block: unknown key") {
		t.Errorf("reload error lacks file:line:col and key: %q", body)
	}
	if ts.Config() != old {
		t.Error("config was swapped by a failed reload")
	}
	if !strings.Contains(ts.logs.String(), "reload failed") {
		t.Errorf("failed reload not logged:\n%s", ts.logs.String())
	}
}

func TestReloadRestartRequired(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	ts.rewrite(t, strings.Replace(configWith("rules/basic.rules.yaml"), "127.0.0.1:9", "127.0.0.1:10", 1))
	err := ts.Reload()
	if err == nil || !strings.Contains(err.Error(), "datasource changed: restart paged to apply") {
		t.Fatalf("Reload = %v, want a restart-required error", err)
	}
	if ts.Config().Datasource.Prometheus.URL.Host != "127.0.0.1:9" {
		t.Error("datasource changed by a refused reload")
	}
	// The global settings the engine takes with the rules do reload.
	ts.rewrite(t, "global: {evaluation_interval: 10s, external_labels: {cluster: b}}\n"+configWith("rules/basic.rules.yaml"))
	if err := ts.Reload(); err != nil {
		t.Fatalf("Reload of global settings: %v", err)
	}
	if got := ts.Config().Global; got.EvaluationInterval != 10*time.Second || got.ExternalLabels.Get("cluster") != "b" {
		t.Errorf("global after reload = %+v", got)
	}
}

// TestReloadChannel drives the reload the way SIGHUP does: cmd/paged turns
// the signal into a send on Options.Reload, and Serve reloads.
func TestReloadChannel(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	writeFile(t, dir, "rules/other.rules.yaml", otherRules)
	writeFile(t, dir, "paged.yaml", configWith("rules/basic.rules.yaml"))
	var eng *managerEngine
	reload := make(chan struct{})
	s, err := New(Options{ConfigFile: filepath.Join(dir, "paged.yaml"), Reload: reload, NewEngine: managerFactory(t, &eng), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	writeFile(t, dir, "paged.yaml", configWith("rules/*.rules.yaml"))
	// Serve handles one reload at a time: the second send is only taken
	// once the first reload has finished.
	reload <- struct{}{}
	reload <- struct{}{}
	if got := groupNames(eng.RuleGroups()); !slices.Equal(got, []string{"basic", "other"}) {
		t.Errorf("groups after reload signal = %v", got)
	}

	// The HTTP server is up on the listener, and shuts down on cancel.
	resp, err := http.Get("http://" + ln.Addr().String() + "/-/healthy")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Healthy") {
		t.Errorf("/-/healthy = %d %q", resp.StatusCode, b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve returned %v after cancel, want nil", err)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/-/healthy"); err == nil {
		t.Error("HTTP server still answers after shutdown")
	}
}

func TestReady(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	ts.eng.setReady(false, "datasource 127.0.0.1:9 has not answered yet: connection refused")
	code, body := ts.do(t, http.MethodGet, "/-/ready", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
		t.Errorf("/-/ready while not ready = %d %q", code, body)
	}
	ts.eng.setReady(true, "")
	code, body = ts.do(t, http.MethodGet, "/-/ready", nil)
	if code != http.StatusOK || !strings.Contains(body, "Ready") {
		t.Errorf("/-/ready when ready = %d %q", code, body)
	}
}

func TestAuthTokenGuardsMutatingEndpoints(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml")+"web: {auth_token_file: token}\n", map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"token":                  "tok-123\n",
	}, nil)
	for _, tc := range []struct {
		header string
		want   int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Basic tok-123", http.StatusUnauthorized},
		{"bearer tok-1234", http.StatusUnauthorized},
		{"Bearer tok-123", http.StatusOK},
		// The scheme is case-insensitive and may be followed by more
		// than one space (RFC 7235).
		{"bearer tok-123", http.StatusOK},
		{"BEARER   tok-123", http.StatusOK},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Authorization", tc.header)
		}
		code, body := ts.do(t, http.MethodPost, "/-/reload", h)
		if code != tc.want {
			t.Errorf("POST /-/reload with %q = %d %q, want %d", tc.header, code, body, tc.want)
		}
		if strings.Contains(body, "tok-123") {
			t.Errorf("response leaks the token: %q", body)
		}
	}
	if code, _ := ts.do(t, http.MethodGet, "/api/v1/rules", nil); code != http.StatusOK {
		t.Errorf("GET /api/v1/rules needs no token, got %d", code)
	}
}

func TestRulesAndAlertsAPI(t *testing.T) {
	ts := newTestServer(t, configWith("rules/*.rules.yaml"), map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"rules/other.rules.yaml": otherRules,
	}, nil)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ts.evalAll(now)

	var rulesResp struct {
		Status string
		Data   struct {
			Groups []struct {
				Name  string
				Rules []map[string]any
			}
		}
	}
	code, body := ts.do(t, http.MethodGet, "/api/v1/rules", nil)
	if code != 200 {
		t.Fatalf("/api/v1/rules = %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), &rulesResp); err != nil {
		t.Fatal(err)
	}
	if rulesResp.Status != "success" || len(rulesResp.Data.Groups) != 2 || rulesResp.Data.Groups[0].Name != "basic" {
		t.Fatalf("unexpected rules response: %s", body)
	}
	r0 := rulesResp.Data.Groups[0].Rules[0]
	if r0["name"] != "AlwaysFiring" || r0["state"] != "firing" || r0["type"] != "alerting" || r0["health"] != "ok" {
		t.Errorf("rule = %v", r0)
	}
	alerts := r0["alerts"].([]any)
	a0 := alerts[0].(map[string]any)
	if a0["value"] != "1e+00" || a0["stale"] != false || a0["activeAt"] != "2026-01-02T03:04:05Z" {
		t.Errorf("alert = %v", a0)
	}
	if ann := a0["annotations"].(map[string]any); ann["summary"] != "value is 1" {
		t.Errorf("annotation not rendered: %v", ann)
	}

	for _, tc := range []struct {
		query string
		want  []string // rule names in order
	}{
		{"type=alert", []string{"AlwaysFiring", "OtherFiring"}},
		{"type=record", []string{"basic:three"}},
		{"rule_name[]=OtherFiring", []string{"OtherFiring"}},
		{"rule_group[]=basic", []string{"AlwaysFiring", "basic:three"}},
		{"match[]=" + "{severity=\"critical\"}", []string{"OtherFiring"}},
	} {
		_, body := ts.do(t, http.MethodGet, "/api/v1/rules?"+strings.ReplaceAll(tc.query, "\"", "%22"), nil)
		var resp struct {
			Data struct {
				Groups []struct{ Rules []struct{ Name string } }
			}
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range resp.Data.Groups {
			for _, r := range g.Rules {
				names = append(names, r.Name)
			}
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("?%s -> %v, want %v", tc.query, names, tc.want)
		}
	}
	code, body = ts.do(t, http.MethodGet, "/api/v1/rules?type=bogus", nil)
	if code != 400 || !strings.Contains(body, `"errorType":"bad_data"`) {
		t.Errorf("bad type = %d %s", code, body)
	}
	_, body = ts.do(t, http.MethodGet, "/api/v1/rules?exclude_alerts=true", nil)
	if !strings.Contains(body, `"alerts":null`) {
		t.Errorf("exclude_alerts=true still lists alerts: %s", body)
	}

	code, body = ts.do(t, http.MethodGet, "/api/v1/alerts", nil)
	var alertsResp struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
				Stale  bool
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &alertsResp); err != nil || code != 200 {
		t.Fatalf("/api/v1/alerts = %d %s", code, body)
	}
	var got []string
	for _, a := range alertsResp.Data.Alerts {
		got = append(got, a.Labels["alertname"]+"/"+a.State)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"AlwaysFiring/firing", "OtherFiring/firing"}) {
		t.Errorf("alerts = %v", got)
	}
}

// An alert whose rule failed its last evaluation keeps its state and is
// shown as stale.
func TestAlertsStaleWhenRuleFails(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	ts.evalAll(time.Now())
	rule := ts.eng.RuleGroups()[0].AlertingRules()[0]
	rule.SetLastError(context.DeadlineExceeded)
	rule.SetHealth(promrules.HealthBad)
	_, body := ts.do(t, http.MethodGet, "/api/v1/alerts", nil)
	if !strings.Contains(body, `"stale":true`) || !strings.Contains(body, `"state":"firing"`) {
		t.Errorf("alert of a failing rule not firing+stale: %s", body)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	code, body := ts.do(t, http.MethodGet, "/metrics", nil)
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{"go_goroutines ", "process_start_time_seconds", "paged_config_last_reload_successful 1", "paged_config_last_reload_success_timestamp_seconds"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestRunbooks(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml")+"web: {runbooks_dir: runbooks}\n", map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"runbooks/vllm/KVCacheSaturated.md": "# KV cache saturated\n\nThe **KV cache** is full.\n\n" +
			"- check `vllm:kv_cache_usage_perc`\n- see [docs](https://docs.vllm.ai/)\n- [bad](javascript:alert(1))\n\n```\nkubectl get pods\n```\n<script>x</script>\n",
		"secret.txt": "not a runbook",
	}, nil)
	html := http.Header{"Accept": {"text/html,application/xhtml+xml"}}
	code, body := ts.do(t, http.MethodGet, "/runbooks/vllm/KVCacheSaturated", html)
	if code != 200 {
		t.Fatalf("runbook = %d %s", code, body)
	}
	for _, want := range []string{`<h1 id="kv-cache-saturated">KV cache saturated</h1>`, "<strong>KV cache</strong>", "<code>vllm:kv_cache_usage_perc</code>", `<a href="https://docs.vllm.ai/">docs</a>`, "<pre><code>kubectl get pods\n</code></pre>"} {
		if !strings.Contains(body, want) {
			t.Errorf("HTML runbook lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "javascript:") && strings.Contains(body, `href="javascript`) {
		t.Errorf("javascript: link rendered as a link")
	}
	// Raw HTML in a runbook is dropped, never passed through.
	if strings.Contains(body, "<script>") {
		t.Errorf("raw HTML passed through:\n%s", body)
	}
	// The .md link paged sends opens as the page in a browser; ?raw is
	// the source.
	code, body = ts.do(t, http.MethodGet, "/runbooks/vllm/KVCacheSaturated.md", html)
	if code != 200 || !strings.Contains(body, `<h1 id="kv-cache-saturated">`) {
		t.Errorf(".md path in a browser = %d %q, want the page", code, body)
	}
	code, body = ts.do(t, http.MethodGet, "/runbooks/vllm/KVCacheSaturated.md?raw", html)
	if code != 200 || !strings.HasPrefix(body, "# KV cache saturated") {
		t.Errorf(".md?raw = %d %q, want the markdown text", code, body)
	}
	code, body = ts.do(t, http.MethodGet, "/runbooks/vllm/", nil)
	if code != 200 || strings.TrimSpace(body) != "KVCacheSaturated" {
		t.Errorf("index = %d %q", code, body)
	}
	if code, _ := ts.do(t, http.MethodGet, "/runbooks/vllm/Nope", nil); code != 404 {
		t.Errorf("missing runbook = %d, want 404", code)
	}
	code, body = ts.do(t, http.MethodGet, "/runbooks/../secret.txt", nil)
	if code == 200 || strings.Contains(body, "not a runbook") {
		t.Errorf("path traversal served %d %q", code, body)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// redacted is cfg.Redacted for tests: it fails the test on error.
func redacted(t *testing.T, c *config.Config) string {
	t.Helper()
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	return y
}

func noEnv(string) string { return "" }

// writeFile writes a file of a test's configuration under dir.
var writeFile = testbin.WriteFile
