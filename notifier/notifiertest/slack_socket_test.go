package notifiertest

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

const (
	testAppToken = "xapp-1-A0PAGED-1-secret"
	// wait bounds the waits for what must happen: a bail-out for a
	// broken test, not a timing assertion.
	wait = 10 * time.Second
)

// runSocketMode runs slack-go's Socket Mode client against s until the
// end of the test.
func runSocketMode(t *testing.T, s *Slack, opts ...socketmode.Option) *socketmode.Client {
	t.Helper()
	api := slack.New(testBotToken, slack.OptionAppLevelToken(testAppToken), slack.OptionAPIURL(s.APIURL()))
	c := socketmode.New(api, opts...)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.RunContext(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return c
}

// nextEvent returns the client's next event of type typ, passing the
// others by.
func nextEvent(t *testing.T, c *socketmode.Client, typ socketmode.EventType) socketmode.Event {
	t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		select {
		case ev := <-c.Events:
			if ev.Type == typ {
				return ev
			}
		case <-deadline.C:
			t.Fatalf("no %s event after %v", typ, wait)
		}
	}
}

func waitCalls(t *testing.T, s *Slack, method string, n int) {
	t.Helper()
	if !s.waitFor(func() bool { return countCallsLocked(s, method) >= n }, wait) {
		t.Fatalf("%d %s calls, want %d", countCalls(s, method), method, n)
	}
}

// A click queued before the app connects reaches it after hello; the
// app's ack is recorded; redelivered, the same envelope comes with its
// retry_attempt counted up, and every ack is counted.
func TestSocketModeInteractive(t *testing.T) {
	s := NewSlack(t, testBotToken)
	s.SetAppToken(testAppToken)
	api := slack.New(testBotToken, slack.OptionAPIURL(s.APIURL()))
	_, ts, err := api.PostMessage("C0ALERTS", slack.MsgOptionText("queue full", false), slack.MsgOptionBlocks(alertBlocks()...))
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.SendInteractive(s.BlockActionPayload(BlockAction{ActionID: "paged.ack", ChannelID: "C0ALERTS", MessageTS: ts, UserID: "U1"}))
	if err != nil {
		t.Fatal(err)
	}

	c := runSocketMode(t, s)
	hello := nextEvent(t, c, socketmode.EventTypeHello)
	if r := hello.Request; r.NumConnections != 1 || r.ConnectionInfo.AppID != slackAppID || r.DebugInfo.Host == "" {
		t.Errorf("hello: %+v, want num_connections 1, app_id %s, a debug_info host", r, slackAppID)
	}
	if !s.WaitConnected(wait) || s.Connections() != 1 {
		t.Fatalf("%d connections, want 1", s.Connections())
	}
	calls := s.Calls()
	open := calls[len(calls)-1]
	if open.Method != "apps.connections.open" || open.Token != testAppToken || !open.TokenInHeader || open.Error != "" {
		t.Errorf("last call %+v, want apps.connections.open with the app token in the header", open)
	}

	for attempt := range 3 {
		if attempt > 0 {
			if err := s.Redeliver(id); err != nil {
				t.Fatal(err)
			}
		}
		ev := nextEvent(t, c, socketmode.EventTypeInteractive)
		if ev.Request.EnvelopeID != id || ev.Request.RetryAttempt != attempt || ev.Request.Type != "interactive" {
			t.Errorf("delivery %d: envelope %q, retry_attempt %d, type %q; want %q, %d, interactive",
				attempt, ev.Request.EnvelopeID, ev.Request.RetryAttempt, ev.Request.Type, id, attempt)
		}
		cb, ok := ev.Data.(slack.InteractionCallback)
		if !ok || len(cb.ActionCallback.BlockActions) != 1 {
			t.Fatalf("delivery %d: data %#v, want a callback with one block action", attempt, ev.Data)
		}
		if a := cb.ActionCallback.BlockActions[0]; a.ActionID != "paged.ack" || a.Value != "fp-1" || cb.Container.MessageTs != ts {
			t.Errorf("delivery %d: action %+v on message %s, want paged.ack with the button's value fp-1 on %s", attempt, a, cb.Container.MessageTs, ts)
		}
		if got := s.AckCount(id); got != attempt {
			t.Errorf("before ack %d: %d acks recorded", attempt+1, got)
		}
		if err := c.Ack(*ev.Request); err != nil {
			t.Fatal(err)
		}
		if !s.WaitAckCount(id, attempt+1, wait) {
			t.Fatalf("ack %d not received", attempt+1)
		}
	}
	if !s.Acked(id) || s.AckCount(id) != 3 || len(s.Acks()) != 3 {
		t.Errorf("acks %+v, want 3 of %s", s.Acks(), id)
	}
	if s.Acked("other") || s.WaitAcked("other", time.Millisecond) {
		t.Error("an envelope never sent is acked")
	}
	if err := s.Redeliver("other"); err == nil {
		t.Error("Redeliver of an envelope never sent: no error")
	}
	if _, err := s.SendInteractive([]byte("{not json")); err == nil {
		t.Error("SendInteractive of a payload that is not JSON: no error")
	}
}

