package notifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slack-go/slack"

	"github.com/pagedhq/paged/notifier/notifiertest"
)

const recoverChannel = "C0ALERTS"

// recovery is a Slack integration with an in-memory journal and the
// stand-in served in-process, to drive crash recovery on synctest's
// clock.
type recovery struct {
	t     *testing.T
	slack *notifiertest.Slack
	api   *slack.Client
	s     *slackNotifier
	logs  *syncBuffer
}

func newRecovery(t *testing.T) *recovery {
	st := notifiertest.NewSlackHandler(testToken)
	logs := &syncBuffer{}
	j := &slackJournal{logger: slog.New(slog.DiscardHandler), msgs: map[journalKey]journalEntry{}, channels: map[string]string{}}
	return &recovery{
		t:     t,
		slack: st,
		api:   slack.New(testToken, slack.OptionAPIURL(st.APIURL()), slack.OptionHTTPClient(&http.Client{Transport: notifiertest.InProcess(st)})),
		s:     &slackNotifier{journal: j, logger: slog.New(slog.NewTextHandler(logs, nil))},
		logs:  logs,
	}
}

func groupKey(i int) journalKey {
	return journalKey{Receiver: "oncall", Group: fmt.Sprintf(`{}:{alertname="Group%03d"}`, i)}
}

// intend records an interrupted post of group i at now.
func (r *recovery) intend(i int) (journalKey, journalEntry) {
	k := groupKey(i)
	return k, r.s.journal.intend(k, recoverChannel, time.Now())
}

// post stores the message of intent e in the channel, as Slack does when
// it takes the post, and returns its ts.
func (r *recovery) post(k journalKey, e journalEntry) string {
	r.t.Helper()
	_, ts, err := r.api.PostMessage(recoverChannel, slack.MsgOptionText("FIRING", false), slack.MsgOptionMetadata(intentMetadata(e.Intent, k.Group)))
	if err != nil {
		r.t.Fatal(err)
	}
	return ts
}

// others stores n messages of other apps in the channel.
func (r *recovery) others(n int) {
	for i := range n {
		r.slack.PostOther(recoverChannel, fmt.Sprintf("deploy %d done", i))
	}
}

func (r *recovery) find(k journalKey, e journalEntry) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultSlackTimeout)
	defer cancel()
	_, ts, err := r.s.findPosted(ctx, r.api, k, e, DefaultSlackTimeout)
	return ts, err
}

func (r *recovery) history() []notifiertest.SlackCall {
	var out []notifiertest.SlackCall
	for _, c := range r.slack.Calls() {
		if c.Method == "conversations.history" {
			out = append(out, c)
		}
	}
	return out
}

// The interrupted post is on the third page of the window: 450 messages of
// other apps came after it. The lookup follows next_cursor, waits out a
// 429 on the second page (Retry-After: 3) and asks that page again.
func TestFindPostedFollowsCursorThrough429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecovery(t)
		k, e := r.intend(1)
		time.Sleep(200 * time.Millisecond)
		want := r.post(k, e)
		time.Sleep(time.Second)
		r.others(450)
		r.slack.Script(
			notifiertest.SlackReply{Method: "conversations.history", Pass: true},
			notifiertest.SlackReply{Method: "conversations.history", Status: http.StatusTooManyRequests, RetryAfter: 3},
		)

		start := time.Now()
		ts, err := r.find(k, e)
		if err != nil || ts != want {
			t.Fatalf("findPosted = %q, %v; want %s", ts, err, want)
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("took %v, want the 3 s of Retry-After", took)
		}
		h := r.history()
		if len(h) != 4 {
			t.Fatalf("%d conversations.history calls, want 4 (page 1, 429, page 2, page 3): %+v", len(h), h)
		}
		if h[0].Form.Get("cursor") != "" || h[1].Status != http.StatusTooManyRequests || h[1].Form.Get("cursor") == "" ||
			h[2].Form.Get("cursor") != h[1].Form.Get("cursor") || h[3].Form.Get("cursor") == "" || h[3].Form.Get("cursor") == h[2].Form.Get("cursor") {
			t.Errorf("cursors %q, %q (status %d), %q, %q: want none, the next page's, the same again, the page after",
				h[0].Form.Get("cursor"), h[1].Form.Get("cursor"), h[1].Status, h[2].Form.Get("cursor"), h[3].Form.Get("cursor"))
		}
		if !h[2].At.Equal(h[1].At.Add(3 * time.Second)) {
			t.Errorf("page 2 asked again at %v, the 429 came at %v: want Retry-After (3 s) later", h[2].At, h[1].At)
		}
		for _, c := range h {
			if c.Form.Get("limit") != fmt.Sprint(historyLimit) || c.Form.Get("oldest") != h[0].Form.Get("oldest") || c.Form.Get("latest") != h[0].Form.Get("latest") {
				t.Errorf("page arguments changed: %v, first %v", c.Form, h[0].Form)
			}
		}
	})
}

