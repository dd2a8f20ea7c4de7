package notifier

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

const deliveryTimeout = 30 * time.Second

// fireRetryResolve fires one alert through the receiver conf routes to,
// whose stand-in answers the first two attempts with failures its API gives
// when it cannot take a notification now (a rate limit, a server error),
// which paged retries; then it resolves the alert. attempts counts what the
// stand-in was sent; accepted waits until it accepted n notifications.
func fireRetryResolve(t *testing.T, conf string, attempts func() int, accepted func(n int)) {
	t.Helper()
	n := start(t, conf, Options{})
	a := firing("KVCacheSaturated")
	n.Notify(context.Background(), []*rules.Alert{a})
	accepted(1)
	if got := attempts(); got != 3 {
		t.Errorf("%d attempts, want 3 (two failures, then the delivery)", got)
	}
	n.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	accepted(2)
}

// pagerDutyConf routes to a receiver pd of the stand-in.
func pagerDutyConf(pd *notifiertest.PagerDuty) string {
	return fmt.Sprintf(tinyRoute, "pd") + fmt.Sprintf(`
receivers:
  - name: pd
    pagerduty_configs:
      - routing_key: pd-key
        url: %s
`, pd.URL())
}

// PagerDuty Events v2: a rate limit and a server error are retried, the
// trigger carries paged's Runbook link and details, and the resolve
// closes the same incident (the dedup key is the group key's hash).
func TestPagerDutyDelivery(t *testing.T) {
	pd := notifiertest.NewPagerDuty(t)
	pd.Script(http.StatusTooManyRequests, http.StatusServiceUnavailable)
	fireRetryResolve(t, pagerDutyConf(pd), pd.Attempts, func(n int) {
		pd.Wait(t, deliveryTimeout, func(p *notifiertest.PagerDuty) bool { return len(p.Events()) == n })
	})
	ev := pd.Events()[0]
	if ev.EventAction != "trigger" || len(ev.Links) != 1 || ev.Links[0].Href != "http://paged.example:9095/runbooks/vllm/KVCacheSaturated.md" || ev.Links[0].Text != "Runbook" {
		t.Errorf("trigger: %s", ev.Body)
	}
	if ev.Payload.CustomDetails["runbook"] != "http://paged.example:9095/runbooks/vllm/KVCacheSaturated.md" || fmt.Sprint(ev.Payload.CustomDetails["num_firing"]) != "1" {
		t.Errorf("custom_details: %v", ev.Payload.CustomDetails)
	}
	inc := pd.Incidents()
	if len(inc) != 1 || inc[0].Opened != 1 || !inc[0].Resolved || strings.Join(inc[0].Events, ",") != "trigger,resolve" {
		t.Errorf("incidents: %+v", inc)
	}
}

// Opsgenie: retried after 429 and 500; the alert has details.runbook and
// details.source; the resolve closes it by its alias.
func TestOpsgenieDelivery(t *testing.T) {
	og := notifiertest.NewOpsgenie(t)
	og.Script(http.StatusTooManyRequests, http.StatusInternalServerError)
	conf := fmt.Sprintf(tinyRoute, "og") + fmt.Sprintf(`
receivers:
  - name: og
    opsgenie_configs:
      - api_key: og-key
        api_url: %s
`, og.URL())
	fireRetryResolve(t, conf, og.Attempts, func(n int) {
		og.Wait(t, deliveryTimeout, func(o *notifiertest.Opsgenie) bool { return len(o.Requests()) == n })
	})
	r := og.Requests()[0]
	if r.Details["runbook"] != "http://paged.example:9095/runbooks/vllm/KVCacheSaturated.md" || r.Details["source"] != "http://prometheus.example/graph?g0.expr=up" {
		t.Errorf("create: %s", r.Body)
	}
	al := og.Alerts()
	if len(al) != 1 || al[0].Opened != 1 || !al[0].Resolved {
		t.Errorf("alerts: %+v", al)
	}
}

