package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
)

// gauge is an exporter the test sets: queue_depth{instance="a"}.
type gauge struct{ v atomic.Int64 }

func (g *gauge) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE queue_depth gauge\nqueue_depth{instance=\"a\"} %d\n", g.v.Load())
}

// scrapedBy serves h as an exporter and starts Debian's Prometheus
// scraping it every second as job queue.
func scrapedBy(t *testing.T, h http.Handler) *testbin.Process {
	t.Helper()
	exporter := httptest.NewServer(h)
	t.Cleanup(exporter.Close)
	return testbin.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: queue
    static_configs: [{targets: [%q]}]
`, strings.TrimPrefix(exporter.URL, "http://")))
}

// remoteConfig writes rules to dir and a paged.yaml evaluating them every
// second against promURL, with its state in dir/data, its web server on a
// free port and the notifier block given (indented as under notifier:).
// It returns the paged.yaml's path and the web address.
func remoteConfig(t *testing.T, dir, promURL, rules, notifier string) (config, web string) {
	t.Helper()
	rulesFile := filepath.Join(dir, "test.rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	web = testbin.FreeAddr(t)
	config = filepath.Join(dir, "paged.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`global:
  evaluation_interval: 1s
datasource:
  type: prometheus
  prometheus:
    url: %s
    timeout: 2s
rule_files: [%q]
storage:
  path: %q
web:
  listen_address: %s
notifier:
%s`, promURL, rulesFile, filepath.Join(dir, "data"), web, notifier)), 0o644); err != nil {
		t.Fatal(err)
	}
	return config, web
}

// pagedProc is one `paged run` process.
type pagedProc struct {
	cmd *exec.Cmd
	web string
	out *testbin.SyncBuffer
}

func startPaged(t *testing.T, bin, config, web string) *pagedProc {
	t.Helper()
	p := &pagedProc{cmd: exec.Command(bin, "run", "--config", config), web: "http://" + web, out: &testbin.SyncBuffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	return p
}

func (p *pagedProc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// apiAlert is an alert of /api/v1/alerts.
type apiAlert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt string            `json:"activeAt"`
}

// alerts reads /api/v1/alerts; ok is false while nothing answers.
func (p *pagedProc) alerts() (out []apiAlert, ok bool) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(p.web + "/api/v1/alerts")
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []apiAlert `json:"alerts"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return nil, false
	}
	return body.Data.Alerts, true
}

func (p *pagedProc) ready() bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(p.web + "/-/ready")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// queueAlert returns the QueueBacklog alert of a listing.
func queueAlert(as []apiAlert) *apiAlert {
	for i := range as {
		if as[i].Labels["alertname"] == "QueueBacklog" {
			return &as[i]
		}
	}
	return nil
}

// topLevel returns the chat.postMessage calls that started a message
// (not thread replies).
func topLevel(calls []notifiertest.SlackCall) []notifiertest.SlackCall {
	var out []notifiertest.SlackCall
	for _, c := range calls {
		if c.Method == "chat.postMessage" && c.ThreadTS == "" && c.Error == "" && c.Status == http.StatusOK {
			out = append(out, c)
		}
	}
	return out
}

// TestKill9WhileFiring kills `paged run` with SIGKILL again and again while
// an alert fires against Debian's Prometheus, with Slack in bot-token
// mode. Over the whole test there is exactly one top-level Slack message
// for the group; from the first answer of each restarted process on,
// /api/v1/alerts shows the alert firing with its original activeAt; and
// the resolution edits that message and replies in its thread.
func TestKill9WhileFiring(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	g := &gauge{}
	g.v.Store(12)
	prom := scrapedBy(t, g)
	slack := notifiertest.NewSlack(t, "xoxb-crash-test")
	config, web := remoteConfig(t, t.TempDir(), prom.URL, `groups:
  - name: queue
    rules:
      - alert: QueueBacklog
        expr: queue_depth > 5
        for: 3s
        labels: {severity: critical}
        annotations:
          summary: 'Queue on {{ $labels.instance }} is {{ $value }}'
          runbook_url: 'vllm/QueueBacklog'
`, fmt.Sprintf(`  route:
    receiver: oncall
    group_by: [alertname]
    group_wait: 1s
    group_interval: 1s
    repeat_interval: 1h
  receivers:
    - name: oncall
      slack_configs:
        - app_token: xoxb-crash-test
          app_url: %s
          channel: '#alerts'
`, slack.APIURL()))

	p := startPaged(t, bin, config, web)
	waitUntil(t, 60*time.Second, "the first Slack message", func() bool { return len(topLevel(slack.Calls())) >= 1 })
	first := topLevel(slack.Calls())[0]
	var orig *apiAlert
	waitUntil(t, 10*time.Second, "the alert firing in the API", func() bool {
		as, _ := p.alerts()
		orig = queueAlert(as)
		return orig != nil && orig.State == "firing"
	})
	t.Logf("firing since %s, Slack ts %s", orig.ActiveAt, first.TS)

	// check watches a restarted process from its first answer: every
	// answer shows the alert firing with its original activeAt, until the
	// process is ready and has evaluated a few times.
	check := func(round int, p *pagedProc, watch time.Duration) {
		t.Helper()
		answers := 0
		var readyAt time.Time
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			as, ok := p.alerts()
			if !ok {
				continue
			}
			answers++
			a := queueAlert(as)
			if a == nil || a.State != "firing" || a.ActiveAt != orig.ActiveAt {
				t.Fatalf("round %d, answer %d after the restart: %+v, want firing since %s\n%s", round, answers, a, orig.ActiveAt, p.out.String())
			}
			if readyAt.IsZero() && p.ready() {
				readyAt = time.Now()
			}
			if !readyAt.IsZero() && time.Since(readyAt) >= watch {
				return
			}
		}
		t.Fatalf("round %d: not ready after 30s (%d answers)\n%s", round, answers, p.out.String())
	}

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	kills := 0
	for round := range 6 {
		// Kill at a random moment: during an evaluation, a group flush,
		// a write, or in between.
		time.Sleep(time.Duration(rng.IntN(2500)) * time.Millisecond)
		p.kill9(t)
		kills++
		p = startPaged(t, bin, config, web)
		check(round, p, 2*time.Second)
	}
	// Two kills within one evaluation interval: the second right after
	// the restarted process first answers, before it evaluated.
	for round := 6; round < 8; round++ {
		waitUntil(t, 30*time.Second, "the API", func() bool { _, ok := p.alerts(); return ok })
		p.kill9(t)
		kills++
		p = startPaged(t, bin, config, web)
	}
	check(8, p, 3*time.Second)

	// The condition clears: the one message is edited to resolved, with a
	// reply in its thread.
	g.v.Store(0)
	waitUntil(t, 60*time.Second, "the resolution in Slack", func() bool {
		m, ok := slack.Message("CALERTS", first.TS)
		return ok && strings.Contains(string(m.Blocks), "RESOLVED")
	})
	waitUntil(t, 30*time.Second, "a reply in the thread", func() bool {
		for _, c := range slack.Calls() {
			if c.Method == "chat.postMessage" && c.ThreadTS == first.TS {
				return true
			}
		}
		return false
	})
	if tl := topLevel(slack.Calls()); len(tl) != 1 {
		t.Errorf("%d top-level Slack messages over %d kills, want 1: %+v", len(tl), kills, tl)
	}
	for _, c := range slack.Calls() {
		if c.Method == "chat.update" && c.TS != first.TS {
			t.Errorf("chat.update of another message than the group's: %+v", c)
		}
	}
	t.Logf("%d kills, %d Slack calls, one top-level message", kills, len(slack.Calls()))
}
