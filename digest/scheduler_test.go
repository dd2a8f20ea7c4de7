package digest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/notifier/notifiertest"
)

// The tests run in testing/synctest's bubble, whose clock starts on
// Saturday 1 January 2000, 00:00 UTC: in Paris (the report's time zone)
// the first Monday 09:00 is 08:00 UTC on 3 January.
var firstDue = time.Date(2000, 1, 3, 8, 0, 0, 0, time.UTC)

// rig is a real notifier (its Slack the stand-in, served in-process), a
// real history and the configuration of a digest to receiver team.
type rig struct {
	t     *testing.T
	dir   string
	slack *notifiertest.Slack
	n     *notifier.Notifier
	store *history.Store
	cfg   atomic.Pointer[config.Config]
	s     *Scheduler           // the running scheduler
	reg   *prometheus.Registry // its metrics
	rep   *durable.Reporter
	stop  func()
}

func (r *rig) config(digest string) *config.Config {
	r.t.Helper()
	testbin.WriteFile(r.t, r.dir, "empty.rules.yaml", "groups: []\n")
	text := fmt.Sprintf(`global: {external_url: "https://paged.example/base/"}
datasource: {prometheus: {url: "http://127.0.0.1:9090"}}
rule_files: [empty.rules.yaml]
storage: {path: %q, history: {enabled: true}}
notifier:
  route: {receiver: team}
  receivers:
    - name: team
      slack_configs: [{app_token: xoxb-digest, app_url: %q, channel: "#paging"}]
report:
  time_zone: Europe/Paris
%s`, filepath.Join(r.dir, "data"), r.slack.APIURL(), digest)
	cfg, err := config.Parse([]byte(text), filepath.Join(r.dir, "paged.yaml"), func(string) string { return "" })
	if err != nil {
		r.t.Fatal(err)
	}
	return cfg
}

const weekly = "  digest: {receiver: team}\n"

