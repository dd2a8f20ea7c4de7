package notifiertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// TeamsMessage is one message posted to a Teams workflow webhook.
type TeamsMessage struct {
	Body []byte
	// Texts are the card's TextBlocks, in order (the title first).
	Texts []string
}

// Teams stands in for a Microsoft Teams workflow ("Post to a channel
// when a webhook request is received"): it takes a message with an
// Adaptive Card attachment and answers 202 Accepted, 400 for anything
// else, or the statuses queued with Script first.
type Teams struct {
	srv       *httptest.Server
	httpCalls // its mu guards the fields below too

	msgs []TeamsMessage
}

// NewTeams starts a stand-in that stops at the end of the test.
func NewTeams(t testing.TB) *Teams {
	s := &Teams{httpCalls: newHTTPCalls()}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the workflow's URL, for msteamsv2_configs' webhook_url.
func (s *Teams) URL() string {
	return s.srv.URL + "/workflows/0123/triggers/manual/paths/invoke?api-version=2016-06-01&sig=stand-in"
}

// Messages returns the messages posted so far.
func (s *Teams) Messages() []TeamsMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// Wait waits until cond holds, failing the test after timeout.
func (s *Teams) Wait(t testing.TB, timeout time.Duration, cond func(*Teams) bool) {
	t.Helper()
	waitFor(t, timeout, "teams", &s.mu, &s.changed, func() bool { return cond(s) })
}

func (s *Teams) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if status, scripted := s.received(); scripted {
		w.WriteHeader(status)
		return
	}
	var msg struct {
		Type        string `json:"type"`
		Attachments []struct {
			ContentType string `json:"contentType"`
			Content     struct {
				Type string `json:"type"`
				Body []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"body"`
			} `json:"content"`
		} `json:"attachments"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Type != "message" || len(msg.Attachments) == 0 ||
		msg.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive" || msg.Attachments[0].Content.Type != "AdaptiveCard" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"code":"InvalidRequestContent","message":"The input body for trigger 'manual' of type 'Request' must be a message with an Adaptive Card attachment."}}`)
		return
	}
	m := TeamsMessage{Body: body}
	for _, b := range msg.Attachments[0].Content.Body {
		if b.Type == "TextBlock" {
			m.Texts = append(m.Texts, b.Text)
		}
	}
	s.msgs = append(s.msgs, m)
	w.WriteHeader(http.StatusAccepted)
}
