package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/web/webtest"
)

var (
	basicRules = webtest.BasicRules
	otherRules = webtest.OtherRules
	configWith = webtest.ConfigWith
)

const brokenRules = `groups:
  - name: broken
    rules:
      - alert: Broken
        expr: sum(
`

// testServer is a Server over a webtest.Engine, configured from
// paged.yaml in its Site's dir.
type testServer struct {
	*Server
	*webtest.Site
}

func newTestServer(t testing.TB, config string, files map[string]string, env map[string]string) *testServer {
	t.Helper()
	ts := &testServer{Site: webtest.NewSite(t, config, files)}
	s, err := New(Options{
		ConfigFile: ts.ConfigFile(),
		Getenv:     func(k string) string { return env[k] },
		Logger:     ts.Logger,
		NewEngine:  managerFactory(t, &ts.Engine),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts.Server = s
	ts.HTTP = s.Handler()
	return ts
}

func groupNames(groups []*promrules.Group) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g.Name())
	}
	slices.Sort(out)
	return out
}

func TestReloadSwapsRules(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"rules/other.rules.yaml": otherRules,
	}, nil)
	if got := groupNames(ts.Engine.RuleGroups()); !slices.Equal(got, []string{"basic"}) {
		t.Fatalf("groups at start = %v", got)
	}
	// State of an unchanged group survives the reload.
	t0 := time.Now().Truncate(time.Second)
	ts.EvalAll(t0)
	before := ts.Engine.RuleGroups()[0].AlertingRules()[0].ActiveAlerts()
	if len(before) != 1 {
		t.Fatalf("want 1 active alert before reload, got %d", len(before))
	}

	ts.Rewrite(t, configWith("rules/*.rules.yaml"))
	if err := ts.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := groupNames(ts.Engine.RuleGroups()); !slices.Equal(got, []string{"basic", "other"}) {
		t.Fatalf("groups after reload = %v", got)
	}
	for _, g := range ts.Engine.RuleGroups() {
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
	code, body := ts.Do(t, http.MethodGet, "/metrics", nil)
	if code != 200 || !strings.Contains(body, "paged_config_last_reload_successful 1") || !strings.Contains(body, `paged_config_reloads_total{result="success"} 1`) {
		t.Errorf("reload metrics wrong:\n%s", grepLines(body, "paged_config"))
	}
}

func TestReloadBrokenRuleFileKeepsOldRules(t *testing.T) {
	ts := newTestServer(t, configWith("rules/*.rules.yaml"), map[string]string{
		"rules/basic.rules.yaml": basicRules,
	}, nil)
	old := ts.Config()
	writeFile(t, ts.Dir, "rules/broken.rules.yaml", brokenRules)

	err := ts.Reload()
	if err == nil {
		t.Fatal("Reload with a broken rule file succeeded")
	}
	if !strings.Contains(err.Error(), "broken.rules.yaml") || !strings.Contains(err.Error(), "previous configuration kept") {
		t.Errorf("error does not name the file or say the old config runs: %v", err)
	}
	if got := groupNames(ts.Engine.RuleGroups()); !slices.Equal(got, []string{"basic"}) {
		t.Errorf("groups after failed reload = %v, want the old [basic]", got)
	}
	if ts.Config() != old {
		t.Error("config was swapped by a failed reload")
	}

	// Over HTTP: 500 with the reason; the metric says the last reload failed.
	code, body := ts.Do(t, http.MethodPost, "/-/reload", nil)
	if code != http.StatusInternalServerError || !strings.Contains(body, "broken.rules.yaml") {
		t.Errorf("POST /-/reload = %d %q", code, body)
	}
	_, metrics := ts.Do(t, http.MethodGet, "/metrics", nil)
	if !strings.Contains(metrics, "paged_config_last_reload_successful 0") || !strings.Contains(metrics, `paged_config_reloads_total{result="failure"} 2`) {
		t.Errorf("metrics after failed reloads:\n%s", grepLines(metrics, "paged_config"))
	}

	// Fixing the file makes the next reload succeed.
	if err := os.Remove(filepath.Join(ts.Dir, "rules/broken.rules.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ts.Dir, "rules/other.rules.yaml", otherRules)
	code, body = ts.Do(t, http.MethodPost, "/-/reload", nil)
	if code != http.StatusOK {
		t.Fatalf("POST /-/reload after fix = %d %q", code, body)
	}
	if got := groupNames(ts.Engine.RuleGroups()); !slices.Equal(got, []string{"basic", "other"}) {
		t.Errorf("groups after fixed reload = %v", got)
	}
}

func TestReloadInvalidConfigKeepsOld(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	old := ts.Config()
	ts.Rewrite(t, configWith("rules/basic.rules.yaml")+"unknown_block: {}\n")
	code, body := ts.Do(t, http.MethodPost, "/-/reload", nil)
	if code != http.StatusBadRequest {
		t.Errorf("POST /-/reload with an unknown key = %d, want 400", code)
	}
	if !strings.Contains(body, "paged.yaml:5:1: unknown_block: unknown key") {
		t.Errorf("reload error lacks file:line:col and key: %q", body)
	}
	if ts.Config() != old {
		t.Error("config was swapped by a failed reload")
	}
	if !strings.Contains(ts.Logs.String(), "reload failed") {
		t.Errorf("failed reload not logged:\n%s", ts.Logs.String())
	}
}

func TestReloadRestartRequired(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	ts.Rewrite(t, strings.Replace(configWith("rules/basic.rules.yaml"), "127.0.0.1:9", "127.0.0.1:10", 1))
	err := ts.Reload()
	if err == nil || !strings.Contains(err.Error(), "datasource changed: restart paged to apply") {
		t.Fatalf("Reload = %v, want a restart-required error", err)
	}
	if ts.Config().Datasource.Prometheus.URL.Host != "127.0.0.1:9" {
		t.Error("datasource changed by a refused reload")
	}
	// The global settings the engine takes with the rules do reload.
	ts.Rewrite(t, "global: {evaluation_interval: 10s, external_labels: {cluster: b}}\n"+configWith("rules/basic.rules.yaml"))
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
	var eng *webtest.Engine
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

func TestMetricsEndpoint(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	code, body := ts.Do(t, http.MethodGet, "/metrics", nil)
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{"go_goroutines ", "process_start_time_seconds", "paged_config_last_reload_successful 1", "paged_config_last_reload_success_timestamp_seconds"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
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

type syncBuffer = testbin.SyncBuffer