// Slack retires connections: dropped, the client opens a new one
// (apps.connections.open again); asked to refresh, it reconnects too, and
// an envelope sent meanwhile reaches the new connection.
func TestSocketModeReconnect(t *testing.T) {
	s := NewSlack(t, testBotToken)
	c := runSocketMode(t, s)
	nextEvent(t, c, socketmode.EventTypeHello)

	s.DropConnections()
	if n := s.Connections(); n != 0 {
		t.Fatalf("%d connections after DropConnections, want 0", n)
	}
	nextEvent(t, c, socketmode.EventTypeHello)
	if !s.WaitConnected(wait) {
		t.Fatal("no connection after the drop")
	}
	if n := countCalls(s, "apps.connections.open"); n != 2 {
		t.Errorf("%d apps.connections.open calls after a drop, want 2", n)
	}
	deliver(t, s, c)

	s.RequestRefresh()
	id, err := s.SendInteractive(s.BlockActionPayload(BlockAction{ActionID: "paged.unack", ChannelID: "C0ALERTS", MessageTS: "1.000001"}))
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, c, socketmode.EventTypeInteractive)
	if ev.Request.EnvelopeID != id {
		t.Fatalf("got envelope %s, want %s", ev.Request.EnvelopeID, id)
	}
	if n := countCalls(s, "apps.connections.open"); n != 3 {
		t.Errorf("%d apps.connections.open calls after a refresh, want 3", n)
	}
	if err := c.Ack(*ev.Request); err != nil {
		t.Fatal(err)
	}
	if !s.WaitAcked(id, wait) {
		t.Fatal("the envelope sent during the refresh was not acked")
	}
	if !s.waitFor(func() bool { return len(s.sm.conns) == 1 }, wait) {
		t.Errorf("%d connections after the refresh, want the new one only", s.Connections())
	}
}

// deliver sends an envelope and checks it arrives and is acked.
func deliver(t *testing.T, s *Slack, c *socketmode.Client) {
	t.Helper()
	id, err := s.SendInteractive(s.BlockActionPayload(BlockAction{ActionID: "paged.silence.1h", ChannelID: "C0ALERTS", MessageTS: "1.000001"}))
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, c, socketmode.EventTypeInteractive)
	if ev.Request.EnvelopeID != id {
		t.Fatalf("got envelope %s, want %s", ev.Request.EnvelopeID, id)
	}
	if err := c.Ack(*ev.Request); err != nil {
		t.Fatal(err)
	}
	if !s.WaitAcked(id, wait) {
		t.Fatal("envelope not acked")
	}
}

// apps.connections.open takes the app-level token only; slack-go's
// client gives up on invalid_auth. A WebSocket URL serves one connection.
func TestSocketModeAuth(t *testing.T) {
	s := NewSlack(t, testBotToken)
	s.SetAppToken(testAppToken)
	for _, tc := range []struct{ token, err string }{
		{"xapp-1-A0PAGED-1-other", "invalid_auth"},
		{testBotToken, "not_allowed_token_type"},
		{"xoxp-1-user", "not_allowed_token_type"},
		{"", "invalid_auth"},
	} {
		api := slack.New(testBotToken, slack.OptionAppLevelToken(tc.token), slack.OptionAPIURL(s.APIURL()))
		if _, _, err := api.StartSocketModeContext(t.Context()); err == nil || err.Error() != tc.err {
			t.Errorf("token %q: error %v, want %s", tc.token, err, tc.err)
		}
	}
	api := slack.New(testBotToken, slack.OptionAppLevelToken("xapp-1-A0PAGED-1-other"), slack.OptionAPIURL(s.APIURL()))
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := socketmode.New(api).RunContext(ctx); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("Run with a wrong app token: %v, want invalid_auth", err)
	}

	api = slack.New(testBotToken, slack.OptionAppLevelToken(testAppToken), slack.OptionAPIURL(s.APIURL()))
	_, u, err := api.StartSocketModeContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	origin := http.Header{"Origin": {"https://api.slack.com"}}
	ws, _, err := websocket.DefaultDialer.Dial(u, origin)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	defer ws.Close()
	var hello struct {
		Type string `json:"type"`
	}
	if err := ws.ReadJSON(&hello); err != nil || hello.Type != "hello" {
		t.Errorf("first message %+v (%v), want hello", hello, err)
	}
	if ws2, resp, err := websocket.DefaultDialer.Dial(u, origin); err == nil {
		ws2.Close()
		t.Error("a WebSocket URL served a second connection")
	} else if resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("second dial: %v, want 401", err)
	}
}

// slack-go's client takes a connection without pings for dead after its
// ping interval: the stand-in's pings keep it; without them it
// reconnects.
func TestSocketModePings(t *testing.T) {
	s := NewSlack(t, testBotToken)
	s.SetPingInterval(50 * time.Millisecond)
	c := runSocketMode(t, s, socketmode.OptionPingInterval(300*time.Millisecond))
	nextEvent(t, c, socketmode.EventTypeHello)
	quiet := time.NewTimer(1500 * time.Millisecond) // five of the client's ping intervals
	defer quiet.Stop()
	for done := false; !done; {
		select {
		case ev := <-c.Events:
			if ev.Type == socketmode.EventTypeConnecting {
				t.Fatal("the client reconnected while pinged")
			}
		case <-quiet.C:
			done = true
		}
	}
	if n := countCalls(s, "apps.connections.open"); n != 1 {
		t.Fatalf("%d apps.connections.open calls while pinged, want 1", n)
	}

	s.SetPingInterval(0)
	s.DropConnections()
	waitCalls(t, s, "apps.connections.open", 3) // the drop, then the ping timeout
}
