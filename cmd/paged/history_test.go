package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
)

const historyRules = `groups:
  - name: queue
    rules:
      - alert: QueueBacklog
        expr: queue_depth > 5
        for: 2s
        labels: {severity: critical}
        annotations: {summary: 'queue {{ $value }} on {{ $labels.instance }}'}
`

func historyNotifier(slack *notifiertest.Slack) string {
	return fmt.Sprintf(`  route:
    receiver: oncall
    group_by: [alertname]
    group_wait: 0s
    group_interval: 1s
    repeat_interval: 1h
  receivers:
    - name: oncall
      slack_configs:
        - app_token: xoxb-history-test
          app_url: %s
          channel: '#alerts'
`, slack.APIURL())
}

// history reads GET /api/v1/history with the query given; ok is false
// while nothing answers.
func (p *pagedProc) history(t *testing.T, q url.Values) (evs []history.Event, ok bool) {
	t.Helper()
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(p.web + "/api/v1/history?" + q.Encode())
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Events []history.Event `json:"events"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, false
	}
	if resp.StatusCode != http.StatusOK || body.Status != "success" {
		t.Fatalf("GET /api/v1/history?%s: %d %s", q.Encode(), resp.StatusCode, body.Error)
	}
	return body.Data.Events, true
}

// details decodes an event's details.
func details(t *testing.T, e history.Event) map[string]any {
	t.Helper()
	var d map[string]any
	if len(e.Details) > 0 {
		if err := json.Unmarshal(e.Details, &d); err != nil {
			t.Fatalf("event %d: details %s: %v", e.ID, e.Details, err)
		}
	}
	return d
}

// firingNotification tells whether e is a notification sent with firing
// alerts in it.
func firingNotification(t *testing.T, e history.Event) bool {
	if e.Type != history.TypeNotification || e.Outcome != history.OutcomeSent {
		return false
	}
	n, _ := details(t, e)["firing"].(float64)
	return n > 0
}

// sequence is the types of the events, with a notification's outcome
// and whether it carried firing alerts, a silence's outcome and user.
func sequence(t *testing.T, evs []history.Event) []string {
	var out []string
	for _, e := range evs {
		switch e.Type {
		case history.TypeNotification:
			kind := "resolved"
			if firingNotification(t, e) {
				kind = "firing"
			}
			out = append(out, "notification:"+e.Outcome+":"+kind)
		case history.TypeSilence:
			out = append(out, "silence:"+e.Outcome+":"+e.User)
		default:
			out = append(out, e.Type)
		}
	}
	return out
}

// identity is what makes two events the same thing happening twice: an
// alert's state change by its fingerprint and activeAt, a notification by
// its group, receiver and content, a silence by its id and outcome.
func identity(t *testing.T, e history.Event) string {
	d := details(t, e)
	switch e.Type {
	case history.TypeNotification:
		return fmt.Sprintf("%s|%s|%s|%s|%v|%v", e.Type, e.GroupKey, e.Receiver, e.Outcome, d["firing"], d["resolved"])
	case history.TypeSilence:
		return fmt.Sprintf("%s|%s|%s", e.Type, e.Outcome, e.Details)
	default:
		return fmt.Sprintf("%s|%s|%v", e.Type, e.Fingerprint, d["active_at"])
	}
}

// TestHistoryEndToEnd runs a real `paged run` in embedded mode with
// Slack's stand-in: an alert goes pending, fires, is paged, a silence is
// created through the API, paged is killed with SIGKILL while the alert
// fires and restarted, the alert resolves, and paged is killed and
// restarted again. GET /api/v1/history returns the alert's pending,
// firing, notification (with the Slack message's ts) and resolved events
// in order and the silence with its author, the same events after each
// restart and none twice. Then the history file is damaged while paged
// is down: it is moved aside, PagedStateCorrupted names it, and the alert
// firing again is paged and recorded in the new file.
func TestHistoryEndToEnd(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	g := &gauge{}
	g.v.Store(12)
	slack := notifiertest.NewSlack(t, "xoxb-history-test")
	dir := t.TempDir()
	config, web := embeddedConfig(t, dir, g, historyRules, historyNotifier(slack))
	p := startPaged(t, bin, config, web)
	ofAlert := url.Values{"alertname": {"QueueBacklog"}}

	waitUntil(t, 90*time.Second, "the Slack message", func() bool { return len(topLevel(slack.Calls())) >= 1 })
	msg := topLevel(slack.Calls())[0]
	var evs []history.Event
	waitUntil(t, 30*time.Second, "the notification in the history", func() bool {
		evs, _ = p.history(t, ofAlert)
		for _, e := range evs {
			if firingNotification(t, e) {
				return true
			}
		}
		return false
	})

	// A silence through Alertmanager's API, with its author. It matches
	// another instance, so that the alert is still paged.
	now := time.Now().UTC()
	body := fmt.Sprintf(`{"matchers":[{"name":"alertname","value":"QueueBacklog","isRegex":false},{"name":"instance","value":"b","isRegex":false}],`+
		`"startsAt":%q,"endsAt":%q,"createdBy":"alice","comment":"maintenance of b"}`, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	resp, err := http.Post(p.web+"/api/v2/silences", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v2/silences: %s", resp.Status)
	}

	// kill -9 while the alert fires: the restarted paged records no new
	// pending, firing or notification for it.
	waitUntil(t, 10*time.Second, "the silence in the history", func() bool {
		evs, _ = p.history(t, ofAlert)
		return strings.Contains(strings.Join(sequence(t, evs), " "), "silence:created:alice")
	})
	// The alerts page links the alert's timeline, in a browser.
	dom := testbin.ChromiumDOM(t, p.web+"/")
	m := regexp.MustCompile(`<a class="history" href="(history\?alertname=QueueBacklog&amp;fingerprint=([0-9a-f]{16}))">History</a>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no History link on the alerts page:\n%s", dom)
	}
	timeline := p.web + "/" + strings.ReplaceAll(m[1], "&amp;", "&")
	var fp string
	for _, e := range evs {
		if e.Type == history.TypeFiring {
			fp = e.Fingerprint
		}
	}
	if m[2] != fp {
		t.Errorf("the History link's fingerprint %s is not the firing event's %s", m[2], fp)
	}
	// The Slack message's History button opens the same timeline.
	if b := buttonURL(t, msg.Blocks, "history"); b != timeline {
		t.Errorf("the Slack message's History button links %q, want the alerts page's %q", b, timeline)
	}

	p.kill9(t)
	p = startPaged(t, bin, config, web)
	waitUntil(t, 60*time.Second, "the restarted paged", p.ready)

	g.v.Store(0)
	waitUntil(t, 60*time.Second, "the resolved event", func() bool {
		evs, _ = p.history(t, ofAlert)
		return strings.Contains(strings.Join(sequence(t, evs), " "), "resolved")
	})
	want := []string{"pending", "firing", "notification:sent:firing", "silence:created:alice", "resolved"}
	got := sequence(t, evs)
	if !subsequence(got, want) {
		t.Fatalf("history of QueueBacklog:\n  %s\nwant in this order:\n  %s\n%s", strings.Join(got, " "), strings.Join(want, " "), p.out)
	}
	for _, e := range evs {
		switch {
		case firingNotification(t, e):
			d := details(t, e)
			if d["slack_ts"] != msg.TS || d["slack_channel"] != "CALERTS" || e.Receiver != "oncall" || e.Integration != "slack" {
				t.Errorf("notification event %+v (details %v), want the Slack message %s in CALERTS sent to oncall/slack", e, d, msg.TS)
			}
		case e.Type == history.TypeSilence:
			if !strings.Contains(string(e.Details), `"createdBy":"alice"`) || !strings.Contains(string(e.Details), `maintenance of b`) {
				t.Errorf("silence event details %s lack the author and comment", e.Details)
			}
		case e.Type == history.TypeFiring:
			if e.Labels["exported_instance"] != "a" || e.Labels["severity"] != "critical" || details(t, e)["value"] != 12.0 {
				t.Errorf("firing event %+v %s: want exported_instance a, severity critical, value 12", e, e.Details)
			}
		}
	}
	checkOnce(t, evs)

	// The timeline in a browser: the pending and firing bands, the
	// notification sent with its Slack ts, the silence by alice, and the
	// events in order; /graph of the rule links it too.
	dom = testbin.ChromiumDOM(t, timeline)
	var bands, rows []string
	for _, b := range regexp.MustCompile(`class="band state-(\w+)"`).FindAllStringSubmatch(dom, -1) {
		bands = append(bands, b[1])
	}
	for _, r := range regexp.MustCompile(`<tr class="event" data-type="(\w+)"`).FindAllStringSubmatch(dom, -1) {
		rows = append(rows, r[1])
	}
	if strings.Join(bands, " ") != "pending firing" || !subsequence(rows, []string{"pending", "firing", "notification", "silence", "resolved"}) ||
		!strings.Contains(dom, `data-kind="notification" data-outcome="sent"`) || !strings.Contains(dom, `data-kind="silence" data-outcome="created"`) ||
		!strings.Contains(dom, `<td class="who">alice</td>`) || !strings.Contains(dom, "oncall/slack") || !strings.Contains(dom, "ts "+msg.TS) {
		t.Errorf("timeline %s: bands %v, rows %v\n%s", timeline, bands, rows, dom)
	}
	dom = testbin.ChromiumDOM(t, p.web+"/graph?g0.expr="+url.QueryEscape("queue_depth > 5")+"&g0.rule=QueueBacklog&g0.range_input=15m")
	if !regexp.MustCompile(`<a id="rule-history" href="history\?alertname=QueueBacklog&amp;end=[^"]+&amp;range=15m">`).MatchString(dom) {
		t.Errorf("/graph of QueueBacklog does not link its history:\n%s", dom)
	}

	// kill -9 once the alert resolved: the same events, none twice.
	p.kill9(t)
	p = startPaged(t, bin, config, web)
	var after []history.Event
	waitUntil(t, 60*time.Second, "the history after the restart", func() bool {
		var ok bool
		after, ok = p.history(t, ofAlert)
		return ok && p.ready()
	})
	byID := map[int64]history.Event{}
	for _, e := range after {
		byID[e.ID] = e
	}
	for _, e := range evs {
		a, ok := byID[e.ID]
		if !ok || a.Type != e.Type || !a.Time.Equal(e.Time) || string(a.Details) != string(e.Details) {
			t.Errorf("event %d %s at %s before the restart is %+v after it", e.ID, e.Type, e.Time, a)
		}
	}
	checkOnce(t, after)
	// paged history prints them, from the running paged and from its
	// storage directory.
	for _, args := range [][]string{{"--url", p.web}, {"--storage.path", filepath.Join(dir, "data")}} {
		out := mustRun(t, append([]string{"history", "--alertname", "QueueBacklog"}, args...)...)
		var types []string
		for _, line := range strings.Split(out, "\n")[1:] {
			if f := strings.Fields(line); len(f) > 4 {
				types = append(types, f[3])
			}
		}
		if !subsequence(types, []string{"pending", "firing", "notification", "silence", "resolved"}) || !strings.Contains(out, "alice") {
			t.Errorf("paged history %s:\n%s", args[0], out)
		}
	}
	if n := len(topLevel(slack.Calls())); n != 1 {
		t.Errorf("%d top-level Slack messages, want 1", n)
	}

	// A damaged history file is moved aside, named by PagedStateCorrupted,
	// and paging goes on with a new one.
	p.kill9(t)
	path := filepath.Join(dir, "data", history.FileName)
	// Both the file and its write-ahead log: SQLite reads a page from the
	// log when the log has it, the first page (the file's header) too.
	junk := []byte(strings.Repeat("not a database ", 300))
	for _, name := range []string{path, path + "-wal"} {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(junk, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	p = startPaged(t, bin, config, web)
	damagedAt := time.Now()
	var as []apiAlert
	waitUntil(t, 60*time.Second, "PagedStateCorrupted for history.db", func() bool {
		as, _ = p.alerts()
		for _, a := range as {
			if a.Labels["alertname"] == "PagedStateCorrupted" && a.Labels["file"] == history.FileName {
				return true
			}
		}
		if time.Since(damagedAt) > 55*time.Second {
			t.Logf("alerts: %+v\n%s", as, p.out)
		}
		return false
	})
	moved, _ := filepath.Glob(path + ".corrupt.*")
	if len(moved) == 0 {
		t.Errorf("no %s.corrupt.* beside the new file", path)
	}
	g.v.Store(12)
	waitUntil(t, 60*time.Second, "the alert paged again", func() bool {
		for _, c := range topLevel(slack.Calls())[1:] {
			if strings.Contains(string(c.Blocks)+c.Text, "QueueBacklog") {
				return true
			}
		}
		return false
	})
	waitUntil(t, 30*time.Second, "the new page in the new history", func() bool {
		evs, _ := p.history(t, ofAlert)
		for _, e := range evs {
			if firingNotification(t, e) {
				return true
			}
		}
		return false
	})
	evs, _ = p.history(t, url.Values{"alertname": {"QueueBacklog"}, "type": {"pending"}})
	if len(evs) != 1 {
		t.Errorf("%d pending events in the new history, want 1 (the new file holds only what happened since)", len(evs))
	}
}

// subsequence tells whether want appears in got in order.
func subsequence(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// checkOnce fails the test for an event recorded twice.
func checkOnce(t *testing.T, evs []history.Event) {
	t.Helper()
	seen := map[string]int64{}
	for _, e := range evs {
		k := identity(t, e)
		if id, ok := seen[k]; ok {
			t.Errorf("events %d and %d are the same %s", id, e.ID, k)
		}
		seen[k] = e.ID
	}
}
