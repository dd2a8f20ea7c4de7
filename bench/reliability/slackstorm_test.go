//go:build reliability

package reliability

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
)

// The Slack storm (issue 39): stormGroups alert groups fire at once, the
// Slack stand-in stores each post when it arrives and answers it 1-3 s
// later, as Slack does under load, and the process that posts is killed
// with SIGKILL while the posts are in flight, then started again. What a
// user sees: how many groups got a second top-level message, and whether
// each group's first message says RESOLVED in the end.

const (
	scenarioStorm = "Slack storm, kill -9"
	stormGroups   = 300
	// stormOthers is how many messages other apps post to the channel
	// while paged is down: paged's interrupted posts are then past the
	// first page of conversations.history.
	stormOthers = 300
)

// stormRule fires one alert per replica, each its own group.
const stormRule = `groups:
  - name: storm
    rules:
      - alert: SlackStorm
        expr: storm > 5
        for: 1s
        labels: {severity: critical}
        annotations:
          summary: 'queue on {{ $labels.replica }} is {{ $value }}'
`

// stormReplica finds the group a message is about.
var stormReplica = regexp.MustCompile(`storm-[0-9]{3}`)

// stormExporter is an exporter with stormGroups series at 12, above the
// rule's threshold; set them before Prometheus starts, so that every
// alert is in its first scrape and the groups fire together.
func stormExporter(t *testing.T) *exporter {
	x := newExporter(t)
	stormSet(x, 12)
	return x
}

func stormSet(x *exporter, v float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range stormGroups {
		x.v[fmt.Sprintf(`storm{replica="storm-%03d"}`, i)] = v
	}
}

// lateAnswers makes the stand-in answer method's calls 1-3 s after
// storing them, and keeps when each answer is due, to count the posts in
// flight at a moment.
type lateAnswers struct {
	mu  sync.Mutex
	due []time.Time
}

func answerLate(s *slack, method string) *lateAnswers {
	l := &lateAnswers{}
	s.SetDelay(func(m string) time.Duration {
		if m != method {
			return 0
		}
		d := time.Second + rand.N(2*time.Second)
		l.mu.Lock()
		l.due = append(l.due, time.Now().Add(d))
		l.mu.Unlock()
		return d
	})
	return l
}

// inFlight counts the calls stored and not yet answered at t.
func (l *lateAnswers) inFlight(at time.Time) (stored, flying int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.due {
		if d.After(at) {
			flying++
		}
	}
	return len(l.due), flying
}

// stormPosts returns the top-level messages the stand-in stored for each
// group, in the order they arrived: chat.postMessage without a thread, or
// an incoming-webhook post (whose attachments hold the text) with status
// firing (what matches wants).
func stormPosts(s *slack, matches func(notifiertest.SlackCall) bool) map[string][]notifiertest.SlackCall {
	by := map[string][]notifiertest.SlackCall{}
	for _, c := range s.Calls() {
		if c.Error != "" || c.ThreadTS != "" || !matches(c) {
			continue
		}
		g := stormReplica.FindString(messageText(c))
		if g == "" {
			continue
		}
		by[g] = append(by[g], c)
	}
	return by
}

// messageText is all the text of a call: blocks, text and attachments.
func messageText(c notifiertest.SlackCall) string {
	var b strings.Builder
	b.WriteString(c.Text)
	b.Write(c.Blocks)
	for _, a := range c.Attachments {
		b.WriteString(" " + a.Title + " " + a.Text)
	}
	return b.String()
}

// duplicates sums the top-level messages past each group's first.
func duplicates(by map[string][]notifiertest.SlackCall) int {
	n := 0
	for _, posts := range by {
		n += len(posts) - 1
	}
	return n
}

// quietFor waits until the stand-in has had no call for d; false after
// timeout.
func quietFor(s *slack, d, timeout time.Duration) bool {
	n, last := len(s.Calls()), time.Now()
	return poll(timeout, func() bool {
		if m := len(s.Calls()); m != n {
			n, last = m, time.Now()
		}
		return time.Since(last) >= d
	})
}

// stormRun is what one run of the storm measured.
type stormRun struct {
	stored, inFlight    int // posts stored, and not yet answered, at the kill
	groups, dups        int
	edited              int // groups whose first message reads RESOLVED
	journal, found, new int // how the restarted paged recovered (its log)
	history             int // conversations.history calls
}

