package notifier

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/go-chi/chi/v5"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

func serveAPI(t *testing.T, n *Notifier) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/api/v2/", n.APIHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func amtool(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// amtool warns on stderr that paged is not an Alertmanager version;
	// only stdout is the command's answer.
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out) + stderr.String(), err
	}
	return string(out), nil
}

// payloadAlerts returns "alertname/status" of each alert in a webhook body.
func payloadAlerts(t *testing.T, body []byte) []string {
	t.Helper()
	var m struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range m.Alerts {
		out = append(out, a.Labels["alertname"]+"/"+a.Status)
	}
	return out
}

// TestAmtoolSilences drives paged's API with Debian's amtool (0.25):
// add, query and expire a silence, with the bearer token required for
// changes; a silenced alert is not delivered, and is once expired.
func TestAmtoolSilences(t *testing.T) {
	bin := testbin.Require(t, "amtool")
	sink := notifiertest.NewSink(t)
	conf := fmt.Sprintf(`
route:
  receiver: hook
  group_by: [team]
  group_wait: 50ms
  group_interval: 200ms
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, sink.URL())
	n := start(t, conf, Options{AuthToken: "api-token-123"})
	url := serveAPI(t, n.Notifier)
	dir := t.TempDir()
	httpConf := filepath.Join(dir, "http.yml")
	if err := os.WriteFile(httpConf, []byte("authorization:\n  type: Bearer\n  credentials: api-token-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--alertmanager.url=" + url}
	auth := append(base, "--http.config.file="+httpConf)

	if out, err := amtool(t, bin, append(base, "silence", "add", "alertname=Silenced", "--comment=maintenance", "--author=test", "--duration=1h")...); err == nil {
		t.Fatalf("silence added without the token: %s", out)
	}
	out, err := amtool(t, bin, append(auth, "silence", "add", "alertname=Silenced", "--comment=maintenance", "--author=test", "--duration=1h")...)
	if err != nil {
		t.Fatalf("amtool silence add: %v\n%s", err, out)
	}
	id := strings.TrimSpace(out)
	if len(id) < 30 {
		t.Fatalf("silence id = %q", id)
	}

	out, err = amtool(t, bin, append(base, "silence", "query", "-o", "json")...)
	if err != nil {
		t.Fatalf("amtool silence query: %v\n%s", err, out)
	}
	var sils []struct {
		ID       string `json:"id"`
		Comment  string `json:"comment"`
		Matchers []struct {
			Name, Value string
		} `json:"matchers"`
	}
	if err := json.Unmarshal([]byte(out), &sils); err != nil {
		t.Fatalf("query output: %v\n%s", err, out)
	}
	if len(sils) != 1 || sils[0].ID != id || sils[0].Comment != "maintenance" || sils[0].Matchers[0].Value != "Silenced" {
		t.Fatalf("query = %+v, want the silence %s", sils, id)
	}

	a, b := firing("Silenced", "team", "llm"), firing("Loud", "team", "llm")
	n.Notify(context.Background(), []*rules.Alert{a, b})
	req := sink.Wait(t, 1, 10*time.Second)[0]
	if got := payloadAlerts(t, req.Body); fmt.Sprint(got) != "[Loud/firing]" {
		t.Fatalf("delivered %v, want only Loud (Silenced is silenced)", got)
	}

	if out, err := amtool(t, bin, append(auth, "silence", "expire", id)...); err != nil {
		t.Fatalf("amtool silence expire: %v\n%s", err, out)
	}
	out, err = amtool(t, bin, append(base, "silence", "query", "-q")...)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("active silences after expire: %q (%v)", out, err)
	}
	// Now the alert is no longer muted: the next flush delivers it.
	reqs := sink.Wait(t, 2, 10*time.Second)
	if got := payloadAlerts(t, reqs[1].Body); fmt.Sprint(got) != "[Loud/firing Silenced/firing]" {
		t.Fatalf("after expire delivered %v, want both", got)
	}
}

func TestInhibitedNotDelivered(t *testing.T) {
	sink := notifiertest.NewSink(t)
	conf := fmt.Sprintf(`
route:
  receiver: hook
  group_by: [instance]
  group_wait: 300ms
  group_interval: 1s
  repeat_interval: 1h
inhibit_rules:
  - source_matchers: [severity="critical"]
    target_matchers: [severity="warning"]
    equal: [instance]
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, sink.URL())
	n := start(t, conf, Options{})
	n.Notify(context.Background(), []*rules.Alert{
		firing("TargetDown", "severity", "critical", "instance", "vllm-0"),
		firing("TTFTHigh", "severity", "warning", "instance", "vllm-0"),
		firing("TTFTHigh", "severity", "warning", "instance", "vllm-1"),
	})
	reqs := sink.Wait(t, 2, 10*time.Second)
	got := map[string]bool{}
	for _, r := range reqs {
		got[strings.Join(payloadAlerts(t, r.Body), ",")] = true
	}
	if !got["TargetDown/firing"] || !got["TTFTHigh/firing"] || len(got) != 2 {
		t.Fatalf("payloads %v, want TargetDown alone for vllm-0 and TTFTHigh for vllm-1", got)
	}
}

