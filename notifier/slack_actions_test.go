package notifier

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"github.com/prometheus/alertmanager/silence"
	"github.com/prometheus/alertmanager/silence/silencepb"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

const testSigningSecret = "8f742231b10e8888abcd99yyyzzz85a5"

func interactiveConfig(s *notifiertest.Slack, repeat string, extra string) string {
	return fmt.Sprintf(`
route:
  receiver: oncall
  group_by: [alertname]
  group_wait: 20ms
  group_interval: 100ms
  repeat_interval: %s
receivers:
  - name: oncall
    slack_configs:
      - app_token: %s
        app_url: %s
        channel: "#alerts"
slack_interactivity:
  mode: http
  signing_secret: %s
%s`, repeat, testToken, s.APIURL(), testSigningSecret, extra)
}

// buttonValues returns the value of each button of a message, by action id.
func buttonValues(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	var blocks []struct {
		Type     string `json:"type"`
		BlockID  string `json:"block_id"`
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	out := map[string]string{}
	for _, b := range blocks {
		if b.Type == "actions" && b.BlockID == actionsBlockID {
			for _, e := range b.Elements {
				out[e.ActionID] = e.Value
			}
		}
	}
	return out
}

var actionSeq int64

// pressPayload is the block_actions payload Slack sends for a press.
func pressPayload(action, value, user, channel, ts string) string {
	actionSeq++
	ats := fmt.Sprintf("%d.%06d", time.Now().Unix(), actionSeq)
	p := map[string]any{
		"type":      "block_actions",
		"user":      map[string]any{"id": user, "username": "ana", "name": "ana", "team_id": "T1"},
		"team":      map[string]any{"id": "T1", "domain": "acme"},
		"channel":   map[string]any{"id": channel, "name": "alerts"},
		"container": map[string]any{"type": "message", "message_ts": ts, "channel_id": channel},
		"message":   map[string]any{"type": "message", "ts": ts},
		"actions":   []any{map[string]any{"type": "button", "action_id": action, "block_id": actionsBlockID, "value": value, "action_ts": ats}},
	}
	b, _ := json.Marshal(p)
	return "payload=" + url.QueryEscape(string(b))
}

func signedRequest(body, secret string, at time.Time) *http.Request {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", ts, body)
	r := httptest.NewRequest(http.MethodPost, "/slack/interactions", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("X-Slack-Request-Timestamp", ts)
	r.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return r
}

func serveInteraction(n *Notifier, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	n.SlackInteractionsHandler().ServeHTTP(w, r)
	return w
}

// postAlert starts paged with interactive Slack messages repeated every
// repeat (interactiveConfig), fires a and returns the message it posted.
func postAlert(t *testing.T, repeat string, opts Options, a *rules.Alert) (*notifiertest.Slack, *running, notifiertest.SlackCall) {
	t.Helper()
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, interactiveConfig(s, repeat, ""), opts)
	n.Notify(context.Background(), []*rules.Alert{a})
	return s, n, s.WaitCalls(t, 1, 10*time.Second)[0]
}

// pressOK presses the button action, of value, on the message at ts in
// #alerts (CALERTS, the stand-in's id of it) as user, in a request signed
// as Slack signs it, and fails the test unless paged answers 200.
func pressOK(t *testing.T, n *Notifier, action, value, user, ts string) {
	t.Helper()
	p := pressPayload(action, value, user, "CALERTS", ts)
	if w := serveInteraction(n, signedRequest(p, testSigningSecret, time.Now())); w.Code != http.StatusOK {
		t.Fatalf("%s press: %d %s", action, w.Code, w.Body)
	}
}

// waitMessage waits until the group's message says want.
func waitMessage(t *testing.T, s *notifiertest.Slack, channel, ts, want string) notifiertest.SlackCall {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var last notifiertest.SlackCall
		for _, c := range s.Calls() {
			if c.TS == ts && (c.Method == "chat.update" || c.Method == "chat.postMessage") {
				last = c
			}
		}
		m, ok := s.Message(last.Channel, ts)
		shown := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(m.Blocks))
		if ok && strings.Contains(shown, want) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("message never said %q; it is:\n%s", want, last.Blocks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSlackActionsHTTP(t *testing.T) {
	s, n, post := postAlert(t, "1h", Options{}, firing("KVCacheSaturated", "severity", "critical", "instance", "vllm-0:8000"))
	vals := buttonValues(t, post.Blocks)
	for _, id := range []string{ActionAck, ActionSilence1h, ActionSilence4h, ActionSilence24h, ActionSilenceUntilResolved} {
		if vals[id] == "" {
			t.Fatalf("no %s button with a value in %s", id, post.Blocks)
		}
	}

	ack := pressPayload(ActionAck, vals[ActionAck], "U0ANA", "CALERTS", post.TS)
	req := signedRequest(ack, testSigningSecret, time.Now())
	if w := serveInteraction(n.Notifier, req); w.Code != http.StatusOK {
		t.Fatalf("signed press: %d %s", w.Code, w.Body)
	}
	m := waitMessage(t, s, post.Channel, post.TS, "Acknowledged by <@U0ANA>")
	if v := buttonValues(t, m.Blocks); v[ActionUnack] == "" || v[ActionAck] != "" {
		t.Errorf("acknowledged message buttons = %v, want paged.unack instead of paged.ack", v)
	}

	acks := n.Acknowledgements()
	if len(acks) != 1 || acks[0].UserID != "U0ANA" || acks[0].UserName != "ana" || acks[0].Receiver != "oncall" {
		t.Errorf("Acknowledgements() = %+v, want ana's", acks)
	}
	held := n.HeldAlerts(context.Background())
	if len(held) != 1 || held[0].Ack == nil || held[0].Ack.UserID != "U0ANA" {
		t.Errorf("held alert's acknowledgement = %+v", held)
	}

	// The same request again, byte for byte: replayed, refused.
	if w := serveInteraction(n.Notifier, signedRequest(ack, testSigningSecret, time.Unix(mustInt(t, req.Header.Get("X-Slack-Request-Timestamp")), 0))); w.Code != http.StatusUnauthorized {
		t.Errorf("replayed request: %d, want 401", w.Code)
	}
	// The same press signed anew (Slack delivering it again) is
	// accepted and acts once: its action_ts was applied.
	if w := serveInteraction(n.Notifier, signedRequest(ack, testSigningSecret, time.Now().Add(2*time.Second))); w.Code != http.StatusOK {
		t.Fatalf("re-signed press: %d", w.Code)
	}
	if got := testutil.ToFloat64(n.acts.counter.WithLabelValues(ActionAck, actDuplicate)); got != 1 {
		t.Errorf("duplicate acks = %v, want 1", got)
	}
	if got := testutil.ToFloat64(n.acts.counter.WithLabelValues(ActionAck, actApplied)); got != 1 {
		t.Errorf("applied acks = %v, want 1", got)
	}

	// Forged, unsigned and stale requests change nothing.
	sil := pressPayload(ActionSilence1h, vals[ActionSilence1h], "U0ANA", "CALERTS", post.TS)
	for name, r := range map[string]*http.Request{
		"forged":   signedRequest(sil, "not-the-secret", time.Now()),
		"stale":    signedRequest(sil, testSigningSecret, time.Now().Add(-6*time.Minute)),
		"unsigned": httptest.NewRequest(http.MethodPost, "/slack/interactions", strings.NewReader(sil)),
	} {
		if w := serveInteraction(n.Notifier, r); w.Code != http.StatusUnauthorized {
			t.Errorf("%s request: %d, want 401", name, w.Code)
		}
	}
	if sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateActive)); len(sils) != 0 {
		t.Fatalf("a refused request created %d silence(s)", len(sils))
	}

	if w := serveInteraction(n.Notifier, signedRequest(sil, testSigningSecret, time.Now())); w.Code != http.StatusOK {
		t.Fatalf("silence press: %d", w.Code)
	}
	sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateActive))
	if len(sils) != 1 || sils[0].CreatedBy != "ana (U0ANA)" || !strings.Contains(sils[0].Comment, "Slack") {
		t.Fatalf("silences = %v, want one created by ana (U0ANA)", sils)
	}
	if d := sils[0].EndsAt.AsTime().Sub(sils[0].StartsAt.AsTime()); d < time.Hour-time.Second || d > time.Hour {
		t.Errorf("silence lasts %s, want 1h", d)
	}
	m = waitMessage(t, s, post.Channel, post.TS, "Silenced by <@U0ANA\u003e until")
	vals = buttonValues(t, m.Blocks)
	if vals[ActionUnsilence] == "" {
		t.Fatalf("silenced message has no paged.unsilence: %v", vals)
	}
	pressOK(t, n.Notifier, ActionUnsilence, vals[ActionUnsilence], "U0BOB", post.TS)
	waitMessage(t, s, post.Channel, post.TS, "lifted by <@U0BOB>")
	pressOK(t, n.Notifier, ActionUnack, vals[ActionUnack], "U0BOB", post.TS)
	m = waitMessage(t, s, post.Channel, post.TS, "withdrawn by <@U0BOB>")
	if v := buttonValues(t, m.Blocks); v[ActionAck] == "" {
		t.Errorf("after unack the message has no paged.ack: %v", v)
	}
	if acks := n.Acknowledgements(); len(acks) != 0 {
		t.Errorf("after unack Acknowledgements() = %+v", acks)
	}
	if sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateActive)); len(sils) != 0 {
		t.Fatalf("unsilence left %d silence(s) active", len(sils))
	}
}

