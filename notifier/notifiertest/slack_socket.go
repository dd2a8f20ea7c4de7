package notifiertest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Socket Mode as Slack serves it: apps.connections.open, called with the
// app-level token (xapp-...) as a bearer header, answers the URL of a
// WebSocket; there Slack says hello, sends envelopes the app must
// acknowledge by envelope_id, pings, and now and then asks the app to
// reconnect.

const (
	// socketPath is where the WebSocket URLs point, as Slack's
	// wss://wss-primary.slack.com/link/?ticket=...&app_id=...
	socketPath = "/link/"
	// defaultPingInterval is how often the stand-in pings each
	// connection, as Slack does; slack-go's client reconnects when no
	// ping came for 30s (socketmode.OptionPingInterval).
	defaultPingInterval = 10 * time.Second
	// socketWriteTimeout bounds one write to a connection.
	socketWriteTimeout = 10 * time.Second
)

// SlackAck is an acknowledgement received over Socket Mode.
type SlackAck struct {
	EnvelopeID string
	Payload    json.RawMessage // the response payload, if the app sent one
	At         time.Time
}

// envelope is one Socket Mode message carrying a payload, as sent.
type envelope struct {
	EnvelopeID             string          `json:"envelope_id"`
	Type                   string          `json:"type"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	Payload                json.RawMessage `json:"payload"`
	RetryAttempt           int             `json:"retry_attempt"`
	RetryReason            string          `json:"retry_reason"`
}

// slackSocket is one open Socket Mode connection. Messages are written
// to ws with Slack.mu held (one writer at a time, as gorilla/websocket
// wants); control frames (pings, close) may be written concurrently.
type slackSocket struct {
	ws         *websocket.Conn
	refreshing bool // sent a disconnect: gets no more envelopes
}

// socketMode is the Socket Mode state of a Slack, guarded by Slack.mu
// except wg.
type socketMode struct {
	appToken  string          // SetAppToken; empty: any xapp- token
	tickets   map[string]bool // WebSocket URLs given and not yet used
	conns     []*slackSocket  // open, oldest first
	queue     []*envelope     // waiting for a connection
	sent      map[string]*envelope
	acks      []SlackAck
	pingEvery time.Duration
	closed    bool // the stand-in stopped: refuse connections

	wg sync.WaitGroup // the connections' goroutines
}

// SetAppToken makes apps.connections.open accept only the app-level
// token given; without it any xapp- token is accepted. A bot or user
// token (xoxb-, xoxp-) is refused with not_allowed_token_type, as Slack
// does; another token with invalid_auth.
func (s *Slack) SetAppToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sm.appToken = token
}

// SetPingInterval sets how often connections opened from now on are
// pinged (10s by default, as Slack does); zero or less: never, which
// slack-go's client takes for a dead connection after its ping interval.
func (s *Slack) SetPingInterval(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sm.pingEvery = d
}

// openConnection answers apps.connections.open: a one-time WebSocket URL
// on this server. Called with s.mu held.
func (s *Slack) openConnection(w http.ResponseWriter, call SlackCall) {
	switch tok := call.Token; {
	case strings.HasPrefix(tok, "xox"):
		s.fail(w, call, "not_allowed_token_type")
		return
	case !strings.HasPrefix(tok, "xapp-"), s.sm.appToken != "" && tok != s.sm.appToken:
		s.fail(w, call, "invalid_auth")
		return
	}
	ticket := randomHex(16)
	s.sm.tickets[ticket] = true
	u := "ws" + strings.TrimPrefix(s.base(), "http") + socketPath + "?ticket=" + ticket + "&app_id=" + slackAppID
	s.record(call)
	writeJSON(w, map[string]any{"ok": true, "url": u})
}

// serveSocket runs one Socket Mode connection: it upgrades a request
// carrying a ticket apps.connections.open gave, says hello, sends the
// envelopes waiting, pings, and reads acknowledgements until the
// connection closes.
func (s *Slack) serveSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	ok := s.sm.tickets[ticket] && !s.sm.closed
	delete(s.sm.tickets, ticket)
	if ok {
		s.sm.wg.Add(1)
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid ticket", http.StatusUnauthorized)
		return
	}
	defer s.sm.wg.Done()
	// slack-go sends Origin: https://api.slack.com, which the default
	// check refuses for another host.
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	sock := &slackSocket{ws: ws}

	s.mu.Lock()
	if s.sm.closed {
		s.mu.Unlock()
		return
	}
	hello := map[string]any{
		"type":            "hello",
		"num_connections": len(s.sm.conns) + 1,
		"debug_info":      map[string]any{"host": "applink-stand-in", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": slackAppID},
	}
	if err := s.writeSocket(sock, hello); err != nil {
		s.mu.Unlock()
		return
	}
	s.sm.conns = append(s.sm.conns, sock)
	queued := s.sm.queue
	s.sm.queue = nil
	for _, e := range queued {
		s.deliver(e)
	}
	every := s.sm.pingEvery
	s.notify()
	s.mu.Unlock()

	done := make(chan struct{})
	var pinger sync.WaitGroup
	if every > 0 {
		pinger.Go(func() { ping(ws, every, done) })
	}
	s.readAcks(ws)
	close(done)
	pinger.Wait()
	s.mu.Lock()
	s.removeSocket(sock)
	s.mu.Unlock()
}

// ping pings ws every interval until done, as Slack does.
func ping(ws *websocket.Conn, every time.Duration, done <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if ws.WriteControl(websocket.PingMessage, []byte("ping-"+strconv.Itoa(n)), time.Now().Add(socketWriteTimeout)) != nil {
			return
		}
	}
}

// readAcks records the acknowledgements read from ws until it fails.
// What is not an acknowledgement is ignored, as Slack ignores it.
func (s *Slack) readAcks(ws *websocket.Conn) {
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		s.sm.acks = append(s.sm.acks, SlackAck{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, At: time.Now()})
		s.notify()
		s.mu.Unlock()
	}
}

// writeSocket writes v to sock as JSON. Called with s.mu held.
func (s *Slack) writeSocket(sock *slackSocket, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := sock.ws.SetWriteDeadline(time.Now().Add(socketWriteTimeout)); err != nil {
		return err
	}
	return sock.ws.WriteMessage(websocket.TextMessage, b)
}

// deliver sends e on the newest connection not being refreshed, or
// queues it until one opens. A connection that fails the write is closed.
// Called with s.mu held.
func (s *Slack) deliver(e *envelope) {
	for i := len(s.sm.conns) - 1; i >= 0; i-- {
		sock := s.sm.conns[i]
		if sock.refreshing {
			continue
		}
		if err := s.writeSocket(sock, e); err != nil {
			sock.ws.Close()
			s.removeSocket(sock)
			continue
		}
		return
	}
	s.sm.queue = append(s.sm.queue, e)
}

// removeSocket forgets sock, if not already. Called with s.mu held.
func (s *Slack) removeSocket(sock *slackSocket) {
	if i := slices.Index(s.sm.conns, sock); i >= 0 {
		s.sm.conns = slices.Delete(s.sm.conns, i, i+1)
		s.notify()
	}
}

// SendInteractive sends an interactive envelope carrying payload (a
// block_actions payload: BlockActionPayload) to the app connected over
// Socket Mode, as
//
//	{"envelope_id":"…","type":"interactive","accepts_response_payload":false,
//	 "payload":<payload>,"retry_attempt":0,"retry_reason":""}
//
// and returns its envelope_id. With no connection open (or only ones
// asked to refresh), the envelope waits for the next one, as Slack holds
// events. It is sent once: one not acknowledged is sent again only by
// Redeliver.
func (s *Slack) SendInteractive(payload []byte) (envelopeID string, err error) {
	if !json.Valid(payload) {
		return "", errors.New("notifiertest: interactive payload is not JSON")
	}
	e := &envelope{EnvelopeID: newUUID(), Type: "interactive", Payload: json.RawMessage(payload)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sm.sent[e.EnvelopeID] = e
	s.deliver(e)
	return e.EnvelopeID, nil
}

// Redeliver sends an envelope again with the same envelope_id, its
// retry_attempt one more and retry_reason "timeout", as Slack retries
// one it holds unacknowledged (whether or not it was).
func (s *Slack) Redeliver(envelopeID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, ok := s.sm.sent[envelopeID]
	if !ok {
		return fmt.Errorf("notifiertest: no envelope %q was sent", envelopeID)
	}
	e := *prev
	e.RetryAttempt++
	e.RetryReason = "timeout"
	s.sm.sent[envelopeID] = &e
	s.deliver(&e)
	return nil
}

// Acks returns the acknowledgements received so far, in order.
func (s *Slack) Acks() []SlackAck {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sm.acks)
}

// AckCount returns how many times an envelope was acknowledged.
func (s *Slack) AckCount(envelopeID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ackCount(envelopeID)
}

func (s *Slack) ackCount(envelopeID string) int {
	n := 0
	for _, a := range s.sm.acks {
		if a.EnvelopeID == envelopeID {
			n++
		}
	}
	return n
}

// Acked reports whether an envelope was acknowledged.
func (s *Slack) Acked(envelopeID string) bool { return s.AckCount(envelopeID) > 0 }

// WaitAcked waits until an envelope is acknowledged; false after
// timeout.
func (s *Slack) WaitAcked(envelopeID string, timeout time.Duration) bool {
	return s.waitFor(func() bool { return s.ackCount(envelopeID) > 0 }, timeout)
}

// WaitAckCount waits until an envelope was acknowledged n times; false
// after timeout.
func (s *Slack) WaitAckCount(envelopeID string, n int, timeout time.Duration) bool {
	return s.waitFor(func() bool { return s.ackCount(envelopeID) >= n }, timeout)
}

// Connections returns the number of Socket Mode connections open,
// those asked to refresh included.
func (s *Slack) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sm.conns)
}

// WaitConnected waits until a Socket Mode connection is open that
// envelopes go to (not one asked to refresh); false after timeout.
func (s *Slack) WaitConnected(timeout time.Duration) bool {
	return s.waitFor(func() bool {
		return slices.ContainsFunc(s.sm.conns, func(c *slackSocket) bool { return !c.refreshing })
	}, timeout)
}

// RequestRefresh asks every open connection to reconnect, as Slack does
// before it retires one: it sends
//
//	{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"applink-stand-in"}}
//
// and sends no more envelopes there. The stand-in leaves the connection
// open for the app to close (DropConnections closes it).
func (s *Slack) RequestRefresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := map[string]any{"type": "disconnect", "reason": "refresh_requested", "debug_info": map[string]any{"host": "applink-stand-in"}}
	for _, sock := range s.sm.conns {
		if !sock.refreshing {
			sock.refreshing = true
			_ = s.writeSocket(sock, msg)
		}
	}
	s.notify()
}

// DropConnections closes every open connection (a close frame, then the
// socket), as Slack does when it retires them.
func (s *Slack) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropConnections()
}

func (s *Slack) dropConnections() {
	for _, sock := range s.sm.conns {
		_ = sock.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "refresh"), time.Now().Add(time.Second))
		sock.ws.Close()
	}
	s.sm.conns = nil
	s.notify()
}

// closeSockets closes the connections and refuses new ones, and waits
// for their goroutines to end: the end of a test.
func (s *Slack) closeSockets() {
	s.mu.Lock()
	s.sm.closed = true
	s.dropConnections()
	s.mu.Unlock()
	s.sm.wg.Wait()
}

// newUUID returns a random UUID, as Slack's envelope IDs are.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
