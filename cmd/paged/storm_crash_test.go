package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
)

// stormGroups is the number of alert groups firing at once, as in the
// reviewer's storm (issue 39); the test takes about 17 s with them on
// two cores.
const stormGroups = 300

// stormGauge is an exporter of stormGroups series,
// queue_depth{replica="r000"} and so on, all at one value.
type stormGauge struct{ v atomic.Int64 }

func (g *stormGauge) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	var b strings.Builder
	b.WriteString("# TYPE queue_depth gauge\n")
	for i := range stormGroups {
		fmt.Fprintf(&b, "queue_depth{replica=\"r%03d\"} %d\n", i, g.v.Load())
	}
	_, _ = w.Write([]byte(b.String()))
}

// stormGroup is the group a top-level message was posted for, from the
// hash of the group key in its metadata.
func stormGroup(c notifiertest.SlackCall) string {
	if c.Metadata == nil {
		return ""
	}
	g, _ := c.Metadata.EventPayload["group"].(string)
	return g
}

// TestKill9InSlackStorm is issue 39's storm: stormGroups groups fire at
// once, Slack stores each chat.postMessage at once and answers it 1-3 s
// later, and `paged run` is killed with SIGKILL while the posts are in
// flight. Before the restart, other apps post 300 messages to the channel,
// so that paged's interrupted posts are past the first page of
// conversations.history. After the restart no group has a second
// top-level message, and when the alerts resolve, every group's first
// message is edited to RESOLVED (chat.update on its ts).
func TestKill9InSlackStorm(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	g := &stormGauge{}
	g.v.Store(12)
	prom := scrapedBy(t, g)
	const channel = "C0STORM"
	slack := notifiertest.NewSlack(t, "xoxb-storm-test")
	slack.SetDelay(func(method string) time.Duration {
		if method == "chat.postMessage" {
			return time.Second + rand.N(2*time.Second)
		}
		return 0
	})
	config, web := remoteConfig(t, t.TempDir(), prom.URL, `groups:
  - name: queue
    rules:
      - alert: QueueBacklog
        expr: queue_depth > 5
        for: 1s
        labels: {severity: critical}
        annotations:
          summary: 'Queue on {{ $labels.replica }} is {{ $value }}'
          runbook_url: 'vllm/QueueBacklog'
`, fmt.Sprintf(`  route:
    receiver: oncall
    group_by: [alertname, replica]
    group_wait: 1s
    group_interval: 1s
    repeat_interval: 1h
  receivers:
    - name: oncall
      slack_configs:
        - app_token: xoxb-storm-test
          app_url: %s
          channel: %s
`, slack.APIURL(), channel))

	p := startPaged(t, bin, config, web)
	waitUntil(t, 60*time.Second, "the first Slack message", func() bool { return len(topLevel(slack.Calls())) >= 1 })
	// Kill within the first 1.5 s of the storm: every post is stored and
	// in flight, or answered if it was stored more than 1 s ago, or not
	// sent yet.
	time.Sleep(rand.N(1500 * time.Millisecond))
	p.kill9(t)
	atKill := topLevel(slack.Calls())
	for i := range 300 {
		slack.PostOther(channel, fmt.Sprintf("another app's message %d", i))
	}
	p = startPaged(t, bin, config, web)

	groups := func() map[string][]notifiertest.SlackCall {
		by := map[string][]notifiertest.SlackCall{}
		for _, c := range topLevel(slack.Calls()) {
			by[stormGroup(c)] = append(by[stormGroup(c)], c)
		}
		return by
	}
	waitUntil(t, 60*time.Second, "a message for every group", func() bool { return len(groups()) >= stormGroups })
	quiet(t, slack, 2*time.Second, 60*time.Second)

	g.v.Store(0)
	// Every group's last message resolved (its first, unless there are
	// two: checked below).
	waitUntil(t, 60*time.Second, "every group resolved", func() bool {
		for _, posts := range groups() {
			if m, ok := slack.Message(channel, posts[len(posts)-1].TS); !ok || !strings.Contains(string(m.Blocks), "RESOLVED") {
				return false
			}
		}
		return true
	})
	quiet(t, slack, 2*time.Second, 60*time.Second)

	calls := slack.Calls()
	updated := map[string]bool{}
	var history, pages int
	for _, c := range calls {
		switch c.Method {
		case "chat.update":
			updated[c.TS] = true
		case "conversations.history":
			history++
			if c.Form.Get("cursor") != "" {
				pages++
			}
		}
	}
	by := groups()
	duplicates, edited := 0, 0
	for gr, posts := range by {
		if gr == "" {
			t.Errorf("a top-level message without the group in its metadata: %+v", posts[0])
		}
		if len(posts) > 1 {
			if duplicates == 0 { // the first such group, as an example
				t.Errorf("group %s: %d top-level messages, want 1: first %s, then %s", gr, len(posts), posts[0].TS, posts[1].TS)
			}
			duplicates += len(posts) - 1
		}
		m, _ := slack.Message(channel, posts[0].TS)
		if updated[posts[0].TS] && strings.Contains(string(m.Blocks), "RESOLVED") {
			edited++
		}
	}
	logs := p.out.String()
	t.Logf("killed with %d of %d posts stored; after the restart %d groups took the ts from the journal, %d found their message in the history, %d found none; "+
		"%d groups, %d duplicate top-level messages, %d/%d first messages edited to RESOLVED; %d conversations.history calls (%d with a cursor)",
		len(atKill), stormGroups, strings.Count(logs, "the slack message journal does: using it"), strings.Count(logs, "found the message of an interrupted post"),
		strings.Count(logs, "no message of an interrupted post found"), len(by), duplicates, edited, len(by), history, pages)
	if strings.Count(logs, "found the message of an interrupted post") == 0 {
		t.Error("no group looked for an interrupted post: the kill came after every answer")
	}
	if len(by) != stormGroups {
		t.Errorf("%d groups have a message, want %d", len(by), stormGroups)
	}
	if duplicates != 0 {
		t.Errorf("%d duplicate top-level messages, want 0\n%s", duplicates, tail(logs, 40))
	}
	if edited != len(by) {
		t.Errorf("%d of %d first messages edited to RESOLVED, want all", edited, len(by))
	}
}

// quiet waits until the stand-in has had no call for d, failing after
// timeout.
func quiet(t *testing.T, s *notifiertest.Slack, d, timeout time.Duration) {
	t.Helper()
	n := len(s.Calls())
	last := time.Now()
	for deadline := time.Now().Add(timeout); time.Since(last) < d; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Slack calls still coming after %v", timeout)
		}
		if m := len(s.Calls()); m != n {
			n, last = m, time.Now()
		}
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
