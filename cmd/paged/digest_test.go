package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
)

// digestMessage is a digest the Slack stand-in received: its fields by
// title, its noisiest alerts and its button's link.
type digestMessage struct {
	fields map[string]string
	noisy  string
	link   string
}

func digestMessages(t *testing.T, slack *notifiertest.Slack) []digestMessage {
	t.Helper()
	var out []digestMessage
	for _, c := range slack.Calls() {
		if c.Method != "chat.postMessage" || c.Channel != "#digest" || c.Status != http.StatusOK || c.Error != "" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text *struct {
				Text string `json:"text"`
			} `json:"text"`
			Fields []struct {
				Text string `json:"text"`
			} `json:"fields"`
			Elements []struct {
				URL string `json:"url"`
			} `json:"elements"`
		}
		if err := json.Unmarshal(c.Blocks, &blocks); err != nil {
			t.Fatalf("digest blocks %s: %v", c.Blocks, err)
		}
		m := digestMessage{fields: map[string]string{}}
		for _, b := range blocks {
			for _, f := range b.Fields {
				title, value, _ := strings.Cut(f.Text, "\n")
				m.fields[strings.Trim(title, "*")] = value
			}
			if b.Type == "section" && b.Text != nil {
				m.noisy = b.Text.Text
			}
			if b.Type == "actions" && len(b.Elements) == 1 {
				m.link = b.Elements[0].URL
			}
		}
		out = append(out, m)
	}
	return out
}