func mustInt(t *testing.T, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSlackAckHoldsRepeats(t *testing.T) {
	s, n, post := postAlert(t, "300ms", Options{}, firing("KVCacheSaturated", "instance", "vllm-0:8000"))
	pressOK(t, n.Notifier, ActionAck, buttonValues(t, post.Blocks)[ActionAck], "U0ANA", post.TS)
	waitMessage(t, s, post.Channel, post.TS, "Acknowledged by")
	// Keep the alert alive; count notifications over several repeat
	// intervals.
	before := len(s.Calls())
	for range 8 {
		n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated", "instance", "vllm-0:8000")})
		time.Sleep(200 * time.Millisecond)
	}
	// A notification edits the message and replies in its thread; the
	// edit that follows the press (or its recheck) may land after the
	// mark, a reply may not.
	calls := s.Calls()[before:]
	for _, c := range calls {
		if c.Method == "chat.postMessage" {
			t.Errorf("acknowledged group notified again: %s %s", c.Method, c.Text)
		}
	}
	if got := testutil.ToFloat64(n.acts.suppressed); got < 2 {
		t.Errorf("held repeats = %v, want several", got)
	}
	// A new alert joins: the acknowledgement ends and the message says so.
	n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated", "instance", "vllm-0:8000"), firing("KVCacheSaturated", "instance", "vllm-1:8000")})
	waitMessage(t, s, post.Channel, post.TS, "ended: a new alert joined")
	if strings.Contains(n.logs.String(), "level=ERROR") {
		t.Errorf("errors logged:\n%s", n.logs)
	}
}

// hashAlert must hash as the notification log's entries do, or an
// acknowledged group's repeats would never be recognised.
func TestHashAlertMatchesTheNotificationLog(t *testing.T) {
	a := firing("KVCacheSaturated", "instance", "vllm-0:8000", "model_name", "meta-llama/Llama-3.1-8B")
	_, n, _ := postAlert(t, "1h", Options{}, a)
	var e *nflogpb.Entry
	deadline := time.Now().Add(10 * time.Second)
	for e == nil && time.Now().Before(deadline) {
		e = slackEntry(n.nflog, "oncall", 0, `{}:{alertname="KVCacheSaturated"}`)
		time.Sleep(10 * time.Millisecond)
	}
	if e == nil || len(e.FiringAlerts) != 1 {
		t.Fatalf("notification log entry = %v", e)
	}
	if got, want := hashAlert(toLabelSet(a.Labels)), e.FiringAlerts[0]; got != want {
		t.Errorf("hashAlert = %d, the notification log has %d", got, want)
	}
}

func socketConfig(s *notifiertest.Slack, extra string) string {
	return fmt.Sprintf(`
route:
  receiver: oncall
  group_by: [alertname]
  group_wait: 20ms
  group_interval: 100ms
  repeat_interval: 1h
receivers:
  - name: oncall
    slack_configs:
      - app_token: %s
        app_url: %s
        channel: "#alerts"
%s
slack_interactivity:
  app_level_token: xapp-1-A0PAGED-1-secret
  app_url: %s
  allowed_users: [U0ANA, U0BOB]
`, testToken, s.APIURL(), extra, s.APIURL())
}

// Socket Mode: the press arrives over the WebSocket, is applied, then its
// envelope acknowledged; the same envelope delivered three times acts
// once; a user outside allowed_users changes nothing and is told so.
func TestSlackActionsSocketMode(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	s.SetAppToken("xapp-1-A0PAGED-1-secret")
	s.SetUser("U0ANA", "ana")
	s.SetUser("U0EVE", "eve")
	n := start(t, socketConfig(s, ""), Options{})
	if !s.WaitConnected(10 * time.Second) {
		t.Fatalf("paged never opened a Socket Mode connection:\n%s", n.logs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(n.acts.socketUp) != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if testutil.ToFloat64(n.acts.socketUp) != 1 {
		t.Errorf("paged_slack_socket_mode_connected = 0 while connected")
	}
	before := len(s.Calls())
	n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated", "instance", "vllm-0:8000")})
	post := s.WaitCalls(t, before+1, 10*time.Second)[before]
	if post.Method != "chat.postMessage" {
		t.Fatalf("call = %s, want chat.postMessage", post.Method)
	}
	vals := buttonValues(t, post.Blocks)

	press := func(user, action string) string {
		t.Helper()
		id, err := s.SendInteractive(s.BlockActionPayload(notifiertest.BlockAction{
			ActionID: action, BlockID: actionsBlockID, Value: vals[action], UserID: user, ChannelID: "CALERTS", MessageTS: post.TS,
		}))
		if err != nil {
			t.Fatal(err)
		}
		if !s.WaitAcked(id, 10*time.Second) {
			t.Fatalf("envelope %s never acknowledged", id)
		}
		return id
	}

	// eve may not act.
	press("U0EVE", ActionSilence1h)
	deadline = time.Now().Add(10 * time.Second)
	var refusal notifiertest.SlackCall
	for refusal.Method == "" && time.Now().Before(deadline) {
		for _, c := range s.Calls() {
			if c.Method == "chat.postEphemeral" {
				refusal = c
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if refusal.User != "U0EVE" || !strings.Contains(refusal.Text, "You are not allowed to silence") {
		t.Fatalf("refusal = %+v, want an ephemeral to U0EVE", refusal)
	}
	if sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateActive)); len(sils) != 0 {
		t.Fatalf("a refused press created %d silence(s)", len(sils))
	}

	id := press("U0ANA", ActionSilenceUntilResolved)
	for range 2 {
		if err := s.Redeliver(id); err != nil {
			t.Fatal(err)
		}
	}
	if !s.WaitAckCount(id, 3, 10*time.Second) {
		t.Fatalf("envelope acked %d times, want 3", s.AckCount(id))
	}
	waitMessage(t, s, post.Channel, post.TS, "Silenced by <@U0ANA> until the group resolves")
	sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateActive))
	if len(sils) != 1 || sils[0].CreatedBy != "ana (U0ANA)" {
		t.Fatalf("silences after three deliveries = %v, want one by ana", sils)
	}
	if got := testutil.ToFloat64(n.acts.counter.WithLabelValues(ActionSilenceUntilResolved, actDuplicate)); got != 2 {
		t.Errorf("duplicates = %v, want 2", got)
	}
	if got := testutil.ToFloat64(n.acts.counter.WithLabelValues(ActionSilence1h, actRefused)); got != 1 {
		t.Errorf("refused = %v, want 1", got)
	}
}

// A silence "until resolved" ends when the group resolves, and the
// message says so.
func TestSlackSilenceUntilResolvedEnds(t *testing.T) {
	a := firing("KVCacheSaturated", "instance", "vllm-0:8000")
	s, n, post := postAlert(t, "1h", Options{actionsInterval: 50 * time.Millisecond}, a)
	pressOK(t, n.Notifier, ActionSilenceUntilResolved, buttonValues(t, post.Blocks)[ActionSilenceUntilResolved], "U0ANA", post.TS)
	waitMessage(t, s, post.Channel, post.TS, "until the group resolves")
	sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateActive))
	if len(sils) != 1 || sils[0].EndsAt.AsTime().Sub(sils[0].StartsAt.AsTime()) < 24*time.Hour {
		t.Fatalf("silences = %v, want one that does not end at a fixed short time", sils)
	}
	// Still firing: the silence holds over several watcher rounds.
	time.Sleep(300 * time.Millisecond)
	if sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateActive)); len(sils) != 1 {
		t.Fatalf("the silence ended while the group fires")
	}
	n.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateExpired)); len(sils) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the silence did not end when the group resolved:\n%s", n.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m := waitMessage(t, s, post.Channel, post.TS, "ended: the group resolved")
	if !strings.Contains(string(m.Blocks), "RESOLVED") {
		t.Errorf("the message does not show the group resolved:\n%s", m.Blocks)
	}
}

