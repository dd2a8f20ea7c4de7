package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
)

// receiverCase is one paging receiver type against its local stand-in.
type receiverCase struct {
	name string
	// notifier is the notifier block (indented as under notifier:) with
	// one receiver, oncall.
	notifier string
	// fired and resolved report whether the stand-in has the group's
	// first notification and its resolution.
	fired, resolved func() bool
	// attempts counts the requests (MAIL commands) the stand-in answered,
	// failed ones included.
	attempts func() int
	// once checks that the stand-in holds exactly one incident for the
	// group, opened then resolved.
	once func(t *testing.T)
}

const receiverRoute = `  route:
    receiver: oncall
    group_by: [alertname]
    group_wait: 1s
    group_interval: 1s
    repeat_interval: 1h
`

func pagerDutyCase(t *testing.T) receiverCase {
	pd := notifiertest.NewPagerDuty(t)
	pd.Script(http.StatusTooManyRequests, http.StatusServiceUnavailable)
	return receiverCase{
		name: "pagerduty",
		notifier: receiverRoute + fmt.Sprintf(`  receivers:
    - name: oncall
      pagerduty_configs:
        - routing_key: pd-key
          url: %s
`, pd.URL()),
		fired:    func() bool { return len(pd.Events()) >= 1 },
		resolved: func() bool { inc := pd.Incidents(); return len(inc) > 0 && inc[0].Resolved },
		attempts: pd.Attempts,
		once: func(t *testing.T) {
			inc := pd.Incidents()
			// No second trigger either: the restarted paged knows from
			// its notification log that the trigger went out.
			if len(inc) != 1 || inc[0].Opened != 1 || !inc[0].Resolved || strings.Join(inc[0].Events, ",") != "trigger,resolve" {
				t.Fatalf("PagerDuty incidents: %+v, want one dedup key triggered once then resolved", inc)
			}
			for _, ev := range pd.Events() {
				if ev.DedupKey != inc[0].DedupKey {
					t.Errorf("an event with another dedup key: %s", ev.Body)
				}
			}
			if ev := pd.Events()[0]; len(ev.Links) != 1 || ev.Links[0].Text != "Runbook" || !strings.HasSuffix(ev.Links[0].Href, "/runbooks/vllm/QueueBacklog") {
				t.Errorf("the trigger lacks the Runbook link: %s", ev.Body)
			}
		},
	}
}

func opsgenieCase(t *testing.T) receiverCase {
	og := notifiertest.NewOpsgenie(t)
	og.Script(http.StatusTooManyRequests, http.StatusInternalServerError)
	return receiverCase{
		name: "opsgenie",
		notifier: receiverRoute + fmt.Sprintf(`  receivers:
    - name: oncall
      opsgenie_configs:
        - api_key: og-key
          api_url: %s
`, og.URL()),
		fired:    func() bool { return len(og.Requests()) >= 1 },
		resolved: func() bool { al := og.Alerts(); return len(al) > 0 && al[0].Resolved },
		attempts: og.Attempts,
		once: func(t *testing.T) {
			al := og.Alerts()
			if len(al) != 1 || al[0].Opened != 1 || !al[0].Resolved || strings.Join(al[0].Events, ",") != "create,close" {
				t.Fatalf("Opsgenie alerts: %+v, want one alias created once then closed", al)
			}
			if r := og.Requests()[0]; !strings.HasSuffix(r.Details["runbook"], "/runbooks/vllm/QueueBacklog") {
				t.Errorf("the create lacks details.runbook: %s", r.Body)
			}
		},
	}
}

func emailCase(t *testing.T) receiverCase {
	smtp := notifiertest.NewSMTP(t, "paged", "smtp-pass")
	smtp.Script("421 4.3.2 Service not available", "451 4.3.0 Try again later")
	subjects := func(prefix string) []notifiertest.Mail {
		var out []notifiertest.Mail
		for _, m := range smtp.Mails() {
			if strings.HasPrefix(m.Subject, prefix) {
				out = append(out, m)
			}
		}
		return out
	}
	return receiverCase{
		name: "email",
		notifier: receiverRoute + fmt.Sprintf(`  global:
    smtp_smarthost: %s
    smtp_from: paged@example.org
    smtp_auth_username: paged
    smtp_auth_password: smtp-pass
  receivers:
    - name: oncall
      email_configs:
        - to: oncall@example.org
          send_resolved: true
          tls_config: {ca_file: %s}
`, smtp.Addr(), smtp.CAFile()),
		fired:    func() bool { return len(subjects("[FIRING:1] QueueBacklog")) >= 1 },
		resolved: func() bool { return len(subjects("[RESOLVED] QueueBacklog")) >= 1 },
		attempts: smtp.Attempts,
		once: func(t *testing.T) {
			ms := smtp.Mails()
			if len(ms) != 2 {
				for _, m := range ms {
					t.Logf("mail: %s", m.Subject)
				}
				t.Fatalf("%d mails, want one firing then one resolved", len(ms))
			}
			fire, res := ms[0].Subject, ms[1].Subject
			if !strings.HasPrefix(fire, "[FIRING:1] QueueBacklog") || !strings.HasPrefix(res, "[RESOLVED] QueueBacklog") {
				t.Errorf("subjects %q then %q, want firing then resolved", fire, res)
			}
			// The rest of the subject is the group's labels: the same group.
			if g1, g2 := strings.TrimPrefix(fire, "[FIRING:1] "), strings.TrimPrefix(res, "[RESOLVED] "); g1 != g2 {
				t.Errorf("firing mail for %q, resolved mail for %q", g1, g2)
			}
			if !ms[0].TLS || ms[0].User != "paged" || !strings.Contains(ms[0].HTML, ">Runbook</a>") {
				t.Errorf("firing mail: tls %v user %q html:\n%s", ms[0].TLS, ms[0].User, ms[0].HTML)
			}
		},
	}
}