// TestDigestEndToEnd runs a real `paged run` in embedded mode with
// Slack's stand-in. Flappy is paged twice (it fires, resolves and fires
// again) and Steady once, outside the working hours of the report:
// block. A reload adds a digest to receiver team scheduled a minute or
// so ahead: the stand-in gets exactly one digest
// with those numbers and a button to /report over the digest's span.
// paged is killed with SIGKILL after recording it and restarted: no
// second digest for the same week. The digest's link, opened in
// headless Chromium against the restarted paged, shows the same numbers.
func TestDigestEndToEnd(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	g := &twoGauges{}
	slack := notifiertest.NewSlack(t, "xoxb-digest-test")
	dir := t.TempDir()
	config, web := embeddedConfig(t, dir, g, `groups:
  - name: g
    rules:
      - alert: Flappy
        expr: flappy > 5
      - alert: Steady
        expr: steady > 5
`, fmt.Sprintf(`  route:
    receiver: oncall
    group_by: [alertname]
    group_wait: 0s
    group_interval: 1s
    repeat_interval: 1h
  receivers:
    - name: oncall
      slack_configs:
        - {app_token: xoxb-digest-test, app_url: %[1]q, channel: '#alerts'}
    - name: team
      slack_configs:
        - {app_token: xoxb-digest-test, app_url: %[1]q, channel: '#digest'}
`, slack.APIURL()))
	// Working hours hours away from now, every day: every page of the
	// test is outside them.
	hours := "02:00-03:00"
	if time.Now().UTC().Hour() < 12 {
		hours = "20:00-21:00"
	}
	report := fmt.Sprintf("report:\n  time_zone: UTC\n  working_hours: %s\n  working_days: [mon, tue, wed, thu, fri, sat, sun]\n", hours)
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(report)
	p := startPaged(t, bin, config, web)

	alertMessages := func() int {
		n := 0
		for _, c := range topLevel(slack.Calls()) {
			if c.Channel == "#alerts" {
				n++
			}
		}
		return n
	}
	g.steady.Store(10)
	g.flappy.Store(10)
	waitUntil(t, 90*time.Second, "Flappy and Steady paged", func() bool { return alertMessages() == 2 })
	g.flappy.Store(0)
	waitUntil(t, 60*time.Second, "Flappy's resolved notification", func() bool {
		evs, _ := p.history(t, url.Values{"type": {"notification"}})
		for _, e := range evs {
			if e.Outcome == "sent" && !firingNotification(t, e) {
				return true
			}
		}
		return false
	})
	g.flappy.Store(10)
	waitUntil(t, 60*time.Second, "Flappy paged again", func() bool { return alertMessages() == 3 })

	// The digest, due at the start of a minute 30 to 90 s ahead (the
	// schedule's precision is the minute), over the hour before it;
	// added by a reload.
	due := time.Now().UTC().Add(30 * time.Second).Truncate(time.Minute).Add(time.Minute)
	appendTo(fmt.Sprintf("  digest: {receiver: team, schedule: %q, span: 1h}\n", due.Format("Mon 15:04")))
	resp, err := http.Post(p.web+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reload: %s\n%s", resp.Status, p.out)
	}
	waitUntil(t, 30*time.Second, "the digest scheduled", func() bool {
		v, _ := testbin.MetricSum(p.web, "paged_report_digest_next_timestamp_seconds")
		return v == float64(due.Unix())
	})
	// Recorded in storage.path once sent: the last digest's gauge.
	waitUntil(t, 150*time.Second, "the digest sent and recorded", func() bool {
		v, _ := testbin.MetricSum(p.web, "paged_report_digest_last_timestamp_seconds")
		return v == float64(due.Unix())
	})
	got := digestMessages(t, slack)
	if len(got) != 1 {
		t.Fatalf("%d digests, want 1\n%s", len(got), p.out)
	}
	d := got[0]
	for title, want := range map[string]string{
		"Pages": "3", "Outside working hours": "3", "Never acknowledged": "3", "Time to acknowledge": "no page acknowledged",
		"Flapping alerts": "0", "Delivery failures": "0",
	} {
		if d.fields[title] != want {
			t.Errorf("digest %s: %q, want %q", title, d.fields[title], want)
		}
	}
	if !strings.Contains(d.noisy, "• `Flappy`: 2 pages, 2 outside working hours, never acknowledged\n• `Steady`: 1 page, 1 outside working hours") {
		t.Errorf("digest's noisiest alerts:\n%s", d.noisy)
	}
	wantLink := p.web + "/report?" + url.Values{"from": {due.Add(-time.Hour).Format(time.RFC3339)}, "to": {due.Format(time.RFC3339)}}.Encode()
	if d.link != wantLink {
		t.Errorf("digest link %s, want %s", d.link, wantLink)
	}
	if v, _ := testbin.MetricSum(p.web, "paged_report_digests_total", "outcome", "sent"); v != 1 {
		t.Errorf("paged_report_digests_total{outcome=sent} = %v", v)
	}

	// kill -9 and restart in the same week: no second digest.
	p.kill9(t)
	p = startPaged(t, bin, config, web)
	waitUntil(t, 60*time.Second, "the restarted paged", p.ready)
	waitUntil(t, 30*time.Second, "the restarted paged's digest schedule", func() bool {
		next, _ := testbin.MetricSum(p.web, "paged_report_digest_next_timestamp_seconds")
		last, _ := testbin.MetricSum(p.web, "paged_report_digest_last_timestamp_seconds")
		return next == float64(due.Add(7*24*time.Hour).Unix()) && last == float64(due.Unix())
	})
	if n := len(digestMessages(t, slack)); n != 1 {
		t.Errorf("%d digests after the restart, want the one\n%s", n, p.out)
	}
	if v, _ := testbin.MetricSum(p.web, "paged_report_digests_total"); v != 0 {
		t.Errorf("the restarted paged counted %v digests", v)
	}

	// The digest's link in a browser: the report of its span.
	doc := testbin.ParseHTML(t, testbin.ChromiumDOM(t, d.link))
	for id, want := range map[string]string{"pages": "3", "outside": "3"} {
		if n := testbin.FindByID(doc, id); n == nil || testbin.Text(n) != want {
			t.Errorf("the report page's %s: %v, want %s", id, n, want)
		}
	}
	if n := testbin.FindByID(doc, "noisiest"); n == nil || !strings.Contains(testbin.Text(n), "Flappy 2") || !strings.Contains(testbin.Text(n), "Steady 1") {
		t.Errorf("the report page's noisiest alerts: %v", n)
	}
}