// silencedGroup returns the one active silence and the key of the group it
// silences.
func silencedGroup(t *testing.T, n *running) (*silencepb.Silence, string) {
	t.Helper()
	sils, _, _ := n.silences.Query(context.Background(), silence.QState(silence.SilenceStateActive))
	if len(sils) != 1 {
		t.Fatalf("%d active silences, want 1", len(sils))
	}
	return sils[0], sils[0].Annotations[silenceAnnotationGroup]
}

// resolveMuted resolves a, whose group gkey is silenced, and waits until
// the dispatcher no longer holds the group, its resolution muted.
func resolveMuted(t *testing.T, n *running, a *rules.Alert, gkey string) {
	t.Helper()
	ctx := context.Background()
	n.Notify(ctx, []*rules.Alert{resolvedNow(a)})
	for deadline := time.Now().Add(10 * time.Second); n.liveGroup(ctx, "oncall", gkey) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the group stayed in the dispatcher after its muted resolution")
		}
	}
}

// A silence until resolved mutes its group's resolution too, after which
// the dispatcher no longer holds the group: the watcher finds the
// resolved alert among those paged holds and expires the silence, with
// no grace for a restart since paged received the resolution.
func TestSlackSilenceUntilResolvedExpires(t *testing.T) {
	ctx := context.Background()
	kv := firing("KVCacheSaturated", "instance", "vllm-0:8000")
	_, n, post := postAlert(t, "1h", Options{}, kv)
	pressOK(t, n.Notifier, ActionSilenceUntilResolved, buttonValues(t, post.Blocks)[ActionSilenceUntilResolved], "U0ANA", post.TS)
	made, gkey := silencedGroup(t, n)

	// Still firing: kept.
	n.acts.expireResolved(ctx, time.Now())
	if sil := n.silenceByID(ctx, made.Id); sil == nil || !silenceActive(sil, time.Now()) {
		t.Fatalf("the silence of a firing group was expired")
	}
	resolveMuted(t, n, kv, gkey)
	n.acts.expireResolved(ctx, time.Now())
	if sil := n.silenceByID(ctx, made.Id); sil == nil || silenceActive(sil, time.Now()) {
		t.Errorf("the silence until resolved is still active after its group resolved: %v", sil)
	}
}

