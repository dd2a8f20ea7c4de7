package notifier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

func slackBotConfigChannel(s *notifiertest.Slack, channel, extra string) string {
	return fmt.Sprintf(tinyRoute, "oncall") + fmt.Sprintf(`
receivers:
  - name: oncall
    slack_configs:
      - app_token: %s
        app_url: %s
        channel: %q
%s`, testToken, s.APIURL(), channel, extra)
}

func findCall(calls []notifiertest.SlackCall, match func(c notifiertest.SlackCall) bool) (notifiertest.SlackCall, bool) {
	for _, c := range calls {
		if match(c) {
			return c, true
		}
	}
	return notifiertest.SlackCall{}, false
}

func successes(n *running) float64 {
	return testutil.ToFloat64(n.metrics.notifications.WithLabelValues("oncall", "slack", outcomeSuccess))
}

// paged is killed while Slack accepts a group's message, before the
// answer arrives: the journal holds the intent, Slack the message with
// the intent in its metadata. The paged started next finds that message
// in the channel's history and edits it; no second top-level message.
func TestSlackKilledDuringPostAdoptsMessage(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	dir := t.TempDir()
	conf := slackBotConfig(s, "")
	n1 := start(t, conf, Options{StoragePath: dir})
	// An earlier group teaches the journal the ID of "#alerts":
	// conversations.history takes IDs only.
	n1.Notify(context.Background(), []*rules.Alert{firing("Earlier")})
	s.WaitCalls(t, 1, 10*time.Second)
	waitFor(t, func() bool { return n1.journal.channelID("#alerts") == "CALERTS" })

	release := s.HoldNext("chat.postMessage")
	t.Cleanup(release) // before the stand-in closes, which waits for its requests
	a := firing("KVCacheSaturated", "severity", "critical")
	n1.Notify(context.Background(), []*rules.Alert{a})
	held := s.WaitCalls(t, 2, 10*time.Second)[1]
	gkey := `{}:{alertname="KVCacheSaturated"}`
	if held.Metadata == nil || held.Metadata.EventType != "paged_alert_group" ||
		held.Metadata.EventPayload["intent"] == "" || held.Metadata.EventPayload["group"] != groupHash(gkey) {
		t.Fatalf("posted metadata = %+v, want event paged_alert_group with an intent and the group's hash", held.Metadata)
	}

	// n1 never hears back, as if killed; a new paged on its storage.
	n2 := start(t, conf, Options{StoragePath: dir})
	n2.Notify(context.Background(), []*rules.Alert{a})
	calls := s.WaitCalls(t, 5, 10*time.Second)
	hist, ok := findCall(calls, func(c notifiertest.SlackCall) bool { return c.Method == "conversations.history" })
	if !ok || hist.Channel != "CALERTS" || hist.Form.Get("include_all_metadata") != "1" || hist.Error != "" {
		t.Fatalf("history lookup = %+v, want conversations.history of CALERTS with include_all_metadata", hist)
	}
	if upd, ok := findCall(calls, func(c notifiertest.SlackCall) bool { return c.Method == "chat.update" }); !ok || upd.TS != held.TS || upd.Channel != "CALERTS" {
		t.Fatalf("calls = %+v, want chat.update of the interrupted post %s", calls, held.TS)
	}

	n2.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	calls = s.WaitCalls(t, 7, 10*time.Second)
	if upd := calls[5]; upd.Method != "chat.update" || upd.TS != held.TS {
		t.Fatalf("resolution = %+v, want chat.update of %s", upd, held.TS)
	}
	if reply := calls[6]; reply.ThreadTS != held.TS {
		t.Errorf("resolution reply = %+v, want it in thread %s", reply, held.TS)
	}
	msg, _ := s.Message("CALERTS", held.TS)
	contains(t, "adopted message", string(msg.Blocks), "RESOLVED [critical] KVCacheSaturated")
	if n := topLevelPosts(s, "KVCacheSaturated"); n != 1 {
		t.Errorf("%d top-level messages for the group, want 1: %+v", n, s.Calls())
	}
	contains(t, "logs", n2.logs.String(), "found the message of an interrupted post")
}

