package notifiertest

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SlackMetadata is a message's metadata (chat.postMessage's metadata
// argument), returned by conversations.history with include_all_metadata.
type SlackMetadata struct {
	EventType    string         `json:"event_type"`
	EventPayload map[string]any `json:"event_payload"`
}

func parseMetadata(s string) *SlackMetadata {
	if s == "" {
		return nil
	}
	var m SlackMetadata
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil
	}
	return &m
}

// HoldNext makes the next call of method (chat.postMessage, ...) be
// handled as usual (recorded, its message stored) while its answer is
// held until release is called, or the client gives up waiting: what
// Slack does when the process posting is killed before the answer
// arrives. Call release before the test ends.
func (s *Slack) HoldNext(method string) (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	if s.holds == nil {
		s.holds = map[string][]chan struct{}{}
	}
	s.holds[method] = append(s.holds[method], ch)
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (s *Slack) takeHold(method string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.holds[method]
	if len(q) == 0 {
		return nil
	}
	s.holds[method] = q[1:]
	return q[0]
}

// SetDelay makes the stand-in answer each call after delay(method)
// (nil, or a zero duration: at once). The call is recorded and its
// message stored when it arrives, as Slack does under load: it accepts a
// post at once and answers seconds later, so a process killed meanwhile
// never learns the ts. delay is called concurrently.
func (s *Slack) SetDelay(delay func(method string) time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = delay
}

func (s *Slack) delayFor(method string) time.Duration {
	s.mu.Lock()
	f := s.delay
	s.mu.Unlock()
	if f == nil {
		return 0
	}
	return f(method)
}

// PostOther adds a top-level message to channel (an ID) as someone else
// would (a person, another app): it is in the channel's history, and not
// among the calls. It returns its ts.
func (s *Slack) PostOther(channel, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &SlackCall{Method: "chat.postMessage", At: time.Now(), Channel: channel, Text: text, TS: s.newTS(), Status: http.StatusOK}
	s.messages[channel+"/"+m.TS] = m
	return m.TS
}

func (s *Slack) serveHeld(w http.ResponseWriter, r *http.Request) {
	method := methodOf(r.URL.Path)
	hold, delay := s.takeHold(method), s.delayFor(method)
	if hold == nil && delay <= 0 {
		s.serve(w, r)
		return
	}
	rec := httptest.NewRecorder()
	s.serve(rec, r)
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// history answers conversations.history as Slack does: the channel's
// messages (not thread replies) between oldest and latest, newest first,
// at most limit (default 100), with their metadata when
// include_all_metadata is set. When there are more, has_more is true and
// response_metadata.next_cursor is the cursor of the next page, which
// the next call passes as cursor with the same arguments; an unknown
// cursor answers invalid_cursor. The channel must be an ID. Called with
// s.mu held.
func (s *Slack) history(w http.ResponseWriter, r *http.Request, call SlackCall) {
	call.Form = r.PostForm
	if !isChannelID(call.Channel) {
		call.Error = "channel_not_found"
		s.record(call)
		writeJSON(w, map[string]any{"ok": false, "error": call.Error})
		return
	}
	f := r.PostForm
	inclusive := truthy(f.Get("inclusive"))
	oldest, latest := parseTS(f.Get("oldest")), int64(-1)
	if l := f.Get("latest"); l != "" {
		latest = parseTS(l)
	}
	limit, _ := strconv.Atoi(f.Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 999)
	before := int64(-1) // the cursor: the newest ts of this page
	if c := f.Get("cursor"); c != "" {
		if before = parseCursor(c); before < 0 {
			call.Error = "invalid_cursor"
			s.record(call)
			writeJSON(w, map[string]any{"ok": false, "error": call.Error})
			return
		}
	}
	var msgs []*SlackCall
	for key, m := range s.messages {
		if !strings.HasPrefix(key, call.Channel+"/") || m.ThreadTS != "" {
			continue
		}
		ts := parseTS(m.TS)
		if ts < oldest || latest >= 0 && ts > latest || !inclusive && (ts == oldest || ts == latest) || before >= 0 && ts > before {
			continue
		}
		msgs = append(msgs, m)
	}
	slices.SortFunc(msgs, func(a, b *SlackCall) int { return cmp.Compare(parseTS(b.TS), parseTS(a.TS)) })
	more := len(msgs) > limit
	meta := map[string]any{}
	if more {
		meta["next_cursor"] = cursor(parseTS(msgs[limit].TS))
		msgs = msgs[:limit]
	}
	out := make([]map[string]any, 0, len(msgs))
	for _, m := range msgs {
		o := map[string]any{"type": "message", "ts": m.TS, "text": m.Text}
		if truthy(f.Get("include_all_metadata")) && m.Metadata != nil {
			o["metadata"] = m.Metadata
		}
		out = append(out, o)
	}
	s.record(call)
	writeJSON(w, map[string]any{"ok": true, "messages": out, "has_more": more, "response_metadata": meta})
}

// cursor is a next_cursor as Slack writes it: base64 of "next_ts:" and
// the newest ts of the next page, in microseconds.
func cursor(ts int64) string {
	return base64.StdEncoding.EncodeToString([]byte("next_ts:" + strconv.FormatInt(ts, 10)))
}

// parseCursor reads a cursor made by cursor; -1 when it is not one.
func parseCursor(c string) int64 {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return -1
	}
	n, ok := strings.CutPrefix(string(b), "next_ts:")
	if !ok {
		return -1
	}
	ts, err := strconv.ParseInt(n, 10, 64)
	if err != nil || ts < 0 {
		return -1
	}
	return ts
}

// isChannelID reports whether s looks like a Slack conversation ID
// (C..., G..., D...), not a name.
func isChannelID(s string) bool {
	if len(s) < 2 || !strings.ContainsRune("CGD", rune(s[0])) {
		return false
	}
	for _, c := range s[1:] {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func truthy(s string) bool { return s == "1" || s == "true" }

// parseTS reads a Slack timestamp ("1700000000.000123") as microseconds.
func parseTS(s string) int64 {
	sec, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(sec, 10, 64)
	frac = (frac + "000000")[:6]
	u, _ := strconv.ParseInt(frac, 10, 64)
	return n*1_000_000 + u
}

// channelList answers conversations.list: the channels posted to and
// those added (AddChannels), by name, in pages of limit (default 100, at
// most 1000) with a cursor, as Slack pages it. A channel's name is its ID
// without the C, in lower case (channelID's inverse). Called with s.mu
// held.
func (s *Slack) channelList(w http.ResponseWriter, call SlackCall) {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, name := range s.others {
		add(channelID(name))
	}
	for key := range s.messages {
		ch, _, _ := strings.Cut(key, "/")
		add(ch)
	}
	slices.Sort(ids)
	limit, _ := strconv.Atoi(call.Form.Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	start := 0
	if c := call.Form.Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "page:"))
		if err != nil || n < 0 || n > len(ids) {
			call.Error = "invalid_cursor"
			s.record(call)
			writeJSON(w, map[string]any{"ok": false, "error": call.Error})
			return
		}
		start = n
	}
	end := min(start+limit, len(ids))
	chans := []map[string]any{}
	for _, id := range ids[start:end] {
		name := strings.ToLower(strings.TrimPrefix(id, "C"))
		chans = append(chans, map[string]any{"id": id, "name": name, "name_normalized": name, "is_channel": true})
	}
	next := ""
	if end < len(ids) {
		next = "page:" + strconv.Itoa(end)
	}
	s.record(call)
	writeJSON(w, map[string]any{"ok": true, "channels": chans, "response_metadata": map[string]any{"next_cursor": next}})
}