// The message's notification log entry lives twice the repeat_interval,
// and a held repeat writes none: an acknowledgement that outlasts it must
// still hold the repeats back (maintenance collects expired entries here
// every 50ms; a restart drops them at once).
func TestSlackAckOutlastsRepeatInterval(t *testing.T) {
	s, n, post := postAlert(t, "200ms", Options{MaintenanceInterval: 50 * time.Millisecond}, firing("KVCacheSaturated", "instance", "vllm-0:8000"))
	pressOK(t, n.Notifier, ActionAck, buttonValues(t, post.Blocks)[ActionAck], "U0ANA", post.TS)
	waitMessage(t, s, post.Channel, post.TS, "Acknowledged by")
	// From the first repeat held on, no flush from before the
	// acknowledgement is under way.
	for deadline := time.Now().Add(10 * time.Second); testutil.ToFloat64(n.acts.suppressed) < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no repeat held back")
		}
	}
	before := len(s.Calls())
	// Six more, each a repeat_interval after the one before: well past
	// the entry's 400ms.
	for deadline := time.Now().Add(20 * time.Second); testutil.ToFloat64(n.acts.suppressed) < 7; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) || len(s.Calls()) > before {
			break
		}
	}
	for _, c := range s.Calls()[before:] {
		t.Errorf("acknowledged group notified again: %s %s", c.Method, c.Text)
	}
	if got := testutil.ToFloat64(n.acts.suppressed); got < 7 {
		t.Errorf("held repeats = %v, want 7", got)
	}
}

