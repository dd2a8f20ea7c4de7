package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/pagedhq/paged/notifier/notifiertest"
)

// digestConfig routes alerts to oncall; the digest goes to team, which
// is in no route: a Slack bot, a Slack incoming webhook, a signed
// webhook, and a PagerDuty integration the digest must not use.
func digestConfig(s *notifiertest.Slack, sink *notifiertest.Sink) string {
	return fmt.Sprintf(tinyRoute, "oncall") + fmt.Sprintf(`
receivers:
  - name: oncall
    webhook_configs: [{url: %[3]s/oncall}]
  - name: team
    slack_configs:
      - app_token: %[1]s
        app_url: %[2]s
        channel: "#paging-digest"
      - api_url: %[4]s
    webhook_configs:
      - url: %[3]s/digest
        hmac_secret: digest-hmac-secret
    pagerduty_configs:
      - routing_key: 0123456789abcdef0123456789abcdef
        url: %[3]s/pagerduty
`, testToken, s.APIURL(), sink.URL(), s.WebhookURL("T000/B000/DIGEST-WEBHOOK-SECRET"))
}

func testDigest(key string) Digest {
	return Digest{
		Key: key, Due: time.Now(), Text: "Paging digest " + key,
		Blocks: []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*Pages* 3", false, false), nil, nil)},
		JSON:   []byte(`{"type":"paged_digest","key":"` + key + `"}`),
	}
}

// slackDigests are the digest messages the stand-in got, by method.
func slackDigests(s *notifiertest.Slack) map[string][]notifiertest.SlackCall {
	out := map[string][]notifiertest.SlackCall{}
	for _, c := range s.Calls() {
		if strings.HasPrefix(c.Text, "Paging digest") {
			out[c.Method] = append(out[c.Method], c)
		}
	}
	return out
}

