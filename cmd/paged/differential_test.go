package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
)

// standIns are one set of local counterparts: what one sender delivered.
type standIns struct {
	pd   *notifiertest.PagerDuty
	og   *notifiertest.Opsgenie
	smtp *notifiertest.SMTP
}

func newStandIns(t *testing.T) standIns {
	return standIns{notifiertest.NewPagerDuty(t), notifiertest.NewOpsgenie(t), notifiertest.NewSMTP(t, "paged", "smtp-pass")}
}

// config is an Alertmanager configuration (route, receivers, global)
// delivering to s, in the syntax both Alertmanager 0.25 and paged take.
func (s standIns) config() string {
	return fmt.Sprintf(`global:
  smtp_smarthost: %s
  smtp_from: paged@example.org
  smtp_auth_username: paged
  smtp_auth_password: smtp-pass
route:
  receiver: oncall
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: oncall
    pagerduty_configs:
      - routing_key: pd-key
        url: %s
    opsgenie_configs:
      - api_key: og-key
        api_url: %s
    email_configs:
      - to: oncall@example.org
        send_resolved: true
        tls_config: {ca_file: %s}
`, s.smtp.Addr(), s.pd.URL(), s.og.URL(), s.smtp.CAFile())
}

// delivered reports whether s has the trigger and the resolve of each
// type.
func (s standIns) delivered() bool {
	return len(s.pd.Events()) >= 2 && len(s.og.Requests()) >= 2 && len(s.smtp.Mails()) >= 2
}

// postAlerts posts alerts to an Alertmanager v2 API (Alertmanager's or
// paged's).
func postAlerts(t *testing.T, base string, alerts []map[string]any) {
	t.Helper()
	b, _ := json.Marshal(alerts)
	resp, err := http.Post(base+"/api/v2/alerts", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s/api/v2/alerts: %s", base, resp.Status)
	}
}

// decoded is a JSON body as a map, without the keys given (dotted paths).
func decoded(t *testing.T, body []byte, drop ...string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for _, d := range drop {
		parts := strings.Split(d, ".")
		at := m
		for _, p := range parts[:len(parts)-1] {
			next, _ := at[p].(map[string]any)
			if next == nil {
				break
			}
			at = next
		}
		delete(at, parts[len(parts)-1])
	}
	return m
}

func sameJSON(t *testing.T, what string, am, paged map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(am, paged) {
		a, _ := json.MarshalIndent(am, "", "  ")
		p, _ := json.MarshalIndent(paged, "", "  ")
		t.Errorf("%s differs\nAlertmanager 0.25:\n%s\npaged:\n%s", what, a, p)
	}
}

