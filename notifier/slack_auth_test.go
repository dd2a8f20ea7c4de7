package notifier

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// Every Web API call of a bot-mode receiver (the post, the edit, the
// thread reply) carries the token in the Authorization header, and none
// in the form body.
func TestSlackBotTokenInHeader(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, ""), Options{})
	a := firing("KVCacheSaturated", "severity", "critical")
	n.Notify(context.Background(), []*rules.Alert{a})
	s.WaitCalls(t, 1, 10*time.Second)
	n.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	calls := s.WaitCalls(t, 3, 10*time.Second)
	var methods []string
	for _, c := range calls {
		methods = append(methods, c.Method)
		if !c.TokenInHeader || c.TokenInForm || c.Token != testToken || c.Error != "" {
			t.Errorf("%s: token in header %v, in form %v, error %q; want the token in the header only", c.Method, c.TokenInHeader, c.TokenInForm, c.Error)
		}
	}
	if got := strings.Join(methods, ","); got != "chat.postMessage,chat.update,chat.postMessage" {
		t.Errorf("calls = %s", got)
	}
}

// roundTripFunc records what reaches the network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The transport rewrites only form posts to the app URL: the token leaves
// the body for the header, every other field stays, and the length is
// right. Requests elsewhere (a proxy's other paths, another host) keep
// what slack-go sent.
func TestSlackBotAuthTransport(t *testing.T) {
	type seen struct {
		auth, body string
		length     int64
	}
	var got seen
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Header.Get("Authorization"), string(b), r.ContentLength}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	})
	client := withSlackBotAuth(&http.Client{Transport: next}, "https://slack.example/proxy/api/")
	form := url.Values{"token": {"xoxb-secret"}, "channel": {"#a"}, "text": {"hi & bye"}}.Encode()
	post := func(u, contentType string) seen {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form))
		req.Header.Set("Content-Type", contentType)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return got
	}

	s := post("https://slack.example/proxy/api/chat.postMessage", "application/x-www-form-urlencoded")
	if s.auth != "Bearer xoxb-secret" {
		t.Errorf("Authorization = %q, want the bearer token", s.auth)
	}
	vals, err := url.ParseQuery(s.body)
	if err != nil || vals.Has("token") || vals.Get("channel") != "#a" || vals.Get("text") != "hi & bye" {
		t.Errorf("body = %q, want channel and text without token", s.body)
	}
	if s.length != int64(len(s.body)) {
		t.Errorf("Content-Length %d for a body of %d bytes", s.length, len(s.body))
	}

	for _, u := range []string{
		"https://other.example/proxy/api/chat.postMessage",
		"https://slack.example/proxy/apix/chat.postMessage",
		"http://slack.example/proxy/api/chat.postMessage",
	} {
		if s := post(u, "application/x-www-form-urlencoded"); s.auth != "" || s.body != form {
			t.Errorf("%s: rewritten (auth %q, body %q), want it untouched", u, s.auth, s.body)
		}
	}
	if s := post("https://slack.example/proxy/api/files.upload", "multipart/form-data; boundary=x"); s.auth != "" || s.body != form {
		t.Errorf("non-form body rewritten: auth %q", s.auth)
	}
}