func TestAPIStatusAndTokenGuard(t *testing.T) {
	n := start(t, fmt.Sprintf(tinyRoute, "x")+"receivers: [{name: x}]\n", Options{AuthToken: "tok"})
	url := serveAPI(t, n.Notifier)
	resp, err := http.Get(url + "/api/v2/status")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Config struct{ Original string } `json:"config"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	contains(t, "status config", st.Config.Original, "group_wait: 20ms", "receiver: x")

	req, _ := http.NewRequest(http.MethodDelete, url+"/api/v2/silence/00000000-0000-0000-0000-000000000000", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("DELETE without token: %d, want 401", resp.StatusCode)
	}
	resp, err = http.Post(url+"/api/v2/silences", "application/json", strings.NewReader(`{"matchers":[`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without token: %d, want 401", resp.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodPost, url+"/api/v2/silences", strings.NewReader(`{"matchers":[`))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("broken body with token: %d, want 400", resp.StatusCode)
	}
}

// The server mounts the handler with chi's Mount("/api/v2", ...), which
// keeps the full path: check that the API answers there.
func TestAPIUnderChiMount(t *testing.T) {
	n := start(t, fmt.Sprintf(tinyRoute, "x")+"receivers: [{name: x}]\n", Options{})
	r := chi.NewRouter()
	r.Mount("/api/v2", n.APIHandler())
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	for _, p := range []string{"/api/v2/status", "/api/v2/silences", "/api/v2/alerts", "/api/v2/receivers"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d", p, resp.StatusCode)
		}
	}
}

// The bearer scheme is case-insensitive (RFC 7235): amtool and curl users
// write "bearer" too. A wrong token stays refused whatever the case.
func TestAPITokenSchemeCaseInsensitive(t *testing.T) {
	n := start(t, fmt.Sprintf(tinyRoute, "x")+"receivers: [{name: x}]\n", Options{AuthToken: "tok-ci"})
	url := serveAPI(t, n.Notifier)
	for _, tc := range []struct {
		header string
		want   int
	}{
		{"bearer tok-ci", http.StatusBadRequest}, // past the guard: the body is broken
		{"BEARER  tok-ci", http.StatusBadRequest},
		{"bearer tok-cx", http.StatusUnauthorized},
		{"Basic tok-ci", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodPost, url+"/api/v2/silences", strings.NewReader(`{"matchers":[`))
		req.Header.Set("Authorization", tc.header)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("POST /api/v2/silences with %q: %d, want %d", tc.header, resp.StatusCode, tc.want)
		}
	}
}

// TestAPIAlertJSONCannotHold posts an alert whose start go-openapi accepts
// but JSON cannot hold (a zone 24 hours east): the webhook fails to encode
// that group, as Alertmanager's does, and the notifier goes on delivering
// the others. (An encoding error that could not be formatted once crashed
// the process here.)
func TestAPIAlertJSONCannotHold(t *testing.T) {
	sink := notifiertest.NewSink(t)
	r := start(t, fmt.Sprintf(tinyRoute, "hook")+fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, sink.URL()), Options{})
	url := serveAPI(t, r.Notifier)
	now := time.Now().UTC()
	body := fmt.Sprintf(`[{"labels":{"alertname":"EastOfTheDateLine"},"startsAt":"%s+24:00"},
		{"labels":{"alertname":"Plain"},"startsAt":%q}]`, now.Format("2006-01-02T15:04:05"), now.Format(time.RFC3339Nano))
	resp, err := http.Post(url+"/api/v2/alerts", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST: %s", resp.Status)
	}
	reqs := sink.Wait(t, 1, 20*time.Second)
	if got := payloadAlerts(t, reqs[0].Body); len(got) != 1 || got[0] != "Plain/firing" {
		t.Errorf("delivered %v, want Plain/firing", got)
	}
	waitFor(t, func() bool { return strings.Contains(r.logs.String(), "timezone hour outside of range") })
}