// TestSlackStorm is the storm against `paged run` with Slack in bot-token
// mode (chat.postMessage, chat.update, conversations.history paged with a
// cursor), the channel configured by name. paged is killed within 1.5 s
// of the first post; before it starts again other apps post stormOthers
// messages to the channel. In the long form five runs.
func TestSlackStorm(t *testing.T) {
	t.Parallel()
	var runs []stormRun
	for i := range pick(1, 5) {
		r, ok := slackStormPaged(t, i)
		if !ok {
			return
		}
		runs = append(runs, r)
	}
	list := func(f func(stormRun) string) string {
		var s []string
		for _, r := range runs {
			s = append(s, f(r))
		}
		return strings.Join(s, ", ")
	}
	dups, groups, edited := 0, true, true
	for _, r := range runs {
		dups += r.dups
		groups = groups && r.groups == stormGroups
		edited = edited && r.edited == r.groups
	}
	report(t, scenarioStorm, "paged", "runs", len(runs), "")
	report(t, scenarioStorm, "paged", "posts stored / unanswered at the kill", list(func(r stormRun) string { return fmt.Sprintf("%d / %d", r.stored, r.inFlight) }), "")
	report(t, scenarioStorm, "paged", "groups with a message", list(func(r stormRun) string { return fmt.Sprint(r.groups) }), fmt.Sprint(stormGroups), groups)
	report(t, scenarioStorm, "paged", "duplicate top-level messages", list(func(r stormRun) string { return fmt.Sprint(r.dups) }), "0", dups == 0)
	report(t, scenarioStorm, "paged", "groups whose first message was edited to RESOLVED", list(func(r stormRun) string { return fmt.Sprintf("%d/%d", r.edited, r.groups) }), "all", edited)
	report(t, scenarioStorm, "paged", "after the restart: ts from the journal / found in the history / posted anew",
		list(func(r stormRun) string { return fmt.Sprintf("%d / %d / %d", r.journal, r.found, r.new) }), "")
	report(t, scenarioStorm, "paged", "conversations.history calls", list(func(r stormRun) string { return fmt.Sprint(r.history) }), "")
}

// slackStormPaged runs the storm once against paged.
func slackStormPaged(t *testing.T, run int) (stormRun, bool) {
	t.Helper()
	var r stormRun
	x := stormExporter(t)
	prom := startPrometheus(t, prometheusConfig(x, ""))
	s := newSlack(t)
	late := answerLate(s, "chat.postMessage")
	notifier := fmt.Sprintf(`notifier:
  route:
    receiver: oncall
    group_by: [alertname, replica]
    group_wait: 1s
    group_interval: 1s
    repeat_interval: 1h
  receivers:
    - name: oncall
      slack_configs:
        - app_token: %s
          app_url: %s
          channel: '#alerts'
`, slackToken, s.appURL())
	p := newPaged(t, pagedConfigRules(t, prom.URL(), writeFile(t, "storm.rules.yaml", stormRule), time.Second, notifier, ""))
	p.waitReady(30 * time.Second)
	posted := func(c notifiertest.SlackCall) bool { return c.Method == "chat.postMessage" }
	if !waitFor(t, 60*time.Second, "the storm's first Slack post", func() bool { return len(stormPosts(s, posted)) > 0 }) {
		return r, false
	}
	// Within 1.5 s of the first post: most posts are stored and in
	// flight, some answered if stored more than a second before, some
	// not sent yet.
	time.Sleep(rand.N(1500 * time.Millisecond))
	p.kill()
	r.stored, r.inFlight = late.inFlight(time.Now())
	t.Logf("run %d: killed with %d posts stored, %d of them unanswered", run, r.stored, r.inFlight)
	for i := range stormOthers {
		s.PostOther(slackChannelID, fmt.Sprintf("another app's message %d", i))
	}
	before := len(p.out.String())
	p.start()
	p.waitReady(30 * time.Second)
	waitFor(t, 60*time.Second, "a message for every group", func() bool { return len(stormPosts(s, posted)) >= stormGroups })
	quietFor(s, 2*time.Second, 60*time.Second)

	stormSet(x, 0)
	waitFor(t, 60*time.Second, "every group's last message RESOLVED", func() bool {
		for _, posts := range stormPosts(s, posted) {
			if m, ok := s.Message(slackChannelID, posts[len(posts)-1].TS); !ok || !strings.Contains(string(m.Blocks), "RESOLVED") {
				return false
			}
		}
		return true
	})
	quietFor(s, 2*time.Second, 60*time.Second)

	by := stormPosts(s, posted)
	r.groups, r.dups = len(by), duplicates(by)
	shown := false
	for g, posts := range by {
		if m, ok := s.Message(slackChannelID, posts[0].TS); ok && strings.Contains(string(m.Blocks), "RESOLVED") && strings.Contains(string(m.Blocks), g) {
			r.edited++
		}
		if len(posts) > 1 && !shown {
			shown = true
			t.Logf("run %d: group %s has %d top-level messages: %s first, %s second", run, g, len(posts), posts[0].TS, posts[1].TS)
		}
	}
	for _, c := range s.Calls() {
		if c.Method == "conversations.history" {
			r.history++
		}
	}
	logs := p.out.String()[before:]
	r.journal = strings.Count(logs, "the slack message journal does: using it")
	r.found = strings.Count(logs, "found the message of an interrupted post")
	r.new = strings.Count(logs, "no message of an interrupted post found")
	if r.inFlight == 0 {
		report(t, scenarioStorm, "paged", fmt.Sprintf("run %d: posts in flight at the kill", run), 0, "> 0 (the kill came after every answer)", false)
	}
	if r.dups > 0 || r.edited != r.groups || r.groups != stormGroups {
		t.Logf("run %d: paged's output after the restart (last 6000 bytes):\n%s", run, tail(logs, 6000))
	}
	p.kill()
	return r, true
}