// paged is killed during the first post to a channel configured by
// name, before Slack answered any post to it: the journal has no ID for
// "#alerts", and conversations.history takes IDs only. The paged started
// next finds the ID with conversations.list, through its pages (2,500
// other channels listed before it), looks the message up and edits it; the ID is
// journaled, so the start after that asks no more.
func TestSlackKilledDuringFirstPostToChannelName(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	others := make([]string, 2500)
	for i := range others {
		others[i] = fmt.Sprintf("a-team-%04d", i) // listed before "alerts"
	}
	s.AddChannels(others...)
	dir := t.TempDir()
	conf := slackBotConfigChannel(s, "#alerts", "")
	n1 := start(t, conf, Options{StoragePath: dir})
	release := s.HoldNext("chat.postMessage")
	t.Cleanup(release)
	a := firing("QueueBacklog")
	n1.Notify(context.Background(), []*rules.Alert{a})
	held := s.WaitCalls(t, 1, 10*time.Second)[0]
	if n1.journal.channelID("#alerts") != "#alerts" {
		t.Fatal("the journal knows the channel's ID before any post was answered")
	}

	n2 := start(t, conf, Options{StoragePath: dir})
	n2.Notify(context.Background(), []*rules.Alert{a})
	waitFor(t, func() bool { return successes(n2) == 1 })
	var lists int
	for _, c := range s.Calls() {
		if c.Method == "conversations.list" {
			lists++
		}
	}
	if lists != 3 {
		t.Errorf("%d conversations.list calls, want 3 pages of 1,000 for 2,501 channels", lists)
	}
	calls := s.Calls()
	if upd, ok := findCall(calls, func(c notifiertest.SlackCall) bool { return c.Method == "chat.update" }); !ok || upd.TS != held.TS || upd.Channel != "CALERTS" {
		t.Fatalf("calls = %+v, want chat.update of the interrupted post %s in CALERTS", calls, held.TS)
	}
	if n := topLevelPosts(s, "QueueBacklog"); n != 1 {
		t.Errorf("%d top-level messages for the group, want 1", n)
	}
	contains(t, "logs", n2.logs.String(), "found the ID of the configured channel", "found the message of an interrupted post")
	n2.stop()

	// The ID was journaled: the next start knows it.
	n3 := start(t, conf, Options{StoragePath: dir})
	if id := n3.journal.channelID("#alerts"); id != "CALERTS" {
		t.Errorf("after a restart the journal has %q for #alerts, want CALERTS", id)
	}
}

// paged is killed after Slack answered and the journal recorded the
// message, before the notification log entry was written: the next paged
// finds no entry, and the journal's message is edited (update_message) or
// followed up in its thread (update_message: false), never posted twice.
func TestSlackJournalWhenNotificationLogLost(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		update      bool
	}{
		{"edits", "", true},
		{"replies-in-thread", "        update_message: false", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := notifiertest.NewSlack(t, testToken)
			dir := t.TempDir()
			conf := slackBotConfig(s, tc.extra)
			fs := faults{}
			n1 := start(t, conf, Options{StoragePath: dir, wrapState: fs.wrap})
			fs["nflog"].lost.Store(true)
			a := firing("TTFTHigh")
			n1.Notify(context.Background(), []*rules.Alert{a})
			post := s.WaitCalls(t, 1, 10*time.Second)[0]
			waitFor(t, func() bool { return successes(n1) == 1 })

			n2 := start(t, conf, Options{StoragePath: dir})
			if got := nflogEntries(n2.Notifier); got != 0 {
				t.Fatalf("notification log entries on disk = %d, want 0 (lost)", got)
			}
			n2.Notify(context.Background(), []*rules.Alert{a})
			if tc.update {
				s.WaitCalls(t, 3, 10*time.Second)
			} else {
				s.WaitCalls(t, 2, 10*time.Second)
			}
			n2.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
			var calls []notifiertest.SlackCall
			if tc.update {
				calls = s.WaitCalls(t, 5, 10*time.Second)
				for i, want := range []string{"chat.update", "chat.postMessage", "chat.update", "chat.postMessage"} {
					c := calls[1+i]
					if c.Method != want || (want == "chat.update" && c.TS != post.TS) || (want == "chat.postMessage" && c.ThreadTS != post.TS) {
						t.Fatalf("call %d = %+v, want %s on the journal's message %s", 1+i, c, want, post.TS)
					}
				}
			} else {
				calls = s.WaitCalls(t, 3, 10*time.Second)
				for _, c := range calls[1:] {
					if c.Method != "chat.postMessage" || c.ThreadTS != post.TS {
						t.Fatalf("call = %+v, want a message in the journal message's thread %s", c, post.TS)
					}
				}
				contains(t, "last reply", string(calls[2].Blocks), "RESOLVED")
			}
			if n := topLevelPosts(s, "TTFTHigh"); n != 1 {
				t.Errorf("%d top-level messages for the group, want 1: %+v", n, s.Calls())
			}
			waitFor(t, func() bool { return successes(n2) == 2 })
			if journalHas(n2.journal, "TTFTHigh") {
				t.Error("journal still holds the message after the group resolved")
			}
			// The next firing is a new lifecycle: a new message.
			n2.Notify(context.Background(), []*rules.Alert{firing("TTFTHigh")})
			waitFor(t, func() bool { return topLevelPosts(s, "TTFTHigh") == 2 })
		})
	}
}