// The bound in calls: a window with more than historyMaxPages pages newer
// than the message is read up to historyMaxPages, and the group posts
// anew, saying why.
func TestFindPostedPageBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecovery(t)
		k, e := r.intend(1)
		r.post(k, e)
		time.Sleep(time.Second)
		r.others(historyMaxPages*historyLimit + 1)

		ctx, cancel := context.WithTimeout(context.Background(), DefaultSlackTimeout)
		defer cancel()
		if ts, _ := r.s.journalMessage(ctx, r.api, k, DefaultSlackTimeout); ts != "" {
			t.Fatalf("journalMessage = %s, want none found within the bound", ts)
		}
		if n := len(r.history()); n != historyMaxPages {
			t.Errorf("%d conversations.history calls, want %d", n, historyMaxPages)
		}
		contains(t, "logs", r.logs.String(), "gave up looking for the message of an interrupted post", "bound reached: 20 pages of 200 messages read")
	})
}

// The bound in time: a 429 whose Retry-After is past the budget ends the
// lookup at once; a history that answers slowly ends it at the budget.
func TestFindPostedTimeBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*notifiertest.Slack)
		took  time.Duration
		calls int
		err   string
	}{
		{"retry-after-past-budget", func(s *notifiertest.Slack) {
			s.Script(
				notifiertest.SlackReply{Method: "conversations.history", Pass: true},
				notifiertest.SlackReply{Method: "conversations.history", Status: http.StatusTooManyRequests, RetryAfter: 30},
			)
		}, 0, 2, "rate limited after 1 pages, Retry-After 30s is past the time budget"},
		{"slow-history", func(s *notifiertest.Slack) {
			s.SetDelay(func(m string) time.Duration {
				if m == "conversations.history" {
					return 4 * time.Second
				}
				return 0
			})
		}, historyBudget, 3, "the time budget ran out after 2 pages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRecovery(t)
				k, e := r.intend(1)
				r.post(k, e)
				time.Sleep(time.Second)
				r.others(3 * historyLimit)
				tc.setup(r.slack)
				start := time.Now()
				ts, err := r.find(k, e)
				if ts != "" || !errors.Is(err, errHistoryBound) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("findPosted = %q, %v; want %q", ts, err, tc.err)
				}
				if took := time.Since(start); took != tc.took {
					t.Errorf("took %v, want %v", took, tc.took)
				}
				if n := len(r.history()); n != tc.calls {
					t.Errorf("%d conversations.history calls, want %d", n, tc.calls)
				}
			})
		})
	}
}

// A storm: 100 groups' posts were interrupted, Slack took 90 of them,
// other apps posted 250 messages after. The 100 lookups, at once, share
// one scan of the window (two pages) instead of one each; every group gets
// its own message, or none.
func TestFindPostedSharesOneScan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecovery(t)
		type group struct {
			k    journalKey
			e    journalEntry
			want string
		}
		var groups []group
		for i := range 100 {
			k, e := r.intend(i)
			g := group{k: k, e: e}
			if i%10 != 9 {
				g.want = r.post(k, e)
			}
			groups = append(groups, g)
			time.Sleep(time.Millisecond)
		}
		r.others(250)
		time.Sleep(time.Second)

		var wg sync.WaitGroup
		got := make([]string, len(groups))
		errs := make([]error, len(groups))
		for i, g := range groups {
			wg.Go(func() { got[i], errs[i] = r.find(g.k, g.e) })
		}
		wg.Wait()
		for i, g := range groups {
			if got[i] != g.want || errs[i] != nil {
				t.Errorf("group %d: findPosted = %q, %v; want %q", i, got[i], errs[i], g.want)
			}
		}
		if n := len(r.history()); n != 2 {
			t.Errorf("%d conversations.history calls, want 2 (one scan of 350 messages)", n)
		}
		// A group that looks later, within historyReuse, is answered by the
		// same scan.
		time.Sleep(historyReuse / 2)
		if ts, err := r.find(groups[3].k, groups[3].e); ts != groups[3].want || err != nil {
			t.Errorf("later lookup = %q, %v; want %q", ts, err, groups[3].want)
		}
		if n := len(r.history()); n != 2 {
			t.Errorf("%d conversations.history calls after a later lookup, want still 2", n)
		}
	})
}

