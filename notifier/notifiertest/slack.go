// Package notifiertest has stand-ins for the notifier's destinations and
// a webhook sink. They run on loopback httptest servers and record what
// they receive.
//
// Slack is a stand-in for Slack that speaks its protocols over a real
// socket, so that a real paged process (or slack-go's clients) can be
// pointed at it through app_url:
//
//   - the Web API under /api/: chat.postMessage, chat.update,
//     chat.postEphemeral, conversations.history, conversations.list,
//     files.getUploadURLExternal and files.completeUploadExternal (with
//     the upload URL in between), users.info, usergroups.users.list and
//     apps.connections.open;
//   - incoming webhooks under /services/;
//   - Socket Mode: the WebSocket URL apps.connections.open gives, with
//     hello, pings, envelopes to acknowledge (SendInteractive, Redeliver)
//     and Slack's refreshes (RequestRefresh, DropConnections).
//
// Every call is recorded (Calls) under its Slack method name, and any of
// them can be made to fail (Script). BlockActionPayload builds what Slack
// sends when someone clicks a button of a message the stand-in holds, and
// SignedInteraction signs it as Slack does for a request URL.
package notifiertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/httpauth"
)

// The workspace and app the stand-in plays.
const (
	slackTeamID     = "T0000"
	slackTeamDomain = "paged-stand-in"
	slackAppID      = "A0PAGED"
	slackBotID      = "B0PAGED"
	slackBotUserID  = "U0PAGEDBOT"
)

// SlackCall is one request received by the Slack stand-in.
type SlackCall struct {
	// Method is the Web API method (chat.postMessage, files.completeUploadExternal,
	// apps.connections.open, ...), webhook for an incoming webhook, or
	// upload for the bytes sent to a files.getUploadURLExternal URL.
	Method   string
	At       time.Time
	Token    string
	Channel  string // as sent
	TS       string // ts of the message created or edited (chat.postEphemeral: message_ts)
	ThreadTS string
	User     string // the user argument (chat.postEphemeral, users.info)
	Text     string
	Blocks   json.RawMessage
	// Attachments are an incoming webhook's legacy attachments (what
	// Alertmanager's slack_configs send: title, text, color), as sent.
	Attachments []SlackAttachment
	Status      int    // HTTP status answered
	Error       string // ok:false error answered, if any
	// Metadata is the message metadata sent with chat.postMessage.
	Metadata *SlackMetadata
	// Form holds the arguments of conversations.*, files.*, users.info
	// and usergroups.users.list.
	Form url.Values

	// Where Token came from: the token= form field, an Authorization:
	// Bearer header.
	TokenInForm   bool
	TokenInHeader bool
}

// SlackAttachment is one legacy attachment of an incoming-webhook
// message (the fields Alertmanager 0.25 fills; others are dropped).
type SlackAttachment struct {
	Title    string `json:"title"`
	Text     string `json:"text"`
	Fallback string `json:"fallback"`
	Color    string `json:"color"`
}

// SlackReply scripts the answer to one upcoming call.
type SlackReply struct {
	// Method, when set, gives the reply to the next call of that method
	// only (conversations.history, ...); calls of other methods pass it
	// by. Empty: the next call of any method. The upload URL is "upload";
	// give it a Status, as slack-go reads no answer from it.
	Method     string
	Status     int    // HTTP status; 0 means 200
	RetryAfter int    // seconds, sent as Retry-After
	Error      string // answer ok:false with this error (HTTP 200)
	// Pass answers the call as usual: a place in the script, so that the
	// replies after it go to later calls (a 429 on the second page).
	Pass bool
}

// Slack is a stand-in for Slack's Web API and incoming webhooks.
type Slack struct {
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	calls    []SlackCall
	script   []SlackReply
	messages map[string]*SlackCall // channel/ts -> current state
	lastTS   int64                 // microseconds of the last ts given, to keep them unique
	changed  chan struct{}
	holds    map[string][]chan struct{} // method -> answers to hold
	delay    func(method string) time.Duration
	others   []string // channel names that exist besides those posted to (AddChannels)

	sm     socketMode
	files  []*SlackFile
	upload map[string]*SlackFile // upload URL key -> file
	users  map[string]string     // user ID -> name (SetUser)
	groups map[string][]string   // user group ID -> user IDs (SetUserGroup)
}