// Teams workflow (msteamsv2): 429 is retried (Alertmanager alone gives
// up), so is 502; then one firing and one resolved card.
func TestTeamsDelivery(t *testing.T) {
	tm := notifiertest.NewTeams(t)
	tm.Script(http.StatusTooManyRequests, http.StatusBadGateway)
	conf := fmt.Sprintf(tinyRoute, "teams") + fmt.Sprintf(`
receivers:
  - name: teams
    msteamsv2_configs:
      - webhook_url: %s
        send_resolved: true
`, tm.URL())
	fireRetryResolve(t, conf, tm.Attempts, func(n int) {
		tm.Wait(t, deliveryTimeout, func(s *notifiertest.Teams) bool { return len(s.Messages()) == n })
	})
	msgs := tm.Messages()
	if !strings.HasPrefix(msgs[0].Texts[0], "[FIRING:1] KVCacheSaturated") || !strings.HasPrefix(msgs[1].Texts[0], "[RESOLVED] KVCacheSaturated") {
		t.Errorf("cards: %q / %q", msgs[0].Texts, msgs[1].Texts)
	}
}

// Email over SMTP with STARTTLS and AUTH PLAIN: a 421 and a 451 are
// retried; the firing mail is paged's HTML body with the Runbook and
// Source links; the resolve sends a second mail.
func TestEmailDelivery(t *testing.T) {
	smtp := notifiertest.NewSMTP(t, "paged", "smtp-pass")
	smtp.Script("421 4.3.2 Service not available", "451 4.3.0 Try again later")
	conf := fmt.Sprintf(tinyRoute, "mail") + fmt.Sprintf(`
global:
  smtp_smarthost: %s
  smtp_from: paged@example.org
  smtp_auth_username: paged
  smtp_auth_password: smtp-pass
receivers:
  - name: mail
    email_configs:
      - to: oncall@example.org
        send_resolved: true
        tls_config: {ca_file: %s}
`, smtp.Addr(), smtp.CAFile())
	fireRetryResolve(t, conf, smtp.Attempts, func(n int) {
		smtp.Wait(t, deliveryTimeout, func(s *notifiertest.SMTP) bool { return len(s.Mails()) == n })
	})
	m := smtp.Mails()[0]
	if !m.TLS || m.User != "paged" || m.To[0] != "oncall@example.org" || !strings.HasPrefix(m.Subject, "[FIRING:1] KVCacheSaturated") {
		t.Errorf("mail: tls %v user %q to %v subject %q", m.TLS, m.User, m.To, m.Subject)
	}
	for _, want := range []string{
		`href="http://paged.example:9095/runbooks/vllm/KVCacheSaturated.md"`, ">Runbook</a>",
		`href="http://prometheus.example/graph?g0.expr=up"`, ">Source</a>",
		"KV cache of KVCacheSaturated is saturated", "usage is 97% on vllm-0",
	} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("the mail's HTML lacks %q:\n%s", want, m.HTML)
		}
	}
	if s := smtp.Mails()[1].Subject; !strings.HasPrefix(s, "[RESOLVED] KVCacheSaturated") {
		t.Errorf("resolve mail subject %q", s)
	}
}

// A restart between fire and resolve, the first process never shut down: the notification log on disk tells
// the new process the trigger was sent, so it sends no second one, and
// its resolve carries the same dedup key: one incident, opened then
// resolved.
func TestPagerDutyOneIncidentAcrossRestart(t *testing.T) {
	pd := notifiertest.NewPagerDuty(t)
	conf := pagerDutyConf(pd)
	dir := t.TempDir()
	n1 := start(t, conf, Options{StoragePath: dir})
	a := firing("KVCacheSaturated")
	n1.Notify(context.Background(), []*rules.Alert{a})
	pd.Wait(t, deliveryTimeout, func(p *notifiertest.PagerDuty) bool { return len(p.Events()) == 1 })
	// Once the entry shows, it is in the log's segment on disk. n1 is
	// never stopped, as after a kill -9: nothing is flushed at shutdown.
	waitFor(t, func() bool { return nflogEntries(n1.Notifier) == 1 })

	n2 := start(t, conf, Options{StoragePath: dir})
	n2.Notify(context.Background(), []*rules.Alert{a}) // the rules send it again after a restart
	waitFor(t, func() bool { return testutil.ToFloat64(n2.metrics.flushes.WithLabelValues("pd")) >= 1 })
	n2.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	pd.Wait(t, deliveryTimeout, func(p *notifiertest.PagerDuty) bool {
		inc := p.Incidents()
		return len(inc) > 0 && inc[0].Resolved
	})
	inc := pd.Incidents()
	if len(inc) != 1 || inc[0].Opened != 1 || strings.Join(inc[0].Events, ",") != "trigger,resolve" {
		t.Errorf("incidents across the restart: %+v", inc)
	}
}
