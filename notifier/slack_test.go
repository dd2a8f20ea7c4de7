package notifier

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"context"
	"encoding/json"
	"fmt"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"google.golang.org/protobuf/encoding/protodelim"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

const testToken = "xoxb-0000-TEST-SECRET-TOKEN"

func slackBotConfig(s *notifiertest.Slack, extra string) string {
	return fmt.Sprintf(tinyRoute, "oncall") + fmt.Sprintf(`
receivers:
  - name: oncall
    slack_configs:
      - app_token: %s
        app_url: %s
        channel: "#alerts"
%s`, testToken, s.APIURL(), extra)
}

// blockButtons returns the URLs of the buttons in a Block Kit message, by action id.
func blockButtons(t *testing.T, raw json.RawMessage) map[string][]string {
	t.Helper()
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			URL      string `json:"url"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatalf("blocks are not Block Kit JSON: %v\n%s", err, raw)
	}
	out := map[string][]string{}
	for _, b := range blocks {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			out[e.ActionID] = append(out[e.ActionID], e.URL)
		}
	}
	return out
}

// TestSlackNoHistoryLinkWithoutHistory: a paged that keeps no history
// (storage.history.enabled: false) has no timeline to link to, and its
// messages have no History button.
func TestSlackNoHistoryLinkWithoutHistory(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, ""), Options{})
	n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated", "severity", "critical", "instance", "vllm-0:8000")})
	buttons := blockButtons(t, s.WaitCalls(t, 1, 10*time.Second)[0].Blocks)
	if got := buttons["history"]; len(got) != 0 {
		t.Errorf("history button without a history: %v", got)
	}
	if len(buttons["runbook"]) != 1 || len(buttons["silence"]) != 1 {
		t.Errorf("the other buttons are gone too: %v", buttons)
	}
}

func TestSlackBotPostsThenEditsAndReplies(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	store, err := history.Open(history.Options{Path: filepath.Join(t.TempDir(), history.FileName)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	n := start(t, slackBotConfig(s, ""), Options{History: store})
	a := firing("KVCacheSaturated", "severity", "critical", "instance", "vllm-0:8000")
	n.Notify(context.Background(), []*rules.Alert{a})

	calls := s.WaitCalls(t, 1, 10*time.Second)
	post := calls[0]
	if post.Method != "chat.postMessage" || post.Channel != "#alerts" || post.ThreadTS != "" {
		t.Fatalf("first call = %+v, want a new chat.postMessage in #alerts", post)
	}
	if post.Token != testToken {
		t.Errorf("token not sent")
	}
	contains(t, "blocks", string(post.Blocks), `"type":"header"`, "FIRING [critical] KVCacheSaturated", "KV cache of KVCacheSaturated is saturated", "usage is 97% on vllm-0", "vllm-0:8000")
	buttons := blockButtons(t, post.Blocks)
	if got, want := buttons["runbook"], []string{"http://paged.example:9095/runbooks/vllm/KVCacheSaturated.md"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runbook button = %v, want %v", got, want)
	}
	if got := buttons["dashboard"]; len(got) != 1 || got[0] != "https://grafana.example/d/vllm" {
		t.Errorf("dashboard button = %v", got)
	}
	if got := buttons["history"]; len(got) != 1 || !strings.HasPrefix(got[0], "http://paged.example:9095/history?alertname=") || !strings.Contains(got[0], "&fingerprint=") {
		t.Errorf("history button = %v", got)
	}
	if got := buttons["source"]; len(got) != 1 || got[0] != "http://prometheus.example/graph?g0.expr=up" {
		t.Errorf("source button = %v", got)
	}
	if got := buttons["silence"]; len(got) != 1 || !strings.HasPrefix(got[0], "http://paged.example:9095/#/silences/new?filter=") ||
		!strings.Contains(got[0], "alertname%3D%22KVCacheSaturated%22") {
		t.Errorf("silence button = %v", got)
	}

	n.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	calls = s.WaitCalls(t, 3, 10*time.Second)
	upd, reply := calls[1], calls[2]
	if upd.Method != "chat.update" || upd.TS != post.TS || upd.Channel != "CALERTS" {
		t.Fatalf("second call = %+v, want chat.update of ts %s", upd, post.TS)
	}
	if reply.Method != "chat.postMessage" || reply.ThreadTS != post.TS {
		t.Fatalf("third call = %+v, want a reply in thread %s", reply, post.TS)
	}
	contains(t, "thread reply", reply.Text, "Resolved")
	msg, ok := s.Message("CALERTS", post.TS)
	if !ok {
		t.Fatal("original message lost")
	}
	contains(t, "edited message", string(msg.Blocks), "RESOLVED [critical] KVCacheSaturated")
	if strings.Contains(string(msg.Blocks), `"action_id":"silence"`) {
		t.Error("a resolved message still offers to silence")
	}
	// Nothing else is sent: no duplicate post for the same group.
	if got := len(s.Calls()); got != 3 {
		t.Errorf("calls = %d, want 3: %+v", got, s.Calls())
	}
}

func TestSlackRunbookBaseURL(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, ""), Options{RunbookBaseURL: "https://runbooks.example/llm"})
	abs := firing("TTFTHigh")
	abs.Annotations = abs.Annotations.Copy()
	n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated")})
	post := s.WaitCalls(t, 1, 10*time.Second)[0]
	if got := blockButtons(t, post.Blocks)["runbook"]; len(got) != 1 || got[0] != "https://runbooks.example/llm/vllm/KVCacheSaturated.md" {
		t.Errorf("runbook = %v", got)
	}
}

func TestSlackServerErrorRetries(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	s.Script(notifiertest.SlackReply{Status: 500}, notifiertest.SlackReply{Status: 503})
	n := start(t, slackBotConfig(s, ""), Options{})
	n.Notify(context.Background(), []*rules.Alert{firing("ErrorRate")})
	calls := s.WaitCalls(t, 3, 20*time.Second)
	if calls[0].Status != 500 || calls[1].Status != 503 || calls[2].Status != 200 || calls[2].TS == "" {
		t.Fatalf("calls = %+v, want 500, 503, then delivered", calls)
	}
	if got := testutil.ToFloat64(n.metrics.retries.WithLabelValues("oncall", "slack")); got != 2 {
		t.Errorf("retries = %v, want 2", got)
	}
	waitFor(t, func() bool {
		return testutil.ToFloat64(n.metrics.notifications.WithLabelValues("oncall", "slack", outcomeSuccess)) == 1
	})
}

func TestSlackOKFalseIsPermanentAndCounted(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	s.Script(notifiertest.SlackReply{Error: "channel_not_found"})
	n := start(t, slackBotConfig(s, ""), Options{})
	n.Notify(context.Background(), []*rules.Alert{firing("TargetDown")})
	calls := s.WaitCalls(t, 1, 10*time.Second)
	if calls[0].Error != "channel_not_found" {
		t.Fatalf("call = %+v", calls[0])
	}
	// The attempt is not retried within the flush; it is logged and counted.
	waitFor(t, func() bool {
		return testutil.ToFloat64(n.metrics.slackErrors.WithLabelValues("channel_not_found")) >= 1
	})
	waitFor(t, func() bool { return strings.Contains(n.logs.String(), "channel_not_found") })
	if got := testutil.ToFloat64(n.metrics.notifications.WithLabelValues("oncall", "slack", outcomePermanent)); got < 1 {
		t.Errorf("permanent failures = %v, want >= 1", got)
	}
	if got := testutil.ToFloat64(n.metrics.retries.WithLabelValues("oncall", "slack")); got != 0 {
		t.Errorf("ok:false was retried %v times", got)
	}
}

func TestSlackRestartStillEditsOriginal(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	dir := t.TempDir()
	a := firing("KVCacheSaturated", "severity", "warning")

	n1 := start(t, slackBotConfig(s, ""), Options{StoragePath: dir})
	n1.Notify(context.Background(), []*rules.Alert{a})
	post := s.WaitCalls(t, 1, 10*time.Second)[0]
	// The nflog entry is written after the send; stop flushes it to disk.
	waitFor(t, func() bool { return nflogEntries(n1.Notifier) == 1 })
	n1.stop()
	if _, err := filepath.Glob(filepath.Join(dir, "nflog")); err != nil {
		t.Fatal(err)
	}

	n2 := start(t, slackBotConfig(s, ""), Options{StoragePath: dir})
	// After a restart the engine re-sends the alert, now resolved.
	n2.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	calls := s.WaitCalls(t, 3, 10*time.Second)
	if calls[1].Method != "chat.update" || calls[1].TS != post.TS {
		t.Fatalf("after restart: %+v, want chat.update of %s", calls[1], post.TS)
	}
	if calls[2].ThreadTS != post.TS {
		t.Errorf("thread reply went to %q, want %q", calls[2].ThreadTS, post.TS)
	}
}

func TestSlackRestartDoesNotResend(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	dir := t.TempDir()
	a := firing("KVCacheSaturated")
	n1 := start(t, slackBotConfig(s, ""), Options{StoragePath: dir})
	n1.Notify(context.Background(), []*rules.Alert{a})
	s.WaitCalls(t, 1, 10*time.Second)
	waitFor(t, func() bool { return nflogEntries(n1.Notifier) == 1 })
	n1.stop()

	n2 := start(t, slackBotConfig(s, ""), Options{StoragePath: dir})
	n2.Notify(context.Background(), []*rules.Alert{a})
	// A second alert in another group proves the pipeline ran after the
	// restart; the first one must not be posted again.
	n2.Notify(context.Background(), []*rules.Alert{firing("Other")})
	calls := s.WaitCalls(t, 2, 10*time.Second)
	if !strings.Contains(string(calls[1].Blocks), "Other") {
		t.Fatalf("second call = %s, want only the new group", calls[1].Blocks)
	}
	// The KVCacheSaturated group was created first with the same
	// group_wait, so its flush (deduplicated by the restored log) ran.
	for _, c := range s.Calls()[1:] {
		if strings.Contains(string(c.Blocks), "KVCacheSaturated") {
			t.Errorf("re-sent after restart: %+v", c)
		}
	}
}

func TestSlackIncomingWebhook(t *testing.T) {
	s := notifiertest.NewSlack(t, "")
	conf := fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf(`
receivers:
  - name: hook
    slack_configs:
      - api_url: %s
`, s.WebhookURL("XXXXSECRETXXXX"))
	n := start(t, conf, Options{})
	n.Notify(context.Background(), []*rules.Alert{firing("E2ELatency", "severity", "warning")})
	c := s.WaitCalls(t, 1, 10*time.Second)[0]
	if c.Method != "webhook" {
		t.Fatalf("call = %+v", c)
	}
	contains(t, "webhook blocks", string(c.Blocks), "FIRING [warning] E2ELatency", `"action_id":"runbook"`)
	contains(t, "fallback text", c.Text, "FIRING E2ELatency")
}

func TestSlackLimitsMoreAlerts(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, "        max_alerts: 3"), Options{})
	var as []*rules.Alert
	for i := range 30 {
		as = append(as, firing("GPUHot", "gpu", fmt.Sprint(i)))
	}
	n.Notify(context.Background(), as)
	c := s.WaitCalls(t, 1, 10*time.Second)[0]
	var blocks []json.RawMessage
	if err := json.Unmarshal(c.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	if len(blocks) > 50 {
		t.Errorf("%d blocks, Slack allows 50", len(blocks))
	}
	contains(t, "blocks", string(c.Blocks), "+27 more alert(s) not shown", "GPUHot (30)")
}

// waitFor polls a condition of our own state; a bail-out after 10s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nflogEntries counts the notification log's entries.
func nflogEntries(n *Notifier) int {
	b, err := n.nflog.MarshalBinary()
	if err != nil {
		return -1
	}
	st, err := decodeNflog(b)
	if err != nil {
		return -1
	}
	return st
}

func decodeNflog(b []byte) (int, error) {
	br := bufio.NewReader(bytes.NewReader(b))
	n := 0
	for {
		var e nflogpb.MeshEntry
		err := protodelim.UnmarshalFrom(br, &e)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n++
	}
}

func TestSlackNoUpdateRepliesInThread(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, "        update_message: false"), Options{})
	a := firing("TTFTHigh")
	n.Notify(context.Background(), []*rules.Alert{a})
	first := s.WaitCalls(t, 1, 10*time.Second)[0]
	n.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	second := s.WaitCalls(t, 2, 10*time.Second)[1]
	if second.Method != "chat.postMessage" || second.ThreadTS != first.TS {
		t.Fatalf("resolve = %+v, want a full message in thread %s", second, first.TS)
	}
	contains(t, "resolved message", string(second.Blocks), "RESOLVED")
	// The lifecycle ended: firing again starts a new message, not a reply.
	n.Notify(context.Background(), []*rules.Alert{firing("TTFTHigh")})
	third := s.WaitCalls(t, 3, 10*time.Second)[2]
	if third.ThreadTS != "" || third.Method != "chat.postMessage" {
		t.Errorf("refire = %+v, want a new top-level message", third)
	}
}