// newRig builds the rig inside the bubble; everything it starts stops
// at the test's end.
func newRig(t *testing.T) *rig {
	r := &rig{t: t, dir: t.TempDir(), slack: notifiertest.NewSlackHandler("xoxb-digest")}
	cfg := r.config(weekly)
	r.cfg.Store(cfg)
	if err := os.MkdirAll(cfg.Storage.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	// Committed by Flush; a tick an hour keeps the weeks the tests sleep
	// through cheap.
	r.store, err = history.Open(history.Options{Path: filepath.Join(cfg.Storage.Path, history.FileName), BatchInterval: time.Hour, PruneInterval: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r.n, err = notifier.New(notifier.Options{Config: cfg.NotifierConfig, Transport: notifiertest.InProcess(r.slack), ExternalURL: "https://paged.example/base/"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.n.Run(ctx) }()
	t.Cleanup(func() {
		r.halt()
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		r.store.Close()
	})
	return r
}

// start runs a scheduler, as a paged starting does; halt stops it.
func (r *rig) start() {
	r.t.Helper()
	r.halt()
	r.reg = prometheus.NewRegistry()
	r.rep = durable.NewReporter(r.cfg.Load().Storage.Path, nil, r.reg)
	s, err := New(Options{Config: r.cfg.Load, Send: r.n.SendDigest, History: r.store, StoragePath: r.cfg.Load().Storage.Path, Reporter: r.rep, Registerer: r.reg})
	if err != nil {
		r.t.Fatal(err)
	}
	r.s = s
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	r.stop = func() {
		cancel()
		if err := <-done; err != nil {
			r.t.Error(err)
		}
	}
	synctest.Wait()
}

func (r *rig) halt() {
	if r.stop != nil {
		r.stop()
		r.stop = nil
	}
}

// sleepUntil moves the bubble's clock to t and lets everything due run.
func sleepUntil(t time.Time) {
	time.Sleep(time.Until(t))
	synctest.Wait()
}

func (r *rig) metric(name string, labels ...string) float64 {
	r.t.Helper()
	v, err := testbin.GatherSum(r.reg, name, labels...)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

// sentDigest is a digest message the Slack stand-in received.
type sentDigest struct {
	at     time.Time
	text   string
	fields map[string]string // title -> value
	noisy  string
	link   string
}

func (r *rig) digests() []sentDigest {
	r.t.Helper()
	var out []sentDigest
	for _, c := range r.slack.Calls() {
		if c.Method != "chat.postMessage" || !strings.HasPrefix(c.Text, "Paging digest") {
			continue
		}
		var blocks []struct {
			Type   string                 `json:"type"`
			Text   *struct{ Text string } `json:"text"`
			Fields []struct {
				Text string `json:"text"`
			} `json:"fields"`
			Elements []struct {
				URL string `json:"url"`
			} `json:"elements"`
		}
		if err := json.Unmarshal(c.Blocks, &blocks); err != nil {
			r.t.Fatalf("blocks %s: %v", c.Blocks, err)
		}
		d := sentDigest{at: c.At, text: c.Text, fields: map[string]string{}}
		for _, b := range blocks {
			for _, f := range b.Fields {
				title, value, _ := strings.Cut(f.Text, "\n")
				d.fields[strings.Trim(title, "*")] = value
			}
			if b.Type == "section" && b.Text != nil {
				d.noisy = b.Text.Text
			}
			if b.Type == "actions" && len(b.Elements) == 1 {
				d.link = b.Elements[0].URL
			}
		}
		out = append(out, d)
	}
	return out
}

// record puts pages in the history: Flappy paged three times (once
// outside working hours, at at: the bubble's Saturday), Steady once and
// acknowledged 4 minutes later, and one failed delivery.
func (r *rig) record(at time.Time) {
	r.t.Helper()
	notif := func(at time.Time, group, alertname, fp, outcome string) history.Event {
		return history.Event{Time: at, Type: history.TypeNotification, GroupKey: group, Receiver: "team", Integration: "slack", Outcome: outcome,
			Details: history.Details(map[string]any{"firing": 1, "resolved": 0, "alerts": []map[string]string{{"fingerprint": fp, "alertname": alertname, "status": "firing"}}})}
	}
	work := time.Date(1999, 12, 27, 9, 0, 0, 0, time.UTC) // Monday, 10:00 in Paris
	r.store.Record(
		notif(work, "g1", "Flappy", "f1", history.OutcomeSent),
		notif(work.Add(time.Hour), "g1", "Flappy", "f1", history.OutcomeSent),
		notif(at, "g1", "Flappy", "f1", history.OutcomeSent),
		notif(work.Add(2*time.Hour), "g2", "Steady", "s1", history.OutcomeSent),
		history.Event{Time: work.Add(2*time.Hour + 4*time.Minute), Type: history.TypeAck, GroupKey: "g2", Outcome: history.OutcomeAcknowledged, User: "ana"},
		notif(work.Add(3*time.Hour), "g3", "Broken", "b1", history.OutcomeFailed),
	)
	if err := r.store.Flush(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// At the scheduled time, and not before, one digest with the week's
// numbers and a link to its report; a week later the next, of the next
// week; a restart sends neither again.
func TestSchedulerSendsEachWeekOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		r.record(time.Now())
		r.start()
		if next := r.metric("paged_report_digest_next_timestamp_seconds"); next != float64(firstDue.Unix()) {
			t.Errorf("next digest at %v, want %v", time.Unix(int64(next), 0).UTC(), firstDue)
		}
		sleepUntil(firstDue.Add(-time.Second))
		if got := r.digests(); len(got) != 0 {
			t.Fatalf("%d digests a second before the scheduled time", len(got))
		}
		sleepUntil(firstDue.Add(time.Second))
		got := r.digests()
		if len(got) != 1 {
			t.Fatalf("%d digests at the scheduled time, want 1", len(got))
		}
		d := got[0]
		for title, want := range map[string]string{
			"Pages": "4", "Outside working hours": "1", "Time to acknowledge": "median 4m0s, p90 4m0s",
			"Never acknowledged": "3", "Flapping alerts": "0", "Delivery failures": "1",
		} {
			if d.fields[title] != want {
				t.Errorf("%s: %q, want %q", title, d.fields[title], want)
			}
		}
		if !strings.Contains(d.noisy, "• `Flappy`: 3 pages, 1 outside working hours, never acknowledged\n• `Steady`: 1 page") {
			t.Errorf("noisiest alerts:\n%s", d.noisy)
		}
		if want := "https://paged.example/base/report?from=1999-12-27T08%3A00%3A00Z&to=2000-01-03T08%3A00%3A00Z"; d.link != want {
			t.Errorf("link %s, want %s", d.link, want)
		}
		if !strings.Contains(d.text, "Mon 27 Dec 09:00 to Mon 3 Jan 2000 09:00 CET: 4 pages, 1 outside working hours") {
			t.Errorf("text %q", d.text)
		}
		if r.metric("paged_report_digests_total", "outcome", "sent") != 1 || r.metric("paged_report_digest_last_timestamp_seconds") != float64(firstDue.Unix()) {
			t.Errorf("metrics: sent %v, last %v", r.metric("paged_report_digests_total", "outcome", "sent"), r.metric("paged_report_digest_last_timestamp_seconds"))
		}

		// A restart in the same week: nothing.
		sleepUntil(firstDue.Add(time.Hour))
		r.start()
		sleepUntil(firstDue.Add(2 * time.Hour))
		if n := len(r.digests()); n != 1 || r.metric("paged_report_digests_total") != 0 {
			t.Errorf("after a restart: %d digests, %v counted, want the one", n, r.metric("paged_report_digests_total"))
		}
		// The week after: the next, of the week after.
		sleepUntil(firstDue.Add(7*24*time.Hour + time.Second))
		got = r.digests()
		if len(got) != 2 || got[1].link != "https://paged.example/base/report?from=2000-01-03T08%3A00%3A00Z&to=2000-01-10T08%3A00%3A00Z" {
			t.Fatalf("the week after: %d digests (%+v)", len(got), got)
		}
		if got[1].fields["Pages"] != "0" || !strings.Contains(got[1].noisy, "None paged.") {
			t.Errorf("the second week had no page: %+v", got[1])
		}
	})
}

// A paged down at the scheduled time sends that digest when it starts,
// once; down for two, it sends the last one only.
func TestSchedulerCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		r.start() // digest.json: since now
		r.halt()
		sleepUntil(firstDue.Add(26 * time.Hour))
		r.start()
		got := r.digests()
		if len(got) != 1 || !got[0].at.Equal(firstDue.Add(26*time.Hour)) || !strings.Contains(got[0].link, "to=2000-01-03T08%3A00%3A00Z") {
			t.Fatalf("on start after the scheduled time: %+v, want the missed digest at once", got)
		}
		r.halt()
		sleepUntil(firstDue.Add(15 * 24 * time.Hour))
		r.start()
		got = r.digests()
		if len(got) != 2 || !strings.Contains(got[1].link, "to=2000-01-17T08%3A00%3A00Z") {
			t.Fatalf("down for two weeks: %+v, want the last week's digest only", got)
		}
	})
}

// A paged that starts with a digest for the first time after its
// scheduled time does not send a digest of a week it did not watch.
func TestSchedulerFirstStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		r.cfg.Store(r.config("")) // no digest yet
		sleepUntil(firstDue.Add(time.Hour))
		r.start()
		if next := r.metric("paged_report_digest_next_timestamp_seconds"); next != 0 {
			t.Errorf("next digest %v without report.digest", next)
		}
		// A reload adds it: the next is next week's.
		sleepUntil(firstDue.Add(2 * time.Hour))
		startedAt := time.Now()
		r.cfg.Store(r.config(weekly))
		r.s.Wake()
		synctest.Wait()
		if next := r.metric("paged_report_digest_next_timestamp_seconds"); next != float64(firstDue.Add(7*24*time.Hour).Unix()) {
			t.Errorf("next digest %v, want next week's", time.Unix(int64(next), 0).UTC())
		}
		sleepUntil(firstDue.Add(7*24*time.Hour + time.Second))
		got := r.digests()
		if len(got) != 1 || got[0].at.Before(startedAt) {
			t.Errorf("digests %+v, want next week's only", got)
		}
	})
}