func teamsCase(t *testing.T) receiverCase {
	tm := notifiertest.NewTeams(t)
	tm.Script(http.StatusTooManyRequests, http.StatusBadGateway)
	titled := func(prefix string) int {
		n := 0
		for _, m := range tm.Messages() {
			if len(m.Texts) > 0 && strings.HasPrefix(m.Texts[0], prefix) {
				n++
			}
		}
		return n
	}
	return receiverCase{
		name: "teams",
		notifier: receiverRoute + fmt.Sprintf(`  receivers:
    - name: oncall
      msteamsv2_configs:
        - webhook_url: %s
          send_resolved: true
`, tm.URL()),
		fired:    func() bool { return titled("[FIRING:1] QueueBacklog") >= 1 },
		resolved: func() bool { return titled("[RESOLVED] QueueBacklog") >= 1 },
		attempts: tm.Attempts,
		once: func(t *testing.T) {
			ms := tm.Messages()
			if len(ms) != 2 || titled("[FIRING:1] QueueBacklog") != 1 || titled("[RESOLVED] QueueBacklog") != 1 ||
				!strings.HasPrefix(ms[0].Texts[0], "[FIRING:1]") {
				for _, m := range ms {
					t.Logf("post: %q", m.Texts)
				}
				t.Errorf("%d posts, want one firing then one resolved", len(ms))
			}
		},
	}
}

