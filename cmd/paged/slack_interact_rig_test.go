package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
)

// The Slack workspace the interactivity tests play: a bot that posts to
// #alerts, the app's app-level token (Socket Mode) and signing secret
// (HTTP mode), and the people who press the buttons.
const (
	interactBotToken = "xoxb-interact-test"
	interactAppToken = "xapp-1-A0PAGED-1-interact-test"
	interactSecret   = "8f742231b10e8888abcd99e2e0interact"
	interactChannel  = "CALERTS" // the stand-in's id of #alerts

	userAna     = "U0ANA"
	userBob     = "U0BOB"
	userCarol   = "U0CAROL" // allowed through the user group only
	userEve     = "U0EVE"   // in no allowed list
	oncallGroup = "S0ONCALL"

	kvAlert = "KVCacheSaturated"
)

// kvCache is an exporter of kv_cache_usage{replica=…}, one series per
// replica the test has set.
type kvCache struct {
	mu sync.Mutex
	v  map[string]float64
}

func (k *kvCache) set(replica string, v float64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.v == nil {
		k.v = map[string]float64{}
	}
	k.v[replica] = v
}

func (k *kvCache) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprint(w, "# TYPE kv_cache_usage gauge\n")
	for _, r := range slices.Sorted(maps.Keys(k.v)) {
		fmt.Fprintf(w, "kv_cache_usage{replica=%q} %g\n", r, k.v[r])
	}
}

const kvRules = `groups:
  - name: vllm
    rules:
      - alert: KVCacheSaturated
        expr: kv_cache_usage > 0.9
        labels: {severity: critical}
        annotations:
          summary: 'KV cache on {{ $labels.replica }} is {{ $value }} full'
`

// interactOptions shape a rig.
type interactOptions struct {
	mode    string // socket or http
	members int    // 1, or 2 for an HA pair
	repeat  string // repeat_interval
	// allowed is added to slack_interactivity (allowed_users, …),
	// indented as its keys.
	allowed string
}

// interactRig is real `paged run` processes (one, or an HA pair) with
// slack_interactivity, evaluating KVCacheSaturated every second against
// Debian's Prometheus, which scrapes kv; their Slack is the stand-in.
type interactRig struct {
	t      *testing.T
	opts   interactOptions
	bin    string
	amtool string
	slack  *notifiertest.Slack
	kv     *kvCache
	dir    string
	m      []*member
}

// member is one paged of the rig: its configuration, web address and,
// while it runs, its process.
type member struct {
	name   string
	config string
	web    string // http://host:port
	p      *pagedProc
}