// A silence until resolved that outlasts the message's notification log
// entry (twice the repeat_interval; muted flushes write none): when the
// group resolves, its resolution goes through muted and, the entry gone,
// is never sent once the silence has expired. The watcher that expires
// the silence edits the message itself, from the alerts the silence
// matched: resolved, and the silence ended with the group.
func TestSlackSilenceUntilResolvedShowsResolution(t *testing.T) {
	ctx := context.Background()
	kv := firing("KVCacheSaturated", "instance", "vllm-0:8000")
	s, n, post := postAlert(t, "200ms", Options{MaintenanceInterval: 50 * time.Millisecond}, kv)
	pressOK(t, n.Notifier, ActionSilenceUntilResolved, buttonValues(t, post.Blocks)[ActionSilenceUntilResolved], "U0ANA", post.TS)
	waitMessage(t, s, post.Channel, post.TS, "until the group resolves")
	_, gkey := silencedGroup(t, n)
	for deadline := time.Now().Add(10 * time.Second); slackEntry(n.nflog, "oncall", 0, gkey) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the message's notification log entry was never collected")
		}
	}
	resolveMuted(t, n, kv, gkey)
	n.acts.expireResolved(ctx, time.Now())
	m, _ := s.Message("CALERTS", post.TS)
	shown := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(m.Blocks))
	if !strings.Contains(shown, "Silence by <@U0ANA> ended: the group resolved") || !strings.Contains(shown, "RESOLVED") {
		t.Errorf("the message after the group resolved:\n%s", shown)
	}
	if strings.Contains(shown, ActionUnsilence) {
		t.Errorf("the resolved message still offers %s:\n%s", ActionUnsilence, shown)
	}
}
