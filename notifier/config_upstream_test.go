package notifier

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// An alertmanager.yml with one receiver of every Alertmanager type loads
// unchanged, each receiver holding its one integration, and builds into
// Alertmanager's integrations.
func TestEveryAlertmanagerReceiverType(t *testing.T) {
	text, err := os.ReadFile("testdata/receivers/every_type.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(text)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Receivers {
		if n := upstreamCount(&r.Upstream); n != 1 {
			t.Errorf("receiver %s: %d integrations, want 1", r.Name, n)
		}
		got = append(got, r.Name+"_configs")
	}
	slices.Sort(got)
	if want := UpstreamTypes(); !slices.Equal(got, want) {
		t.Errorf("types covered: %v\nAlertmanager's types: %v", got, want)
	}
	// Alertmanager's defaults and the global block were applied.
	email, _ := c.Receiver("email")
	if e := email.Upstream.EmailConfigs[0]; e.Smarthost.String() != "mail.example.org:587" || e.From != "paged@example.org" || e.HTML == "" {
		t.Errorf("email config: smarthost %q from %q html %q", e.Smarthost.String(), e.From, e.HTML)
	}
	pd, _ := c.Receiver("pagerduty")
	if p := pd.Upstream.PagerdutyConfigs[0]; p.URL == nil || p.URL.String() != "https://events.pagerduty.com/v2/enqueue" || !p.SendResolved() {
		t.Errorf("pagerduty defaults not applied: %+v", p)
	}

	n, err := New(Options{Config: c, ExternalURL: "http://paged.example:9095"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.closeState()
	defer n.alerts.Close()
	tmpl, err := newTemplate(nil, n.links())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Receivers {
		ints, err := n.integrations(r, tmpl, false, nil)
		if err != nil {
			t.Fatalf("receiver %s: %v", r.Name, err)
		}
		if len(ints) != 1 || ints[0].Name() != r.Name {
			t.Errorf("receiver %s: integrations %v", r.Name, ints)
		}
	}
}

// Alertmanager's problems in receivers are reported at the item's line
// and column, all of them in one pass, and never quote a secret.
func TestUpstreamReceiverErrors(t *testing.T) {
	const text = `receivers:
  - name: a
    pagerduty_configs:
      - severity: critical
      - routing_key: k
        routing_key_file: /f
    email_configs:
      - to: x@example.org
    opsgenie_configs:
      - api_key: og-s3cr3t
        priority: 7
        no_such_key: 1
  - name: b
    msteamsv2_configs:
      - webhook_url: 123-not-a-url-s3cr3t
    telegram_configs:
      - chat_id: notanumber-s3cr3t
        bot_token: t
    gotify_configs: []
route: {receiver: a}
`
	_, err := ParseConfig([]byte(text))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"4:9: pagerduty_configs: missing service or routing key in PagerDuty config",
		"5:9: pagerduty_configs: at most one of routing_key & routing_key_file must be configured",
		"8:9: email_configs: no global SMTP smarthost set",
		"12:22: opsgenie_configs: field no_such_key not found",
		"15:9: msteamsv2_configs: unsupported scheme",
		"17:18: telegram_configs: cannot unmarshal",
		"19:5: receiver: gotify_configs is not a receiver type of Alertmanager",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "s3cr3t") {
		t.Errorf("an error quotes a secret:\n%s", msg)
	}
}