// TestDifferentialAlertmanager025 posts the same alert, firing then
// resolved, to Debian's Alertmanager 0.25 and to a real `paged run`, both
// with the same receivers, each delivering to its own PagerDuty, Opsgenie
// and SMTP stand-ins; the bodies must match but for the differences listed
// here, which paged makes on purpose or which are the two processes' own
// addresses. (Alertmanager 0.25 has no Teams integration: msteams came in
// 0.26, msteamsv2 in 0.28.)
func TestDifferentialAlertmanager025(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	amSide, pagedSide := newStandIns(t), newStandIns(t)
	am := testbin.StartAlertmanager(t, amSide.config())
	prom := scrapedBy(t, &gauge{})
	var notifier strings.Builder
	for _, l := range strings.Split(strings.TrimRight(pagedSide.config(), "\n"), "\n") {
		notifier.WriteString("  " + l + "\n")
	}
	config, web := remoteConfig(t, t.TempDir(), prom.URL, "groups: []\n", notifier.String())
	p := startPaged(t, bin, config, web)
	waitUntil(t, 60*time.Second, "paged ready", p.ready)

	startsAt := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	alert := func(endsAt time.Time) []map[string]any {
		return []map[string]any{{
			"labels":       map[string]string{"alertname": "KVCacheSaturated", "instance": "vllm-0", "severity": "critical"},
			"annotations":  map[string]string{"summary": "KV cache of vllm-0 is saturated", "description": "usage is 97% on vllm-0", "runbook_url": "vllm/KVCacheSaturated"},
			"startsAt":     startsAt.Format(time.RFC3339),
			"endsAt":       endsAt.Format(time.RFC3339),
			"generatorURL": "http://prometheus.example/graph?g0.expr=up",
		}}
	}
	for _, base := range []string{am.URL, p.web} {
		postAlerts(t, base, alert(time.Now().Add(time.Hour)))
	}
	waitUntil(t, 60*time.Second, "the triggers", func() bool {
		return len(amSide.pd.Events()) >= 1 && len(pagedSide.pd.Events()) >= 1 && len(amSide.og.Requests()) >= 1 &&
			len(pagedSide.og.Requests()) >= 1 && len(amSide.smtp.Mails()) >= 1 && len(pagedSide.smtp.Mails()) >= 1
	})
	for _, base := range []string{am.URL, p.web} {
		postAlerts(t, base, alert(time.Now().Add(-time.Second)))
	}
	waitUntil(t, 60*time.Second, "the resolves", func() bool { return amSide.delivered() && pagedSide.delivered() })

	// The differences allowed, each with its reason:
	//   - client_url (PagerDuty), source (Opsgenie), the mail's links to
	//     the sender: each process's own address.
	//   - links and custom_details.runbook (PagerDuty), details.runbook and
	//     details.source (Opsgenie): the Runbook and Source links paged
	//     adds for paging.
	//   - custom_details.firing, resolved, num_firing, num_resolved
	//     (PagerDuty): JSON values in the Alertmanager paged embeds, text
	//     in 0.25; compared by meaning below.
	//   - the email's HTML body: paged's readable template; the subject,
	//     sender and recipient must match.
	for i, action := range []string{"trigger", "resolve"} {
		a, g := amSide.pd.Events()[i], pagedSide.pd.Events()[i]
		if a.EventAction != action {
			t.Fatalf("Alertmanager's PagerDuty event %d is %q, want %q", i, a.EventAction, action)
		}
		sameJSON(t, "the PagerDuty "+action,
			decoded(t, a.Body, "client_url", "links", "payload.custom_details"),
			decoded(t, g.Body, "client_url", "links", "payload.custom_details"))
		ad, gd := a.Payload.CustomDetails, g.Payload.CustomDetails
		for _, k := range []string{"num_firing", "num_resolved"} {
			if fmt.Sprint(ad[k]) != fmt.Sprint(gd[k]) {
				t.Errorf("PagerDuty %s custom_details.%s: Alertmanager %v, paged %v", action, k, ad[k], gd[k])
			}
		}
		for _, k := range []string{"firing", "resolved"} {
			text, _ := ad[k].(string)
			list, _ := gd[k].([]any)
			if (text == "") != (len(list) == 0) || (text != "" && !strings.Contains(text, "instance = vllm-0")) {
				t.Errorf("PagerDuty %s custom_details.%s: Alertmanager %q, paged %v", action, k, text, list)
			}
		}
		if !strings.HasSuffix(fmt.Sprint(gd["runbook"]), "/runbooks/vllm/KVCacheSaturated") {
			t.Errorf("paged's PagerDuty %s lacks custom_details.runbook: %s", action, g.Body)
		}
	}
	for i, action := range []string{"create", "close"} {
		a, g := amSide.og.Requests()[i], pagedSide.og.Requests()[i]
		if a.Action != action || g.Action != action || a.Alias != g.Alias {
			t.Errorf("Opsgenie request %d: Alertmanager %s %s, paged %s %s", i, a.Action, a.Alias, g.Action, g.Alias)
		}
		sameJSON(t, "the Opsgenie "+action,
			decoded(t, a.Body, "source", "details.runbook", "details.source"),
			decoded(t, g.Body, "source", "details.runbook", "details.source"))
	}
	for i := range 2 {
		a, g := amSide.smtp.Mails()[i], pagedSide.smtp.Mails()[i]
		if a.Subject != g.Subject || a.From != g.From || strings.Join(a.To, ",") != strings.Join(g.To, ",") {
			t.Errorf("mail %d: Alertmanager %q from %s to %v, paged %q from %s to %v", i, a.Subject, a.From, a.To, g.Subject, g.From, g.To)
		}
		for _, want := range []string{"KV cache of vllm-0 is saturated", "usage is 97% on vllm-0", `href="http://prometheus.example/graph?g0.expr=up"`} {
			if !strings.Contains(a.HTML, want) || !strings.Contains(g.HTML, want) {
				t.Errorf("mail %d: %q in Alertmanager's %v, in paged's %v", i, want, strings.Contains(a.HTML, want), strings.Contains(g.HTML, want))
			}
		}
	}
}