// A digest that fails is tried again until it is delivered, and never
// twice to an integration that had it.
func TestSchedulerRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		r.start()
		r.slack.Script(notifiertest.SlackReply{Method: "chat.postMessage", Status: 503}, notifiertest.SlackReply{Method: "chat.postMessage", Status: 503})
		sleepUntil(firstDue.Add(time.Second))
		if r.metric("paged_report_digests_total", "outcome", "failed") != 1 || len(r.digests()) != 1 {
			t.Fatalf("failed %v, calls %d", r.metric("paged_report_digests_total", "outcome", "failed"), len(r.digests()))
		}
		sleepUntil(firstDue.Add(time.Minute + 2*time.Second))
		if r.metric("paged_report_digests_total", "outcome", "failed") != 2 {
			t.Fatalf("a minute later: failed %v, want the retry counted", r.metric("paged_report_digests_total", "outcome", "failed"))
		}
		// Then two minutes later, delivered; and nothing after.
		sleepUntil(firstDue.Add(4 * time.Minute))
		if r.metric("paged_report_digests_total", "outcome", "sent") != 1 {
			t.Fatalf("sent %v after the retries", r.metric("paged_report_digests_total", "outcome", "sent"))
		}
		sleepUntil(firstDue.Add(6 * 24 * time.Hour))
		delivered := 0
		for _, c := range r.slack.Calls() {
			if c.Status == 200 {
				delivered++
			}
		}
		if delivered != 1 {
			t.Errorf("%d digests delivered, want 1", delivered)
		}
	})
}