// NewSlack starts the stand-in; it accepts the bot token given (any token
// if empty) and stops at the end of the test.
func NewSlack(t testing.TB, token string) *Slack {
	s := NewSlackHandler(token)
	s.srv = httptest.NewServer(s)
	t.Cleanup(func() {
		s.srv.Close()
		s.closeSockets()
	})
	return s
}

// NewSlackHandler makes the stand-in without a server, to be reached
// through InProcess (for testing/synctest, where a listening server
// would keep the fake clock from advancing). Its URLs use the host
// slack.test. Socket Mode needs a server: use NewSlack.
func NewSlackHandler(token string) *Slack {
	return &Slack{
		token:    token,
		messages: map[string]*SlackCall{},
		changed:  make(chan struct{}),
		sm:       socketMode{tickets: map[string]bool{}, sent: map[string]*envelope{}, pingEvery: defaultPingInterval},
		upload:   map[string]*SlackFile{},
		users:    map[string]string{},
		groups:   map[string][]string{},
	}
}

// ServeHTTP answers one request as Slack would.
func (s *Slack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, socketPath) {
		s.serveSocket(w, r)
		return
	}
	s.serveHeld(w, r)
}

// methodOf names the call a request path makes, as SlackCall.Method.
func methodOf(path string) string {
	if m, ok := strings.CutPrefix(path, "/api/"); ok {
		return m
	}
	if strings.HasPrefix(path, uploadPath) {
		return "upload"
	}
	return "webhook"
}

func (s *Slack) base() string {
	if s.srv == nil {
		return "http://slack.test"
	}
	return s.srv.URL
}

// APIURL is the Web API base, for app_url.
func (s *Slack) APIURL() string { return s.base() + "/api/" }

// WebhookURL is an incoming-webhook URL, for api_url. Its last part is a
// secret, as in Slack's.
func (s *Slack) WebhookURL(secret string) string {
	return s.base() + "/services/T0000/B0000/" + secret
}

// Script queues answers for the next calls, in order.
func (s *Slack) Script(r ...SlackReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, r...)
}

// AddChannels makes channels exist in the workspace (conversations.list)
// besides those posted to: a workspace with many channels.
func (s *Slack) AddChannels(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.others = append(s.others, names...)
}

// Calls returns the calls received so far.
func (s *Slack) Calls() []SlackCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SlackCall(nil), s.calls...)
}

// Message returns the current state of a message.
func (s *Slack) Message(channel, ts string) (SlackCall, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[channel+"/"+ts]
	if !ok {
		return SlackCall{}, false
	}
	return *m, true
}

// WaitCalls waits until n calls were received, failing the test after
// timeout (a bail-out for a test that broke, not a timing assertion).
func (s *Slack) WaitCalls(t testing.TB, n int, timeout time.Duration) []SlackCall {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if len(s.calls) >= n {
			c := append([]SlackCall(nil), s.calls...)
			s.mu.Unlock()
			return c
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("slack stand-in: got %d calls, want %d: %+v", len(s.Calls()), n, s.Calls())
		}
	}
}

func (s *Slack) record(c SlackCall) {
	s.calls = append(s.calls, c)
	s.notify()
}

