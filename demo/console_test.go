package demo

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/rules"
)

var t0 = time.Date(2026, 11, 29, 16, 4, 0, 0, time.UTC)

func testLinker() linker {
	u, _ := url.Parse("http://127.0.0.1:9095")
	return newLinker(&config.Config{Global: config.GlobalConfig{ExternalURL: u}})
}

func alert(name, severity string, startsAt, endsAt time.Time) *rules.Alert {
	return &rules.Alert{
		Labels: labels.FromStrings("alertname", name, "severity", severity, "instance", "127.0.0.1:8000"),
		Annotations: labels.FromStrings(
			"summary", "vLLM KV cache 97% full",
			"runbook_url", "vllm/"+name+".md",
		),
		StartsAt: startsAt,
		EndsAt:   endsAt,
	}
}

func TestConsoleTransitions(t *testing.T) {
	var out bytes.Buffer
	now := t0
	c := newConsole(&out, false, func() time.Time { return now }, testLinker().runbook)
	ctx := context.Background()

	firing := alert("VLLMKVCacheSaturated", "warning", t0.Add(12*time.Second), t0.Add(4*time.Minute))
	now = t0.Add(12 * time.Second)
	c.notify(ctx, []*rules.Alert{firing})
	now = t0.Add(20 * time.Second)
	c.notify(ctx, []*rules.Alert{firing}) // a re-send prints nothing
	resolved := alert("VLLMKVCacheSaturated", "warning", t0.Add(12*time.Second), t0.Add(40*time.Second))
	now = t0.Add(41 * time.Second)
	c.notify(ctx, []*rules.Alert{resolved})
	c.notify(ctx, []*rules.Alert{resolved}) // and so does a repeated resolve

	want := "16:04:12  FIRING    warning   VLLMKVCacheSaturated\n" +
		indent + "vLLM KV cache 97% full\n" +
		indent + "runbook: http://127.0.0.1:9095/runbooks/vllm/VLLMKVCacheSaturated.md\n" +
		"16:04:40  RESOLVED  warning   VLLMKVCacheSaturated  after 28s\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	history, active, _ := c.snapshot()
	if active != 0 || len(history) != 1 || !history[0].Resolved.Equal(t0.Add(40*time.Second)) {
		t.Errorf("history %+v, active %d", history, active)
	}
	if v := verdict([]string{"VLLMKVCacheSaturated", "VLLMHighErrorRate"}, history); v.OK() || len(v.NotFired) != 1 || v.NotFired[0] != "VLLMHighErrorRate" {
		t.Errorf("verdict %+v", v)
	}
}

func TestConsoleColor(t *testing.T) {
	for _, color := range []bool{false, true} {
		var out bytes.Buffer
		c := newConsole(&out, color, func() time.Time { return t0 }, testLinker().runbook)
		c.notify(context.Background(), []*rules.Alert{alert("VLLMHighErrorRate", "critical", t0, t0.Add(time.Hour))})
		c.phase(1, 5, Phase{Scenario: "steady", Title: "healthy"}, t0)
		printSummary(c, nil, []string{"A"}, Verdict{NotFired: []string{"A"}}, time.Minute, webhookCounts{})
		has := strings.Contains(out.String(), "\x1b[")
		if has != color {
			t.Errorf("color %v: escape codes present = %v:\n%q", color, has, out.String())
		}
		if !strings.Contains(out.String(), "FAILED: demo incomplete: did not fire: A") {
			t.Errorf("summary lacks the verdict:\n%s", out.String())
		}
	}
}

func TestConsoleStale(t *testing.T) {
	var out bytes.Buffer
	c := newConsole(&out, false, func() time.Time { return t0 }, testLinker().runbook)
	a := alert("VLLMQueueBacklog", "warning", t0, t0.Add(time.Hour))
	c.notify(context.Background(), []*rules.Alert{a})
	stale := *a
	stale.Stale = true
	c.notify(context.Background(), []*rules.Alert{&stale})
	if !strings.Contains(out.String(), "VLLMQueueBacklog: datasource down: alert kept, marked stale") {
		t.Errorf("no stale line:\n%s", out.String())
	}
}

func TestLinker(t *testing.T) {
	l := testLinker()
	for ref, want := range map[string]string{
		"vllm/VLLMTargetDown.md":          "http://127.0.0.1:9095/runbooks/vllm/VLLMTargetDown.md",
		"/vllm/VLLMTargetDown.md":         "http://127.0.0.1:9095/runbooks/vllm/VLLMTargetDown.md",
		"https://wiki.example/runbooks/x": "https://wiki.example/runbooks/x",
		"":                                "",
		"%zz":                             "",
	} {
		if got := l.runbook(ref); got != want {
			t.Errorf("runbook(%q) = %q, want %q", ref, got, want)
		}
	}
	base, _ := url.Parse("https://runbooks.example/llm")
	ext, _ := url.Parse("http://paged:9095")
	l = newLinker(&config.Config{Global: config.GlobalConfig{ExternalURL: ext}, RunbookBaseURL: base})
	if got := l.runbook("vllm/A.md"); got != "https://runbooks.example/llm/vllm/A.md" {
		t.Errorf("with runbook_base_url: %q", got)
	}
	if got := (linker{}).runbook("vllm/A.md"); got != "" {
		t.Errorf("before the configuration is loaded: %q", got)
	}
}

func TestWebhookSink(t *testing.T) {
	var out bytes.Buffer
	c := newConsole(&out, false, func() time.Time { return t0 }, testLinker().runbook)
	srv := httptest.NewServer(webhookSink(c))
	defer srv.Close()

	post := func(body string) int {
		t.Helper()
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	firing := `{"version":"4","receiver":"r","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"A","instance":"i"}},{"status":"firing","labels":{"alertname":"A","instance":"j"}}]}`
	if code := post(firing); code != http.StatusOK {
		t.Fatalf("firing: %d", code)
	}
	c.mu.Lock()
	pending := len(c.sinkFiring)
	c.mu.Unlock()
	if pending != 2 {
		t.Errorf("%d alerts pending at the sink, want 2", pending)
	}
	resolved := `{"version":"4","receiver":"r","status":"resolved","alerts":[{"status":"resolved","labels":{"alertname":"A","instance":"i"}},{"status":"resolved","labels":{"alertname":"A","instance":"j"}}]}`
	if code := post(resolved); code != http.StatusOK {
		t.Fatalf("resolved: %d", code)
	}
	if err := c.waitSinkDrained(context.Background(), time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.webhookCounts(); got != (webhookCounts{Notifications: 2, Firing: 1, Resolved: 1}) {
		t.Errorf("counts %+v", got)
	}
	for _, want := range []string{"↳ webhook r received [FIRING] A\n", "↳ webhook r received [RESOLVED] A\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	for name, body := range map[string]string{
		"not JSON":    `{"version":`,
		"old version": `{"version":"3","alerts":[]}`,
		"wrong type":  `{"version":"4","alerts":"x"}`,
		"too big":     `{"version":"4","receiver":"` + strings.Repeat("x", maxWebhookBody) + `"}`,
	} {
		if code := post(body); code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, code)
		}
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", resp.StatusCode)
	}
	if c.webhookCounts().Notifications != 2 {
		t.Error("bad payloads were counted")
	}
}