// A paged killed after the notifier recorded the delivery and before
// digest.json says so finds the delivery in the notification log: it
// does not send it again.
func TestSchedulerCrashBeforeTheStateFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		r.start()
		path := filepath.Join(r.cfg.Load().Storage.Path, StateFile)
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sleepUntil(firstDue.Add(time.Second))
		r.halt()
		if len(r.digests()) != 1 {
			t.Fatalf("%d digests", len(r.digests()))
		}
		if err := os.WriteFile(path, before, 0o644); err != nil { // as if the replace never happened
			t.Fatal(err)
		}
		r.start()
		if n := len(r.digests()); n != 1 || r.metric("paged_report_digests_total", "outcome", "already_sent") != 1 {
			t.Errorf("after the restart: %d digests, already_sent %v; want the one, found in the notification log", n, r.metric("paged_report_digests_total", "outcome", "already_sent"))
		}
		after, _ := os.ReadFile(path)
		var st state
		if err := json.Unmarshal(after, &st); err != nil || !st.Last.Equal(firstDue) {
			t.Errorf("digest.json %s (%v), want last %s", after, err, firstDue)
		}
	})
}

// A damaged digest.json is moved aside and reported; paged goes on as if
// the digest were new, and sends no digest of a week it cannot vouch for.
func TestSchedulerDamagedState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		path := filepath.Join(r.cfg.Load().Storage.Path, StateFile)
		testbin.WriteFile(t, filepath.Dir(path), StateFile, "{\"since\": \"yesterday\"")
		sleepUntil(firstDue.Add(time.Hour))
		r.start()
		if v := r.metric("paged_state_corruptions_total", "file", StateFile); v != 1 {
			t.Errorf("paged_state_corruptions_total{file=%q} = %v", StateFile, v)
		}
		if moved := r.rep.MovedAside(time.Time{}); len(moved) != 1 || moved[0].File != StateFile {
			t.Errorf("moved aside: %+v", moved)
		}
		if n := len(r.digests()); n != 0 {
			t.Errorf("%d digests sent on a damaged state", n)
		}
		sleepUntil(firstDue.Add(7*24*time.Hour + time.Second))
		if n := len(r.digests()); n != 1 {
			t.Errorf("%d digests the week after, want 1", n)
		}
	})
}

// Without a history there is nothing to count: the digest fails and
// says why.
func TestSchedulerWithoutHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		reg := prometheus.NewRegistry()
		logs := &testbin.SyncBuffer{}
		s, err := New(Options{Config: r.cfg.Load, Send: r.n.SendDigest, Registerer: reg, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		sleepUntil(firstDue.Add(time.Second))
		cancel()
		<-done
		if v, _ := testbin.GatherSum(reg, "paged_report_digests_total", "outcome", "failed"); v != 1 || len(r.digests()) != 0 {
			t.Errorf("failed %v, %d digests", v, len(r.digests()))
		}
		if !strings.Contains(logs.String(), "there is no event history") {
			t.Errorf("log:\n%s", logs)
		}
	})
}