func newInteractRig(t *testing.T, o interactOptions) *interactRig {
	t.Helper()
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	if o.members == 0 {
		o.members = 1
	}
	r := &interactRig{t: t, opts: o, bin: bin, amtool: testbin.Require(t, "amtool"), kv: &kvCache{}, dir: t.TempDir()}
	r.kv.set("vllm-0", 0.97)
	prom := scrapedBy(t, r.kv)
	r.slack = notifiertest.NewSlack(t, interactBotToken)
	r.slack.SetAppToken(interactAppToken)
	for id, name := range map[string]string{userAna: "ana", userBob: "bob", userCarol: "carol", userEve: "eve"} {
		r.slack.SetUser(id, name)
	}
	r.slack.SetUserGroup(oncallGroup, userCarol)

	secrets := map[string]string{"xapp": interactAppToken, "signing": interactSecret}
	for name, v := range secrets {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rules := filepath.Join(r.dir, "kv.rules.yaml")
	if err := os.WriteFile(rules, []byte(kvRules), 0o644); err != nil {
		t.Fatal(err)
	}
	gossip := []string{testbin.FreeAddr(t), testbin.FreeAddr(t)}
	for i := range o.members {
		m := &member{name: fmt.Sprint("paged-", i), web: testbin.FreeAddr(t)}
		cluster := ""
		if o.members > 1 {
			cluster = fmt.Sprintf(`cluster:
  listen_address: %s
  peers: [%q]
  peer_timeout: 2s
  gossip_interval: 100ms
  pushpull_interval: 1s
`, gossip[i], gossip[1-i])
		}
		interact := fmt.Sprintf("    signing_secret_file: %q\n", filepath.Join(r.dir, "signing"))
		if o.mode == "socket" {
			interact = fmt.Sprintf("    app_level_token_file: %q\n    app_url: %s\n", filepath.Join(r.dir, "xapp"), r.slack.APIURL())
		}
		conf := fmt.Sprintf(`global:
  evaluation_interval: 1s
datasource:
  type: prometheus
  prometheus:
    url: %s
    timeout: 2s
rule_files: [%q]
storage:
  path: %q
web:
  listen_address: %s
%snotifier:
  route:
    receiver: oncall
    group_by: [alertname]
    group_wait: 1s
    group_interval: 1s
    repeat_interval: %s
  receivers:
    - name: oncall
      slack_configs:
        - app_token: %s
          app_url: %s
          channel: '#alerts'
  slack_interactivity:
    mode: %s
%s%s`, prom.URL, rules, filepath.Join(r.dir, m.name), m.web, cluster, o.repeat,
			interactBotToken, r.slack.APIURL(), o.mode, interact, o.allowed)
		m.config = filepath.Join(r.dir, m.name+".yaml")
		if err := os.WriteFile(m.config, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		m.web = "http://" + m.web
		r.m = append(r.m, m)
	}
	for _, m := range r.m {
		r.start(m)
	}
	for _, m := range r.m {
		r.waitReady(m)
	}
	return r
}

// start starts m's process, without waiting for it.
func (r *interactRig) start(m *member) {
	r.t.Helper()
	m.p = startPaged(r.t, r.bin, m.config, strings.TrimPrefix(m.web, "http://"))
}

// waitReady waits until m answers ready and, in Socket Mode, has its
// connection open (and no connection of a killed process is left).
func (r *interactRig) waitReady(m *member) {
	r.t.Helper()
	r.waitFor(60*time.Second, m.name+" ready", m.p.ready)
	if r.opts.mode != "socket" {
		return
	}
	r.waitFor(60*time.Second, m.name+" connected over Socket Mode", func() bool {
		return strings.Contains(m.p.out.String(), `msg="slack socket mode connected"`) && r.slack.Connections() == r.alive()
	})
}

func (r *interactRig) alive() int {
	n := 0
	for _, m := range r.m {
		if m.p != nil {
			n++
		}
	}
	return n
}

// kill9 kills m with SIGKILL.
func (r *interactRig) kill9(m *member) {
	r.t.Helper()
	m.p.kill9(r.t)
	m.p = nil
}

// restart starts m again on the same storage path and waits until it
// is ready.
func (r *interactRig) restart(m *member) {
	r.t.Helper()
	r.start(m)
	r.waitReady(m)
}

// waitFor polls cond until it holds; after d (a bail-out for a broken
// test, not a timing assertion) it fails with the processes' output and
// the Slack calls.
func (r *interactRig) waitFor(d time.Duration, what string, cond func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.dump()
			r.t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}

// dump logs the processes' output and the Slack calls, for a failure.
func (r *interactRig) dump() {
	for _, m := range r.m {
		if m.p != nil {
			r.t.Logf("%s output (tail):\n%s", m.name, tail(m.p.out.String(), 60))
			for _, name := range []string{"paged_notifier_group_flushes_total", "alertmanager_notifications_total", "alertmanager_notifications_failed_total", "paged_slack_repeats_held_total", "paged_slack_actions_total"} {
				v, _ := testbin.MetricSum(m.web, name)
				r.t.Logf("%s %s %v", m.name, name, v)
			}
		}
	}
	for _, c := range r.slack.Calls() {
		var status []string
		if c.Blocks != nil {
			status = parseShown(r.t, c.Blocks).status
		}
		r.t.Logf("slack: %s %s ts=%s thread=%s user=%s err=%s text=%.80q status=%q", c.At.Format("15:04:05.000"), c.Method, c.TS, c.ThreadTS, c.User, c.Error, c.Text, status)
	}
}

// group is the group's message: the first top-level post, waited for.
func (r *interactRig) group() notifiertest.SlackCall {
	r.t.Helper()
	r.waitFor(60*time.Second, "the group's Slack message", func() bool { return len(topLevel(r.slack.Calls())) > 0 })
	return topLevel(r.slack.Calls())[0]
}

// shown is what a message shows of the actions: the lines of its
// paged.status block and the action_ids of its paged.actions block.
type shown struct {
	status  []string
	buttons []string
	blocks  string // the blocks as JSON, for RESOLVED and the like
}

func (s shown) says(sub string) bool {
	return slices.ContainsFunc(s.status, func(l string) bool { return strings.Contains(l, sub) })
}

func (s shown) has(action string) bool { return slices.Contains(s.buttons, action) }

func (s shown) String() string {
	return fmt.Sprintf("status %q, buttons %v", s.status, s.buttons)
}

func parseShown(t *testing.T, raw json.RawMessage) shown {
	t.Helper()
	var blocks []struct {
		Type     string `json:"type"`
		BlockID  string `json:"block_id"`
		Elements []struct {
			Type     string `json:"type"`
			Text     any    `json:"text"`
			ActionID string `json:"action_id"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatalf("message blocks: %v\n%s", err, raw)
	}
	s := shown{blocks: string(raw)}
	for _, b := range blocks {
		for _, e := range b.Elements {
			switch b.BlockID {
			case "paged.status":
				if text, ok := e.Text.(string); ok {
					s.status = append(s.status, text)
				}
			case "paged.actions":
				s.buttons = append(s.buttons, e.ActionID)
			}
		}
	}
	return s
}

// message is what the group's message shows now.
func (r *interactRig) message() shown {
	r.t.Helper()
	ts := r.group().TS
	m, ok := r.slack.Message(interactChannel, ts)
	if !ok {
		r.t.Fatalf("the stand-in holds no message %s", ts)
	}
	return parseShown(r.t, m.Blocks)
}

// waitMessage waits until the group's message satisfies cond.
func (r *interactRig) waitMessage(what string, cond func(shown) bool) shown {
	r.t.Helper()
	var last shown
	r.waitFor(60*time.Second, "the message to show "+what, func() bool {
		last = r.message()
		return cond(last)
	})
	return last
}

// press clicks action on the group's message as user, as Slack delivers
// it: over Socket Mode to whichever member holds the newest connection,
// or signed to m's /slack/interactions (nil: the first member running).
// It returns once the envelope is acknowledged or the request answered
// 200: the moment paged says it is done. The button must be on the
// message.
func (r *interactRig) press(m *member, action, user string) {
	r.t.Helper()
	if s := r.message(); !s.has(action) {
		r.t.Fatalf("no %s button on the message: %v", action, s)
	}
	p := r.payload(action, user)
	r.deliver(m, p)
}

// payload is the block_actions payload of a click on action of the
// group's message, as it is now.
func (r *interactRig) payload(action, user string) []byte {
	return r.slack.BlockActionPayload(notifiertest.BlockAction{ActionID: action, UserID: user, ChannelID: interactChannel, MessageTS: r.group().TS})
}

// deliver sends a payload as Slack would once, and waits for paged's
// answer (the envelope's acknowledgement, a 200); it returns the
// envelope_id in Socket Mode.
func (r *interactRig) deliver(m *member, payload []byte) string {
	r.t.Helper()
	if r.opts.mode == "socket" {
		id, err := r.slack.SendInteractive(payload)
		if err != nil {
			r.t.Fatal(err)
		}
		if !r.slack.WaitAcked(id, 30*time.Second) {
			r.dump()
			r.t.Fatalf("envelope %s never acknowledged", id)
		}
		return id
	}
	body, hdr := notifiertest.SignedInteraction(interactSecret, payload, time.Now())
	if code, text := r.postInteraction(m, body, hdr); code != http.StatusOK {
		r.t.Fatalf("POST /slack/interactions: %d %s", code, text)
	}
	return ""
}

// postInteraction posts a request to m's /slack/interactions (nil: the
// first member running).
func (r *interactRig) postInteraction(m *member, body string, hdr http.Header) (int, string) {
	r.t.Helper()
	if m == nil {
		m = r.running()
	}
	req, err := http.NewRequest(http.MethodPost, m.web+"/slack/interactions", strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header = hdr
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		r.t.Fatalf("POST /slack/interactions: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func (r *interactRig) running() *member {
	for _, m := range r.m {
		if m.p != nil {
			return m
		}
	}
	r.t.Fatal("no member is running")
	return nil
}

// since returns the calls of method on the group's message after the
// first n calls: for chat.postMessage the replies in its thread, for
// chat.update the edits of it; failed calls left out.
func (r *interactRig) since(n int, method string) []notifiertest.SlackCall {
	ts := r.group().TS
	var out []notifiertest.SlackCall
	for _, c := range r.slack.Calls()[n:] {
		if c.Method != method || c.Error != "" {
			continue
		}
		switch method {
		case "chat.postMessage":
			if c.ThreadTS != ts {
				continue
			}
		case "chat.update":
			if c.TS != ts {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// metric sums a metric of m's /metrics; it fails the test when m does
// not answer.
func (r *interactRig) metric(m *member, name string) float64 {
	r.t.Helper()
	v, err := testbin.MetricSum(m.web, name)
	if err != nil {
		r.t.Fatalf("%s: %v", m.name, err)
	}
	return v
}

// metricWith reads one sample of m's /metrics, by its labels as
// exposed (`action="paged.ack",outcome="applied"`); 0 when absent.
func (r *interactRig) metricWith(m *member, name, labels string) float64 {
	r.t.Helper()
	resp, err := http.Get(m.web + "/metrics")
	if err != nil {
		r.t.Fatalf("%s: %v", m.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name+"{"+labels+"} "); ok {
			var v float64
			fmt.Sscan(rest, &v)
			return v
		}
	}
	return 0
}

// actionCount is paged_slack_actions_total of one action on m, every
// outcome.
func (r *interactRig) actionCount(m *member, action string) float64 {
	r.t.Helper()
	sum := 0.0
	for _, outcome := range []string{"applied", "unchanged", "duplicate", "refused", "invalid", "failed"} {
		sum += r.metricWith(m, "paged_slack_actions_total", `action="`+action+`",outcome="`+outcome+`"`)
	}
	return sum
}

// apiSilence is a silence of /api/v2/silences and of amtool's JSON.
type apiSilence struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Matchers []struct {
		Name    string `json:"name"`
		Value   string `json:"value"`
		IsRegex bool   `json:"isRegex"`
	} `json:"matchers"`
	StartsAt  time.Time `json:"startsAt"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
}

func (s apiSilence) String() string {
	return fmt.Sprintf("%s %s by %q %s..%s %q", s.ID, s.Status.State, s.CreatedBy, s.StartsAt.Format(time.TimeOnly), s.EndsAt.Format(time.TimeOnly), s.Comment)
}

// getJSON decodes GET m.web+path into v.
func (r *interactRig) getJSON(m *member, path string, v any) {
	r.t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(m.web + path)
	if err != nil {
		r.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("GET %s: %s %s", path, resp.Status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		r.t.Fatalf("GET %s: %v\n%s", path, err, b)
	}
}

// silences is /api/v2/silences on m, by state.
func (r *interactRig) silences(m *member, state string) []apiSilence {
	r.t.Helper()
	var all []apiSilence
	r.getJSON(m, "/api/v2/silences", &all)
	var out []apiSilence
	for _, s := range all {
		if s.Status.State == state {
			out = append(out, s)
		}
	}
	return out
}

// amtoolSilences is `amtool silence query -o json` against m (with
// --expired: the expired ones).
func (r *interactRig) amtoolSilences(m *member, expired bool) []apiSilence {
	r.t.Helper()
	args := []string{"silence", "query", "-o", "json", "--alertmanager.url=" + m.web}
	if expired {
		args = append(args, "--expired")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.amtool, args...)
	cmd.Env = []string{"HOME=" + r.dir, "PATH=/usr/bin:/bin"}
	var stderr strings.Builder
	cmd.Stderr = &stderr // amtool 0.25 warns that paged reports no Alertmanager version
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("amtool %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	var sils []apiSilence
	if err := json.Unmarshal(out, &sils); err != nil {
		r.t.Fatalf("amtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return sils
}

// groupAlert is an alert of /api/v2/alerts/groups.
type groupAlert struct {
	Labels map[string]string `json:"labels"`
	Status struct {
		State      string   `json:"state"`
		SilencedBy []string `json:"silencedBy"`
	} `json:"status"`
}

// groupAlerts is the KVCacheSaturated alerts of /api/v2/alerts/groups on
// m.
func (r *interactRig) groupAlerts(m *member) []groupAlert {
	r.t.Helper()
	var groups []struct {
		Labels map[string]string `json:"labels"`
		Alerts []groupAlert      `json:"alerts"`
	}
	r.getJSON(m, "/api/v2/alerts/groups", &groups)
	var out []groupAlert
	for _, g := range groups {
		if g.Labels["alertname"] == kvAlert {
			out = append(out, g.Alerts...)
		}
	}
	return out
}

// uiView is what paged's overview page (GET /) shows: the state of each
// KVCacheSaturated alert and who acknowledged its group, and the active
// silences (created by, comment).
type uiView struct {
	states   []string
	acked    []string   // the rows' "👀 acknowledged by …" lines
	silences [][]string // cells: state, matchers, ends, created by, comment, id
}

func (r *interactRig) ui(m *member) uiView {
	r.t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(m.web + "/")
	if err != nil {
		r.t.Fatalf("GET /: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	doc := testbin.ParseHTML(r.t, string(b))
	var v uiView
	for _, tr := range testbin.FindAll(doc, func(n *html.Node) bool {
		return n.Data == "tr" && testbin.HasClass(n, "alert") && testbin.Attr(n, "data-alertname") == kvAlert
	}) {
		v.states = append(v.states, testbin.Attr(tr, "data-state"))
		for _, div := range testbin.FindAll(tr, func(n *html.Node) bool { return testbin.HasClass(n, "acked") }) {
			v.acked = append(v.acked, testbin.Text(div))
		}
	}
	for _, tr := range testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "silence-row") }) {
		var cells []string
		for _, td := range testbin.FindAll(tr, func(n *html.Node) bool { return n.Data == "td" }) {
			cells = append(cells, testbin.Text(td))
		}
		v.silences = append(v.silences, cells)
	}
	return v
}

// acknowledgements is GET /api/v1/acknowledgements on m: who
// acknowledged which group, "userName (userId)", by group key.
func (r *interactRig) acknowledgements(m *member) map[string]string {
	r.t.Helper()
	var body struct {
		Data struct {
			Acknowledgements []struct {
				GroupKey string `json:"groupKey"`
				UserID   string `json:"userId"`
				UserName string `json:"userName"`
			} `json:"acknowledgements"`
		} `json:"data"`
	}
	r.getJSON(m, "/api/v1/acknowledgements", &body)
	out := map[string]string{}
	for _, a := range body.Data.Acknowledgements {
		out[a.GroupKey] = a.UserName + " (" + a.UserID + ")"
	}
	return out
}

// logged counts the log lines of m's current process that have every
// one of the given parts.
func logged(m *member, parts ...string) int {
	if m.p == nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(m.p.out.String(), "\n") {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			n++
		}
	}
	return n
}