// When the history cannot be read (the scope is missing, or the channel
// is configured by name and its ID was never learned), paged says why and
// posts anew: a possible duplicate, never a lost notification.
func TestSlackHistoryLookupFailsPostsAnew(t *testing.T) {
	for _, tc := range []struct {
		name, channel string
		script        string // ok:false answer to the lookup
		want          []string
	}{
		{"missing-scope", "C0ALERTS", "missing_scope", []string{"ok:false: missing_scope", "channels:history"}},
		{"channel-name-missing-scope", "#alerts", "missing_scope", []string{"conversations.list: ok:false: missing_scope", "channels:read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := notifiertest.NewSlack(t, testToken)
			dir := t.TempDir()
			conf := slackBotConfigChannel(s, tc.channel, "")
			n1 := start(t, conf, Options{StoragePath: dir})
			release := s.HoldNext("chat.postMessage")
			t.Cleanup(release)
			a := firing("QueueBacklog")
			n1.Notify(context.Background(), []*rules.Alert{a})
			held := s.WaitCalls(t, 1, 10*time.Second)[0]

			if tc.script != "" {
				s.Script(notifiertest.SlackReply{Error: tc.script})
			}
			n2 := start(t, conf, Options{StoragePath: dir})
			n2.Notify(context.Background(), []*rules.Alert{a})
			calls := s.WaitCalls(t, 3, 10*time.Second)
			lookup := "conversations.history"
			if !strings.HasPrefix(tc.channel, "C") {
				lookup = "conversations.list" // a name: its ID first
			}
			if calls[1].Method != lookup || calls[1].Error == "" {
				t.Fatalf("lookup = %+v, want a failed %s", calls[1], lookup)
			}
			post := calls[2]
			if post.Method != "chat.postMessage" || post.ThreadTS != "" || post.Metadata == nil ||
				post.Metadata.EventPayload["intent"] == held.Metadata.EventPayload["intent"] {
				t.Fatalf("after the failed lookup: %+v, want a new top-level message with a new intent", post)
			}
			waitFor(t, func() bool { return successes(n2) == 1 })
			contains(t, "logs", n2.logs.String(), append([]string{"cannot look for the message posted before a restart"}, tc.want...)...)
			if strings.Contains(n2.logs.String(), testToken) {
				t.Error("the bot token is in the logs")
			}
		})
	}
}

// The history is searched around the intent: from its time minus the
// margin to its time plus the post's timeout and the margin. Driven on
// synctest's clock, so the window is exact.
func TestSlackHistoryWindowSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := notifiertest.NewSlackHandler(testToken)
		dir := t.TempDir()
		conf := mustConfig(t, slackBotConfigChannel(s, "C0ALERTS", ""))
		run := func() (*Notifier, func()) {
			n, err := New(Options{Config: conf, StoragePath: dir, Transport: notifiertest.InProcess(s), ExternalURL: "http://paged.example:9095"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- n.Run(ctx) }()
			return n, func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			}
		}
		a := firing("PrefillStall")
		n1, stop1 := run()
		release := s.HoldNext("chat.postMessage")
		n1.Notify(context.Background(), []*rules.Alert{a})
		time.Sleep(time.Second)
		synctest.Wait()
		held := s.Calls()[0]

		n2, stop2 := run()
		n2.Notify(context.Background(), []*rules.Alert{a})
		time.Sleep(time.Second)
		synctest.Wait()
		hist, ok := findCall(s.Calls(), func(c notifiertest.SlackCall) bool { return c.Method == "conversations.history" })
		if !ok {
			t.Fatalf("no history lookup: %+v", s.Calls())
		}
		n2.journal.mu.Lock()
		e, ok := n2.journal.msgs[journalKey{Receiver: "oncall", Group: `{}:{alertname="PrefillStall"}`}]
		n2.journal.mu.Unlock()
		if !ok || e.TS != held.TS {
			t.Fatalf("journal entry = %+v (%v), want the adopted message %s", e, ok, held.TS)
		}
		if held.At.Before(e.At) || held.At.After(e.At.Add(DefaultSlackTimeout)) {
			t.Errorf("message posted at %v, intent at %v", held.At, e.At)
		}
		if got, want := hist.Form.Get("oldest"), slackTime(e.At.Add(-historyMargin)); got != want {
			t.Errorf("oldest = %s, want %s (intent minus %v)", got, want, historyMargin)
		}
		if got, want := hist.Form.Get("latest"), slackTime(e.At.Add(DefaultSlackTimeout+historyMargin)); got != want {
			t.Errorf("latest = %s, want %s", got, want)
		}
		if got := hist.Form.Get("limit"); got != fmt.Sprint(historyLimit) {
			t.Errorf("limit = %s", got)
		}
		release()
		stop2()
		stop1()
	})
}