func digestRequests(sink *notifiertest.Sink, path string) []notifiertest.WebhookRequest {
	var out []notifiertest.WebhookRequest
	for _, r := range sink.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// A digest reaches each Slack and webhook integration of its receiver
// once, not the receiver's PagerDuty; sending the same key again sends
// nothing, also after a restart, and a new key is sent again.
func TestSendDigestOncePerIntegration(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	sink := notifiertest.NewSink(t)
	conf := digestConfig(s, sink)
	dir := t.TempDir()
	n := start(t, conf, Options{StoragePath: dir})

	res, err := n.SendDigest(context.Background(), "team", testDigest("2026-03-02T09:00:00Z"))
	if err != nil || res != (DigestResult{Sent: 3}) {
		t.Fatalf("SendDigest = %+v, %v; want 3 sent", res, err)
	}
	got := slackDigests(s)
	if len(got["chat.postMessage"]) != 1 || got["chat.postMessage"][0].Channel != "#paging-digest" || !strings.Contains(string(got["chat.postMessage"][0].Blocks), "*Pages* 3") {
		t.Errorf("bot messages %+v, want one to #paging-digest with the blocks", got["chat.postMessage"])
	}
	if len(got["webhook"]) != 1 || !strings.Contains(string(got["webhook"][0].Blocks), "*Pages* 3") {
		t.Errorf("incoming webhook messages %+v, want one with the blocks", got["webhook"])
	}
	hooks := digestRequests(sink, "/digest")
	if len(hooks) != 1 {
		t.Fatalf("webhook got %d digests, want 1", len(hooks))
	}
	var body map[string]string
	if err := json.Unmarshal(hooks[0].Body, &body); err != nil || body["key"] != "2026-03-02T09:00:00Z" {
		t.Errorf("webhook body %s (%v)", hooks[0].Body, err)
	}
	if sig := hooks[0].Header.Get("X-Paged-Signature"); !strings.Contains(sig, ",v1=") {
		t.Errorf("webhook digest not signed: %q", sig)
	}
	if n := len(digestRequests(sink, "/pagerduty")); n != 0 {
		t.Errorf("PagerDuty got %d requests: a digest must not page", n)
	}

	res, err = n.SendDigest(context.Background(), "team", testDigest("2026-03-02T09:00:00Z"))
	if err != nil || res != (DigestResult{Already: 3}) {
		t.Errorf("the same digest again = %+v, %v; want all 3 already sent", res, err)
	}
	n.stop()
	again := start(t, conf, Options{StoragePath: dir})
	res, err = again.SendDigest(context.Background(), "team", testDigest("2026-03-02T09:00:00Z"))
	if err != nil || res != (DigestResult{Already: 3}) {
		t.Errorf("after a restart = %+v, %v; want all 3 already sent", res, err)
	}
	res, err = again.SendDigest(context.Background(), "team", testDigest("2026-03-09T09:00:00Z"))
	if err != nil || res != (DigestResult{Sent: 3}) {
		t.Errorf("next week's = %+v, %v; want 3 sent", res, err)
	}
	if got := slackDigests(s); len(got["chat.postMessage"]) != 2 || len(got["webhook"]) != 2 || len(digestRequests(sink, "/digest")) != 2 {
		t.Errorf("after two digests: Slack %d+%d, webhook %d; want 2 each", len(got["chat.postMessage"]), len(got["webhook"]), len(digestRequests(sink, "/digest")))
	}
}

// An integration that fails is named in the error, without its secrets;
// sending again delivers it and nothing twice.
func TestSendDigestRetriesOnlyWhatFailed(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	sink := notifiertest.NewSink(t)
	n := start(t, digestConfig(s, sink), Options{})
	s.Script(notifiertest.SlackReply{Method: "webhook", Status: http.StatusInternalServerError})
	sink.Script(http.StatusServiceUnavailable)
	res, err := n.SendDigest(context.Background(), "team", testDigest("k"))
	if err == nil || res != (DigestResult{Sent: 1}) {
		t.Fatalf("SendDigest = %+v, %v; want the bot's sent, two failed", res, err)
	}
	msg := err.Error()
	for _, want := range []string{"slack_configs[1]", "HTTP 500", "webhook_configs[0]", "503"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	for _, secret := range []string{"DIGEST-WEBHOOK-SECRET", "digest-hmac-secret", testToken} {
		if strings.Contains(msg, secret) {
			t.Errorf("error %q shows a secret", msg)
		}
	}
	res, err = n.SendDigest(context.Background(), "team", testDigest("k"))
	if err != nil || res != (DigestResult{Sent: 2, Already: 1}) {
		t.Errorf("again = %+v, %v; want the two failed sent, the bot's already", res, err)
	}
	if got := slackDigests(s); len(got["chat.postMessage"]) != 1 {
		t.Errorf("bot messages %d, want 1", len(got["chat.postMessage"]))
	}
}

func TestSendDigestRefuses(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	sink := notifiertest.NewSink(t)
	n := start(t, digestConfig(s, sink), Options{})
	for receiver, want := range map[string]string{"nobody": `no receiver "nobody"`} {
		if _, err := n.SendDigest(context.Background(), receiver, testDigest("k")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", receiver, err, want)
		}
	}
	if _, err := n.SendDigest(context.Background(), "team", Digest{}); err == nil {
		t.Error("a digest without a key was sent")
	}
	if len(s.Calls()) != 0 || len(sink.Requests()) != 0 {
		t.Errorf("refused digests reached Slack (%d) or the webhook (%d)", len(s.Calls()), len(sink.Requests()))
	}
}

// In an HA pair both members are due to send the digest at the same
// time: the first sends, the second waits its turn and finds it in the
// gossiped notification log.
func TestSendDigestOnceInACluster(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	p := startPair(t, slackBotConfig(s, ""))
	var wg sync.WaitGroup
	results := make([]DigestResult, 2)
	errs := make([]error, 2)
	for i, m := range []*running{p.a, p.b} {
		wg.Go(func() {
			results[i], errs[i] = m.SendDigest(context.Background(), "oncall", testDigest("2026-03-02T09:00:00Z"))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if results[0] != (DigestResult{Sent: 1}) || results[1] != (DigestResult{Already: 1}) {
		t.Errorf("results a %+v, b %+v; want a sent, b found it sent", results[0], results[1])
	}
	if got := slackDigests(s)["chat.postMessage"]; len(got) != 1 {
		t.Errorf("Slack got %d digests, want 1", len(got))
	}
	// A member that comes to a digest later than the notification log
	// keeps the record of it does not send it.
	late := testDigest("2026-02-23T09:00:00Z")
	late.Due = time.Now().Add(-121 * time.Hour)
	if _, err := p.b.SendDigest(context.Background(), "oncall", late); !errors.Is(err, ErrDigestTooLate) {
		t.Errorf("late digest: %v, want ErrDigestTooLate", err)
	}
}