// nflogSize is the size of the notification log's files under dir.
func nflogSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(path, "nflog") {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// TestReceiversKill9 delivers one alert group through a real `paged run`
// to the local counterparts of PagerDuty Events v2, Opsgenie, email
// (SMTP with STARTTLS and AUTH PLAIN) and a Teams workflow, against
// Debian's Prometheus. Each stand-in first answers a rate limit and a
// server error (421 and 451 for SMTP), which paged retries; once the
// trigger is in, paged is killed with SIGKILL and started again on the
// same storage, and the condition clears. Each stand-in then holds
// exactly one incident for the group, opened then resolved.
func TestReceiversKill9(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	g := &gauge{}
	prom := scrapedBy(t, g)
	for _, mk := range []func(*testing.T) receiverCase{pagerDutyCase, opsgenieCase, emailCase, teamsCase} {
		c := mk(t)
		t.Run(c.name, func(t *testing.T) {
			g.v.Store(0)
			dir := t.TempDir()
			config, web := remoteConfig(t, dir, prom.URL, `groups:
  - name: queue
    rules:
      - alert: QueueBacklog
        expr: queue_depth > 5
        for: 1s
        labels: {severity: critical}
        annotations:
          summary: 'Queue on {{ $labels.instance }} is {{ $value }}'
          runbook_url: 'vllm/QueueBacklog'
`, c.notifier)
			p := startPaged(t, bin, config, web)
			waitUntil(t, 60*time.Second, "paged ready", p.ready)
			logged := nflogSize(filepath.Join(dir, "data"))

			g.v.Store(12)
			waitUntil(t, 90*time.Second, "the trigger at the stand-in", c.fired)
			if n := c.attempts(); n < 3 {
				t.Errorf("%d attempts before the trigger got in, want 3 (rate limit, server error, success)", n)
			}
			// The notification log has the entry on disk before the kill.
			waitUntil(t, 30*time.Second, "the notification log entry", func() bool { return nflogSize(filepath.Join(dir, "data")) > logged })
			p.kill9(t)

			p = startPaged(t, bin, config, web)
			waitUntil(t, 60*time.Second, "paged ready after the restart", p.ready)
			g.v.Store(0)
			waitUntil(t, 90*time.Second, "the resolution at the stand-in", c.resolved)
			c.once(t)
			if t.Failed() {
				t.Logf("paged output:\n%s", p.out.String())
			}
		})
	}
}

// everyReceiver is a notifier block with one receiver of every
// Alertmanager type, and of paged's own Slack and webhook, each secret
// read from a file under secrets/.
const everyReceiver = `  global:
    smtp_smarthost: mail.example.org:587
    smtp_from: paged@example.org
    smtp_auth_username: paged
    smtp_auth_password_file: secrets/smtp
    jira_api_url: https://example.atlassian.net/rest/api/2/
  route:
    receiver: pagerduty
    routes:
      - {matchers: [type=discord], receiver: discord}
      - {matchers: [type=email], receiver: email}
      - {matchers: [type=incidentio], receiver: incidentio}
      - {matchers: [type=jira], receiver: jira}
      - {matchers: [type=mattermost], receiver: mattermost}
      - {matchers: [type=msteams], receiver: msteams}
      - {matchers: [type=msteamsv2], receiver: msteamsv2}
      - {matchers: [type=opsgenie], receiver: opsgenie}
      - {matchers: [type=pushover], receiver: pushover}
      - {matchers: [type=rocketchat], receiver: rocketchat}
      - {matchers: [type=slack], receiver: slack}
      - {matchers: [type=sns], receiver: sns}
      - {matchers: [type=telegram], receiver: telegram}
      - {matchers: [type=victorops], receiver: victorops}
      - {matchers: [type=webex], receiver: webex}
      - {matchers: [type=webhook], receiver: webhook}
      - {matchers: [type=wechat], receiver: wechat}
  receivers:
    - {name: discord, discord_configs: [{webhook_url_file: secrets/discord}]}
    - {name: email, email_configs: [{to: oncall@example.org, auth_password_file: secrets/email}]}
    - {name: incidentio, incidentio_configs: [{url_file: secrets/incidentio-url, alert_source_token_file: secrets/incidentio}]}
    - {name: jira, jira_configs: [{project: OPS, issue_type: Bug, http_config: {basic_auth: {username: paged, password_file: secrets/jira}}}]}
    - {name: mattermost, mattermost_configs: [{webhook_url_file: secrets/mattermost}]}
    - {name: msteams, msteams_configs: [{webhook_url_file: secrets/msteams}]}
    - {name: msteamsv2, msteamsv2_configs: [{webhook_url_file: secrets/msteamsv2}]}
    - {name: opsgenie, opsgenie_configs: [{api_key_file: secrets/opsgenie}]}
    - {name: pagerduty, pagerduty_configs: [{routing_key_file: secrets/pagerduty}]}
    - {name: pushover, pushover_configs: [{user_key_file: secrets/pushover-user, token_file: secrets/pushover}]}
    - {name: rocketchat, rocketchat_configs: [{token_file: secrets/rocketchat, token_id_file: secrets/rocketchat-id}]}
    - {name: slack, slack_configs: [{api_url_file: secrets/slack}]}
    - {name: sns, sns_configs: [{topic_arn: "arn:aws:sns:us-east-1:123456789012:paged", sigv4: {region: us-east-1, profile: paged}}]}
    - {name: telegram, telegram_configs: [{bot_token_file: secrets/telegram, chat_id: 42}]}
    - {name: victorops, victorops_configs: [{api_key_file: secrets/victorops, routing_key: ops}]}
    - {name: webex, webex_configs: [{room_id: room, http_config: {authorization: {credentials_file: secrets/webex}}}]}
    - {name: webhook, webhook_configs: [{url_file: secrets/webhook}]}
    - {name: wechat, wechat_configs: [{api_secret_file: secrets/wechat, corp_id: corp}]}
`

// TestEveryReceiverTypeLoads: a paged.yaml with one receiver of every
// type, secrets from files, passes `paged check-config`, and `paged run`
// becomes ready with it; no secret shows in /api/v1/status/config or the
// log.
func TestEveryReceiverTypeLoads(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"discord", "email", "incidentio-url", "incidentio", "jira", "mattermost", "msteams", "msteamsv2",
		"opsgenie", "pagerduty", "pushover-user", "pushover", "rocketchat", "rocketchat-id", "slack", "telegram", "victorops",
		"webex", "webhook", "wechat", "smtp"} {
		content := "file-s3cr3t-" + s
		if strings.Contains(s, "url") || s == "discord" || strings.HasPrefix(s, "msteams") || s == "mattermost" || s == "slack" || s == "webhook" {
			content = "https://hooks.example.org/" + content
		}
		if err := os.WriteFile(filepath.Join(dir, "secrets", s), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	prom := scrapedBy(t, &gauge{})
	config, web := remoteConfig(t, dir, prom.URL, "groups: []\n", everyReceiver)

	out, err := exec.Command(bin, "check-config", config).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "paged.yaml: valid") {
		t.Fatalf("check-config: %v\n%s", err, out)
	}

	p := startPaged(t, bin, config, web)
	waitUntil(t, 60*time.Second, "paged ready", p.ready)
	resp, err := http.Get(p.web + "/api/v1/status/config")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"pagerduty_configs", "wechat_configs", "sns_configs", "routing_key_file"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/api/v1/status/config lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), "s3cr3t") || strings.Contains(p.out.String(), "s3cr3t") {
		t.Errorf("a secret in /api/v1/status/config or the log:\n%s\n%s", body, p.out.String())
	}
}