// A scan that began before a lookup may have read its page before Slack
// stored the lookup's message: its "none" does not answer that lookup,
// which scans again.
func TestFindPostedDoesNotTrustAnEarlierScan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecovery(t)
		ka, ea := r.intend(1)
		wantA := r.post(ka, ea)
		kb, eb := r.intend(2)
		r.slack.SetDelay(func(m string) time.Duration {
			if m == "conversations.history" {
				return 2 * time.Second
			}
			return 0
		})
		var wg sync.WaitGroup
		var tsA, tsB string
		var errA, errB error
		wg.Go(func() { tsA, errA = r.find(ka, ea) })
		time.Sleep(time.Second) // A's scan has read its page, and waits for the answer
		var wantB string
		wg.Go(func() { tsB, errB = r.find(kb, eb) })
		time.Sleep(500 * time.Millisecond)
		wantB = r.post(kb, eb) // Slack stores B's post late
		wg.Wait()
		if tsA != wantA || errA != nil || tsB != wantB || errB != nil {
			t.Fatalf("A = %q, %v (want %s); B = %q, %v (want %s)", tsA, errA, wantA, tsB, errB, wantB)
		}
		if n := len(r.history()); n != 2 {
			t.Errorf("%d conversations.history calls, want 2 (A's scan, then B's)", n)
		}
	})
}

// The window is narrowed by what the journal knows: answered posts of the
// integration in the channel bound the offset of Slack's clock, and the
// window of an intent is its timeout and historySlack either side of
// that; without them, or when they disagree, historyMargin either side.
func TestHistoryWindowNarrowedByAnsweredPosts(t *testing.T) {
	j := &slackJournal{msgs: map[journalKey]journalEntry{}, channels: map[string]string{}}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	key := scanKey{Receiver: "oncall", Channel: recoverChannel}
	timeout := DefaultSlackTimeout
	if b := j.clockBound(key, at, timeout); b != (clockBound{-historyMargin, timeout + historyMargin}) {
		t.Errorf("empty journal: %+v, want the margin", b)
	}
	answered := func(i int, at time.Time, d time.Duration, channel string) {
		j.msgs[groupKey(i)] = journalEntry{Intent: "x", At: at, Channel: "#alerts", ChannelID: channel, TS: slackTime(at.Add(d))}
	}
	answered(1, at.Add(-10*time.Second), 300*time.Millisecond, recoverChannel)
	answered(2, at.Add(-9*time.Second), 2*time.Second, recoverChannel)
	answered(3, at.Add(-8*time.Second), time.Hour, "C0OTHER")                                                                              // another channel
	answered(4, at.Add(-2*historyCalibration), -time.Hour, recoverChannel)                                                                 // too old
	j.msgs[journalKey{Receiver: "other", Group: "g"}] = journalEntry{At: at, ChannelID: recoverChannel, TS: slackTime(at.Add(-time.Hour))} // another receiver
	b := j.clockBound(key, at, timeout)
	// Offset in [2s-15s, 0.3s]: a message posted at `at` is within
	// [at-13s-slack, at+15.3s+slack].
	if want := (clockBound{2*time.Second - timeout - historySlack, timeout + 300*time.Millisecond + historySlack}); b != want {
		t.Errorf("bound = %+v, want %+v", b, want)
	}
	if w := b.window(at); w.latest.Sub(w.oldest) >= 2*historyMargin {
		t.Errorf("window %v to %v is not narrower than the margins", w.oldest, w.latest)
	}
	// Posts that disagree (an offset above one's upper bound): the margin.
	answered(5, at.Add(-7*time.Second), 20*time.Second, recoverChannel)
	if b := j.clockBound(key, at, timeout); b != (clockBound{-historyMargin, timeout + historyMargin}) {
		t.Errorf("disagreeing posts: %+v, want the margin", b)
	}
}