// amSlackConfig routes every alert to Slack through an incoming webhook
// (api_url), grouped by alertname and replica as paged's storm is, with
// the resolutions sent too. Alertmanager 0.25 puts a message's content in
// a legacy attachment: the title says firing or resolved.
func amSlackConfig(webhook string) string {
	return fmt.Sprintf(`route:
  receiver: slack
  group_by: [alertname, replica]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: slack
    slack_configs:
      - api_url: %s
        channel: '#alerts'
        send_resolved: true
        title: '{{ .Status }}'
        text: '{{ range .Alerts }}{{ .Annotations.summary }} {{ end }}'
`, webhook)
}

// TestPeerSlackStorm is the storm against Prometheus 2.42 evaluating the
// same rule and sending to Alertmanager 0.25, whose Slack receiver posts
// to the stand-in's incoming webhook; Alertmanager is killed the same way
// and started again on its --storage.path. Prometheus re-sends firing
// alerts every 2 s (--rules.alert.resend-delay, as in the kill -9
// scenario), so that the figures are about Alertmanager's state, not
// Prometheus's resend delay (1 m by default).
func TestPeerSlackStorm(t *testing.T) {
	t.Parallel()
	sys := promAM(t)
	x := stormExporter(t)
	s := newSlack(t)
	late := answerLate(s, "webhook")
	am := newAlertmanager(t, amSlackConfig(s.srv.URL+"/services/T0000/B0000/reliability"), "")
	am.start()
	rules := writeFile(t, "storm.rules.yaml", stormRule)
	startPrometheus(t, prometheusConfig(x, alerting(rules, am.addr)), "--rules.alert.resend-delay=2s")
	status := func(want string) func(notifiertest.SlackCall) bool {
		return func(c notifiertest.SlackCall) bool {
			return c.Method == "webhook" && len(c.Attachments) > 0 && c.Attachments[0].Title == want
		}
	}
	firing, resolved := status("firing"), status("resolved")
	if !waitFor(t, 60*time.Second, "the storm's first Slack post", func() bool { return len(stormPosts(s, firing)) > 0 }) {
		return
	}
	time.Sleep(rand.N(1500 * time.Millisecond))
	am.kill()
	stored, flying := late.inFlight(time.Now())
	atKill := len(stormPosts(s, firing))
	am.start()
	waitFor(t, 60*time.Second, "a message for every group", func() bool { return len(stormPosts(s, firing)) >= stormGroups })
	quietFor(s, 3*time.Second, 60*time.Second)

	stormSet(x, 0)
	allResolved := poll(60*time.Second, func() bool { return len(stormPosts(s, resolved)) >= stormGroups })
	quietFor(s, 2*time.Second, 60*time.Second)

	by := stormPosts(s, firing)
	twice := 0
	for _, posts := range by {
		if len(posts) > 1 {
			twice++
		}
	}
	res := stormPosts(s, resolved)
	report(t, scenarioStorm, sys, "posts stored / unanswered at the kill", fmt.Sprintf("%d / %d (groups posted: %d)", stored, flying, atKill), "")
	report(t, scenarioStorm, sys, "groups with a message", len(by), "")
	report(t, scenarioStorm, sys, "duplicate top-level messages", fmt.Sprintf("%d (%d groups posted twice or more)", duplicates(by), twice), "")
	report(t, scenarioStorm, sys, "groups whose first message was edited to RESOLVED",
		fmt.Sprintf("0/%d: an incoming webhook cannot edit; %d groups got a separate RESOLVED message%s", len(by), len(res), map[bool]string{true: "", false: " (not all within 60 s)"}[allResolved]), "")
}
