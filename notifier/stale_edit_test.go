package notifier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// flushesPass waits until the receiver's groups have flushed k more times.
func flushesPass(t *testing.T, n *running, k int) {
	t.Helper()
	c := n.metrics.flushes.WithLabelValues("oncall")
	want := testutil.ToFloat64(c) + float64(k)
	waitFor(t, func() bool { return testutil.ToFloat64(c) >= want })
}

func stale(a *rules.Alert, s bool) *rules.Alert {
	c := *a
	c.Stale = s
	return &c
}

// A firing group's message is edited once when its datasource starts
// failing, to say so, and once when it answers again: no thread reply,
// no new message, and nothing more however many evaluations re-send the
// alerts and groups flush in between.
func TestSlackStaleEditsOncePerTransition(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, ""), Options{StoragePath: t.TempDir()})
	a := firing("KVCacheSaturated", "severity", "critical")
	n.Notify(context.Background(), []*rules.Alert{a})
	post := s.WaitCalls(t, 1, 10*time.Second)[0]
	if strings.Contains(string(post.Blocks), "datasource failing") {
		t.Fatalf("fresh alert posted as stale: %s", post.Blocks)
	}
	waitFor(t, func() bool { return nflogEntries(n.Notifier) == 1 })

	// The outage: the engine re-sends the alert stale, at every resend.
	for range 3 {
		n.Notify(context.Background(), []*rules.Alert{stale(a, true)})
		flushesPass(t, n, 3)
	}
	calls := s.WaitCalls(t, 2, 10*time.Second)
	if len(calls) != 2 || calls[1].Method != "chat.update" || calls[1].TS != post.TS {
		t.Fatalf("calls after the outage began: %+v, want one chat.update of %s", calls, post.TS)
	}
	msg, _ := s.Message("CALERTS", post.TS)
	contains(t, "message during the outage", string(msg.Blocks), "FIRING", "datasource failing", "stale: the datasource is failing")

	// The datasource answers again.
	for range 3 {
		n.Notify(context.Background(), []*rules.Alert{stale(a, false)})
		flushesPass(t, n, 3)
	}
	calls = s.WaitCalls(t, 3, 10*time.Second)
	if len(calls) != 3 || calls[2].Method != "chat.update" || calls[2].TS != post.TS {
		t.Fatalf("calls after the outage ended: %+v, want one more chat.update of %s", calls, post.TS)
	}
	msg, _ = s.Message("CALERTS", post.TS)
	if strings.Contains(string(msg.Blocks), "datasource failing") || strings.Contains(string(msg.Blocks), "stale") {
		t.Errorf("message still shows the outage after it ended: %s", msg.Blocks)
	}
	contains(t, "message after the outage", string(msg.Blocks), "FIRING [critical] KVCacheSaturated")

	// The group resolves as usual: edit and thread reply.
	n.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	calls = s.WaitCalls(t, 5, 10*time.Second)
	if calls[3].Method != "chat.update" || calls[4].ThreadTS != post.TS {
		t.Fatalf("resolution: %+v", calls[3:])
	}
	if got := len(s.Calls()); got != 5 {
		t.Errorf("%d calls, want 5: %+v", got, s.Calls())
	}
}

// The message's datasource state is in the notification log: after a
// restart during the outage, the restored stale alert edits nothing; the
// end of the outage edits once.
func TestSlackStaleRestartDoesNotEditAgain(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	dir := t.TempDir()
	a := firing("KVCacheSaturated")
	n1 := start(t, slackBotConfig(s, ""), Options{StoragePath: dir})
	n1.Notify(context.Background(), []*rules.Alert{a})
	post := s.WaitCalls(t, 1, 10*time.Second)[0]
	n1.Notify(context.Background(), []*rules.Alert{stale(a, true)})
	if c := s.WaitCalls(t, 2, 10*time.Second)[1]; c.Method != "chat.update" {
		t.Fatalf("outage: %+v", c)
	}
	// The entry with the stale flag is logged in the flush of the edit.
	flushesPass(t, n1, 2)
	n1.stop()

	n2 := start(t, slackBotConfig(s, ""), Options{StoragePath: dir})
	// The engine restores the alert as it last sent it: stale.
	n2.Notify(context.Background(), []*rules.Alert{stale(a, true)})
	n2.Notify(context.Background(), []*rules.Alert{firing("Other")})
	s.WaitCalls(t, 3, 10*time.Second)
	flushesPass(t, n2, 6)
	for _, c := range s.Calls()[2:] {
		if c.TS == post.TS || strings.Contains(string(c.Blocks), "KVCacheSaturated") {
			t.Errorf("edited or posted again after the restart: %+v", c)
		}
	}
	before := len(s.Calls())
	n2.Notify(context.Background(), []*rules.Alert{stale(a, false)})
	calls := s.WaitCalls(t, before+1, 10*time.Second)
	flushesPass(t, n2, 4)
	var edits int
	for _, c := range s.Calls()[before:] {
		if c.Method == "chat.update" && c.TS == post.TS {
			edits++
		} else if strings.Contains(string(c.Blocks), "KVCacheSaturated") {
			t.Errorf("unexpected call: %+v", c)
		}
	}
	if edits != 1 {
		t.Errorf("%d edits of the message when the outage ended, want 1: %+v", edits, calls[before:])
	}
}

// Only a message that can be edited is: with an incoming webhook a stale
// change posts nothing new.
func TestSlackStaleWebhookPostsNothing(t *testing.T) {
	s := notifiertest.NewSlack(t, "")
	conf := fmt.Sprintf(tinyRoute, "oncall") + fmt.Sprintf(`
receivers:
  - name: oncall
    slack_configs:
      - api_url: %s
`, s.WebhookURL("XXXXSECRETXXXX"))
	n := start(t, conf, Options{})
	a := firing("KVCacheSaturated")
	n.Notify(context.Background(), []*rules.Alert{a})
	s.WaitCalls(t, 1, 10*time.Second)
	n.Notify(context.Background(), []*rules.Alert{stale(a, true)})
	flushesPass(t, n, 5)
	if got := len(s.Calls()); got != 1 {
		t.Errorf("%d calls, want the first post only: %+v", got, s.Calls())
	}
}