// notify wakes those waiting for a change (WaitCalls, ...).
// Called with s.mu held.
func (s *Slack) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor waits until cond, called with s.mu held, is true; false after
// timeout.
func (s *Slack) waitFor(cond func() bool, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// fail records call answered ok:false with error e. Called with s.mu
// held.
func (s *Slack) fail(w http.ResponseWriter, call SlackCall, e string) {
	call.Error = e
	s.record(call)
	writeJSON(w, map[string]any{"ok": false, "error": e})
}

func channelID(name string) string {
	if strings.HasPrefix(name, "C") {
		return name
	}
	return "C" + strings.ToUpper(strings.TrimPrefix(name, "#"))
}

func (s *Slack) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	call := SlackCall{At: time.Now(), Method: methodOf(r.URL.Path)}
	var upload []byte
	switch call.Method {
	case "upload":
		call.Token, call.TokenInHeader = httpauth.BearerToken(r.Header)
		var err error
		if upload, err = uploadedBytes(r, body); err != nil {
			http.Error(w, "bad upload: "+err.Error(), http.StatusBadRequest)
			return
		}
	case "webhook":
		var m struct {
			Text        string            `json:"text"`
			Blocks      json.RawMessage   `json:"blocks"`
			Attachments []SlackAttachment `json:"attachments"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		call.Text, call.Blocks, call.Attachments = m.Text, m.Blocks, m.Attachments
	default:
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		call.Token = r.PostForm.Get("token")
		headerToken, inHeader := httpauth.BearerToken(r.Header)
		call.TokenInForm, call.TokenInHeader = call.Token != "", inHeader
		if call.Token == "" {
			call.Token = headerToken
		}
		call.Channel = r.PostForm.Get("channel")
		call.TS = r.PostForm.Get("ts")
		call.ThreadTS = r.PostForm.Get("thread_ts")
		call.Text = r.PostForm.Get("text")
		call.User = r.PostForm.Get("user")
		if b := r.PostForm.Get("blocks"); b != "" {
			call.Blocks = json.RawMessage(b)
		}
		call.Metadata = parseMetadata(r.PostForm.Get("metadata"))
		switch call.Method {
		case "conversations.history", "conversations.list", "files.getUploadURLExternal",
			"files.completeUploadExternal", "users.info", "usergroups.users.list":
			call.Form = r.PostForm
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if reply, ok := s.scripted(call.Method); ok && !reply.Pass {
		call.Status, call.Error = reply.Status, reply.Error
		if call.Status == 0 {
			call.Status = http.StatusOK
		}
		s.record(call)
		if reply.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(reply.RetryAfter))
		}
		if reply.Error != "" {
			writeJSON(w, map[string]any{"ok": false, "error": reply.Error})
			return
		}
		w.WriteHeader(call.Status)
		fmt.Fprintln(w, "scripted failure")
		return
	}
	call.Status = http.StatusOK
	switch call.Method {
	case "webhook":
		s.record(call)
		fmt.Fprint(w, "ok")
		return
	case "upload":
		s.receiveUpload(w, r.URL.Path, call, upload)
		return
	case "apps.connections.open":
		s.openConnection(w, call)
		return
	}
	if s.token != "" && call.Token != s.token {
		call.Error = "invalid_auth"
		s.record(call)
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	switch call.Method {
	case "chat.postMessage":
		ch := channelID(call.Channel)
		call.TS = s.newTS()
		stored := call
		s.messages[ch+"/"+call.TS] = &stored
		s.record(call)
		writeJSON(w, map[string]any{"ok": true, "channel": ch, "ts": call.TS, "message": map[string]any{"text": call.Text, "ts": call.TS}})
	case "chat.update":
		m, ok := s.messages[call.Channel+"/"+call.TS]
		if !ok {
			call.Error = "message_not_found"
			s.record(call)
			writeJSON(w, map[string]any{"ok": false, "error": "message_not_found"})
			return
		}
		m.Text, m.Blocks = call.Text, call.Blocks
		s.record(call)
		writeJSON(w, map[string]any{"ok": true, "channel": call.Channel, "ts": call.TS, "text": call.Text})
	case "conversations.history":
		s.history(w, r, call)
	case "conversations.list":
		s.channelList(w, call)
	case "chat.postEphemeral":
		s.postEphemeral(w, call)
	case "files.getUploadURLExternal":
		s.uploadURL(w, call)
	case "files.completeUploadExternal":
		s.completeUpload(w, call)
	case "users.info":
		s.userInfo(w, call)
	case "usergroups.users.list":
		s.userGroupMembers(w, call)
	default:
		call.Error = "unknown_method"
		s.record(call)
		writeJSON(w, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// postEphemeral answers chat.postEphemeral: {"ok":true,"message_ts":…}.
// The message is seen by the user only; it is not in the channel's
// history. Called with s.mu held.
func (s *Slack) postEphemeral(w http.ResponseWriter, call SlackCall) {
	if call.User == "" || call.Channel == "" {
		s.fail(w, call, "invalid_arguments")
		return
	}
	call.TS = s.newTS()
	s.record(call)
	writeJSON(w, map[string]any{"ok": true, "message_ts": call.TS})
}

// scripted takes the script's reply for a call of method, if any. Called
// with s.mu held.
func (s *Slack) scripted(method string) (SlackReply, bool) {
	for i, r := range s.script {
		if r.Method == "" || r.Method == method {
			s.script = append(s.script[:i:i], s.script[i+1:]...)
			return r, true
		}
	}
	return SlackReply{}, false
}

// newTS returns the ts of a new message: the time it was stored, in
// microseconds as Slack gives it, made unique. Called with s.mu held.
func (s *Slack) newTS() string {
	us := max(time.Now().UnixMicro(), s.lastTS+1)
	s.lastTS = us
	return fmt.Sprintf("%d.%06d", us/1_000_000, us%1_000_000)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
