package notifier

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// slackBotAuth is the transport of a bot-mode Slack client. slack-go puts
// the bot token in the form body of chat.postMessage and chat.update
// (token=xoxb-...), where proxies and request logs see it; Slack takes it
// in the Authorization header as well. For requests to the configured app
// URL, slackBotAuth removes token from the form and sends
// "Authorization: Bearer <token>" instead. Other requests pass untouched.
type slackBotAuth struct {
	next http.RoundTripper
	base *url.URL // the app URL: scheme, host and path prefix
}

// slackClient is the client of a Slack integration: for a bot token, one
// whose Web API requests carry the token in the header.
func slackClient(client *http.Client, c *SlackConfig) *http.Client {
	if !c.BotMode() {
		return client
	}
	return withSlackBotAuth(client, c.AppURL)
}

// withSlackBotAuth returns a copy of client whose requests to appURL carry
// the token in the header. An app URL that does not parse leaves client
// as it is (the configuration check refuses it before).
func withSlackBotAuth(client *http.Client, appURL string) *http.Client {
	if appURL == "" {
		appURL = DefaultSlackAppURL
	}
	base, err := url.Parse(appURL)
	if err != nil {
		return client
	}
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *client
	c.Transport = &slackBotAuth{next: next, base: base}
	return &c
}

func (t *slackBotAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.Body == http.NoBody || !t.forApp(req.URL) || !isForm(req.Header) {
		return t.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		// Never wrap: the body holds the token.
		return nil, errors.New("slack: cannot read the request body")
	}
	out := req.Clone(req.Context())
	values, err := url.ParseQuery(string(body))
	token := values.Get("token")
	if err == nil && token != "" {
		values.Del("token")
		body = []byte(values.Encode())
		if out.Header.Get("Authorization") == "" {
			out.Header.Set("Authorization", "Bearer "+token)
		}
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.next.RoundTrip(out)
}

// forApp reports whether u is the app URL or under it.
func (t *slackBotAuth) forApp(u *url.URL) bool {
	if !strings.EqualFold(u.Scheme, t.base.Scheme) || !strings.EqualFold(u.Host, t.base.Host) {
		return false
	}
	p := strings.TrimSuffix(t.base.Path, "/")
	return u.Path == p || strings.HasPrefix(u.Path, p+"/")
}

func isForm(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "application/x-www-form-urlencoded"
}
