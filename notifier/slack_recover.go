package notifier

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/notify"
	"github.com/slack-go/slack"
)

const (
	// slackEventType is the metadata event type of a group's top-level
	// message; its payload holds the intent id and a hash of the group key.
	slackEventType = "paged_alert_group"
	// historyMargin widens the conversations.history window around an
	// intent, for the difference between paged's and Slack's clocks, when
	// the journal has no answered post to bound it (clockBound).
	historyMargin = 2 * time.Minute
	// historyLimit is the page size, the most Slack recommends for
	// conversations.history.
	historyLimit = 200
	// historyMaxPages bounds a scan in calls: 20 pages are 4,000 top-level
	// messages in the few minutes around the interrupted posts (a storm
	// of paged's own and a busy channel's), and stay within a minute's
	// allowance of conversations.history (Slack's tier 3, about 50 calls
	// a minute per method and workspace).
	historyMaxPages = 20
	// historyBudget bounds a lookup in time, waits for 429 included. The
	// lookup runs within the post's timeout (15 s by default), so it takes
	// at most two thirds of that: the rest is left to edit or post.
	historyBudget = 10 * time.Second
	// historyReuse is how long a finished scan answers the lookups of
	// other groups: after a crash in a storm every group with an
	// interrupted post looks in the same minutes of the same channel, at
	// its first flush after the restart (group_wait, and retries).
	historyReuse = time.Minute
	// historyCalibration: answered posts attempted within this long of an
	// intent bound the offset between paged's clock and Slack's; older
	// ones may predate a clock step.
	historyCalibration = time.Hour
	// historySlack widens a window bound by answered posts, for a restart
	// on a host whose clock differs by a little, and rounding.
	historySlack = 5 * time.Second
)

// errHistoryBound: a lookup ran out of pages or time before it read its
// whole window.
var errHistoryBound = errors.New("bound reached")

func intentMetadata(intent, gkey string) slack.SlackMetadata {
	return slack.SlackMetadata{
		EventType:    slackEventType,
		EventPayload: map[string]any{"intent": intent, "group": groupHash(gkey)},
	}
}

// journalKey is the notification's group in the journal; false when
// the context names no group (notify-test) or there is no journal.
func (s *slackNotifier) journalKey(ctx context.Context) (journalKey, bool) {
	if s.journal == nil {
		return journalKey{}, false
	}
	recv, ok := notify.ReceiverName(ctx)
	gkey, gok := notify.GroupKey(ctx)
	if !ok || !gok || gkey == "" {
		return journalKey{}, false
	}
	return journalKey{Receiver: recv, Integration: s.idx, Group: gkey}, true
}

func (s *slackNotifier) dropJournal(k journalKey, keyed bool) {
	if keyed {
		s.journal.drop(k)
	}
}

// journalMessage returns the group's message when the journal knows one
// the notification log does not: posted and answered (the process died
// before the log was written), or posted without an answer recorded (it
// died during the post), which is looked up in the channel's history by
// its metadata. Empty when there is none: the caller posts.
func (s *slackNotifier) journalMessage(ctx context.Context, api *slack.Client, k journalKey, timeout time.Duration) (ts, channel string) {
	e, ok := s.journal.get(k)
	if !ok {
		return "", ""
	}
	if e.TS != "" {
		channel = cmp.Or(e.ChannelID, e.Channel)
		s.logger.Info("the notification log knows no message for this group, the slack message journal does: using it",
			"channel", channel, "ts", e.TS)
		return e.TS, channel
	}
	channel, ts, err := s.findPosted(ctx, api, k, e, timeout)
	switch {
	case errors.Is(err, errHistoryBound):
		s.logger.Warn("gave up looking for the message of an interrupted post, posting a new one: if Slack had stored the first, the group now has two",
			"channel", channel, "intent_at", e.At, "err", err)
	case err != nil:
		s.logger.Warn("cannot look for the message posted before a restart, posting a new one; "+
			"conversations.history needs the channels:history (or groups:history) scope, and a channel configured by name "+
			"needs channels:read (or groups:read) to find its ID",
			"channel", channel, "err", err)
	case ts == "":
		s.logger.Info("no message of an interrupted post found, posting it", "channel", channel, "intent_at", e.At)
	default:
		s.logger.Info("found the message of an interrupted post, editing it", "channel", channel, "ts", ts)
		s.journal.posted(k, e, channel, ts)
	}
	return ts, channel
}

// findPosted looks for the message posted with intent e in the channel's
// history: the ID learned from earlier posts, or the one conversations.list
// gives for a configured name (channelFor). It reads every page of
// the window the message can be in, within historyMaxPages and
// historyBudget, and shares the reading with the other groups of the
// integration whose posts were interrupted in the same minutes
// (historyScans). errHistoryBound when the bound came first.
func (s *slackNotifier) findPosted(ctx context.Context, api *slack.Client, k journalKey, e journalEntry, timeout time.Duration) (channel, ts string, err error) {
	arrived := time.Now()
	budget := min(historyBudget, timeout*2/3)
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	// A name only when the process died before any post to the channel
	// was answered: conversations.history takes IDs.
	if channel, err = s.channelFor(ctx, api, e.Channel); err != nil {
		return channel, "", err
	}
	key := scanKey{Receiver: k.Receiver, Integration: k.Integration, Channel: channel}
	// A scan that began before this lookup may have missed a message Slack
	// stored after it read that page: its "none" holds only if the post
	// had surely ended when it began.
	q := lookup{intent: e.Intent, group: groupHash(k.Group), at: e.At, trustFrom: arrived}
	if end := e.At.Add(timeout); end.Before(arrived) {
		q.trustFrom = end
	}
	for {
		if err := ctx.Err(); err != nil {
			return channel, "", fmt.Errorf("%w: the lookup ended (%v) within its budget of %s", errHistoryBound, err, budget)
		}
		sc, own := s.journal.scans.next(key, q, func() *historyScan { return s.journal.newScan(key, e.At, timeout) })
		if own {
			sc.run(ctx, api, channel)
			s.logger.Info("read the channel's history for interrupted posts", "channel", channel,
				"oldest", sc.window.oldest, "latest", sc.window.latest, "pages", sc.pages, "found", len(sc.found), "complete", sc.complete)
		} else {
			select {
			case <-sc.done:
			case <-ctx.Done():
				return channel, "", fmt.Errorf("%w: the time budget (%s) ran out waiting for another group's scan", errHistoryBound, budget)
			}
		}
		if ts, ok, err := sc.answer(q); ok {
			return channel, ts, err
		}
	}
}

// lookup is what one group looks for in a channel's history.
type lookup struct {
	intent, group string
	at            time.Time // of the intent
	trustFrom     time.Time // a scan begun earlier may have missed it
}

// historyWindow is a span of a channel's history, by Slack's clock.
type historyWindow struct{ oldest, latest time.Time }

func (w historyWindow) covers(o historyWindow) bool {
	return !w.oldest.After(o.oldest) && !w.latest.Before(o.latest)
}

func (w historyWindow) union(o historyWindow) historyWindow {
	if o.oldest.Before(w.oldest) {
		w.oldest = o.oldest
	}
	if o.latest.After(w.latest) {
		w.latest = o.latest
	}
	return w
}

// clockBound says where the ts of a message posted with an intent at t
// can be, by Slack's clock: within [t+lo, t+hi].
type clockBound struct{ lo, hi time.Duration }

func (b clockBound) window(at time.Time) historyWindow {
	return historyWindow{oldest: at.Add(b.lo), latest: at.Add(b.hi)}
}

// clockBound narrows the window by what the journal knows. Slack stores a
// post between its intent and the end of its timeout, by paged's clock;
// so every answered post (ts, intent at) of the integration in the
// channel bounds the offset of Slack's clock: ts-at-timeout <= offset <=
// ts-at. Without answered posts, or when they disagree (a clock step,
// another timeout), the margin is historyMargin either side.
func (j *slackJournal) clockBound(key scanKey, at time.Time, timeout time.Duration) clockBound {
	j.mu.Lock()
	defer j.mu.Unlock()
	var lo, hi time.Duration // bounds of the offset
	n := 0
	for k, e := range j.msgs {
		if e.TS == "" || k.Receiver != key.Receiver || k.Integration != key.Integration || e.ChannelID != key.Channel ||
			e.At.Sub(at).Abs() > historyCalibration {
			continue
		}
		ts, ok := parseSlackTime(e.TS)
		if !ok {
			continue
		}
		d := ts.Sub(e.At)
		if n == 0 {
			lo, hi = d-timeout, d
		} else {
			lo, hi = max(lo, d-timeout), min(hi, d)
		}
		n++
	}
	if n == 0 || lo > hi {
		return clockBound{lo: -historyMargin, hi: timeout + historyMargin}
	}
	return clockBound{lo: lo - historySlack, hi: timeout + hi + historySlack}
}

// newScan makes the scan for a lookup of an intent at at: over its window,
// widened to the windows of the integration's other interrupted posts in
// the channel attempted within historyMargin of it, so that one scan
// answers the groups of a storm.
func (j *slackJournal) newScan(key scanKey, at time.Time, timeout time.Duration) *historyScan {
	b := j.clockBound(key, at, timeout)
	j.mu.Lock()
	defer j.mu.Unlock()
	w := b.window(at)
	for k, e := range j.msgs {
		if e.TS != "" || e.Intent == "" || k.Receiver != key.Receiver || k.Integration != key.Integration ||
			cmp.Or(j.channels[e.Channel], e.Channel) != key.Channel || e.At.Sub(at).Abs() > historyMargin {
			continue
		}
		w = w.union(b.window(e.At))
	}
	return &historyScan{bound: b, window: w, started: time.Now(), done: make(chan struct{}), found: map[string]postedMessage{}}
}

// historyScans shares the conversations.history scans of crash recovery.
// After a crash in a storm every group with an interrupted post looks for
// its message in the same minutes of the same channel: one scan, whose
// window covers all of them, answers them all, where a scan per group
// (300 groups, a few pages each) would run into Slack's rate limit. A
// channel is read by one scan at a time; a finished scan answers later
// lookups for historyReuse. The zero value is ready.
type historyScans struct {
	mu   sync.Mutex
	last map[scanKey]*historyScan
}

// scanKey is a channel as one integration reads it (its token, its
// scopes).
type scanKey struct {
	Receiver    string
	Integration int
	Channel     string // ID
}

// next returns the scan to wait for, or a new one to run (own).
func (r *historyScans) next(key scanKey, q lookup, newScan func() *historyScan) (sc *historyScan, own bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sc := r.last[key]; sc != nil {
		select {
		case <-sc.done:
			// A failed scan is not reused: the next lookup tries again.
			if _, ok, err := sc.answer(q); ok && err == nil && time.Since(sc.finished) < historyReuse {
				return sc, false
			}
		default:
			return sc, false // running: wait for it, then look again
		}
	}
	if r.last == nil {
		r.last = map[scanKey]*historyScan{}
	}
	sc = newScan()
	r.last[key] = sc
	return sc, true
}

// historyScan is one reading of a channel's history over a window.
type historyScan struct {
	bound   clockBound // where a message is, from its intent's time
	window  historyWindow
	started time.Time
	done    chan struct{} // closed when the fields below are final

	found    map[string]postedMessage // intent -> paged's message
	pages    int
	complete bool  // every page of the window was read
	err      error // why not
	canceled bool  // the lookup running it was canceled: it tells nothing
	finished time.Time
}

// postedMessage is a message of paged's found in the history.
type postedMessage struct{ ts, group string }

// answer is what a finished scan says of q: ok is false when it cannot
// tell (q's window is not all in the scan's, or the scan began too early
// to say there is none).
func (sc *historyScan) answer(q lookup) (ts string, ok bool, err error) {
	if m, found := sc.found[q.intent]; found && m.group == q.group {
		return m.ts, true, nil
	}
	switch {
	case !sc.window.covers(sc.bound.window(q.at)), sc.canceled:
		return "", false, nil
	case !sc.complete:
		return "", true, sc.err
	case sc.started.Before(q.trustFrom):
		return "", false, nil
	}
	return "", true, nil
}

// run reads the window newest first, page by page along next_cursor,
// until the end, historyMaxPages, or ctx's deadline; a 429 is waited out
// within the deadline and its page asked again.
func (sc *historyScan) run(ctx context.Context, api *slack.Client, channel string) {
	defer func() {
		sc.finished = time.Now()
		close(sc.done)
	}()
	p := &slack.GetConversationHistoryParameters{
		ChannelID:          channel,
		Oldest:             slackTime(sc.window.oldest),
		Latest:             slackTime(sc.window.latest),
		Inclusive:          true,
		Limit:              historyLimit,
		IncludeAllMetadata: true,
	}
	for {
		if sc.pages == historyMaxPages {
			sc.err = fmt.Errorf("%w: %d pages of %d messages read, the window goes on", errHistoryBound, sc.pages, historyLimit)
			return
		}
		resp, err := api.GetConversationHistoryContext(ctx, p)
		retry, past, err := waitRateLimit(ctx, err)
		if retry {
			continue
		}
		if past > 0 {
			sc.err = fmt.Errorf("%w: rate limited after %d pages, Retry-After %s is past the time budget", errHistoryBound, sc.pages, past)
			return
		}
		switch {
		case err == nil:
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			sc.err = fmt.Errorf("%w: the time budget ran out after %d pages", errHistoryBound, sc.pages)
			return
		case ctx.Err() != nil:
			sc.err, sc.canceled = ctx.Err(), true
			return
		default:
			sc.err = fmt.Errorf("conversations.history: %s", slackErrText(err))
			return
		}
		sc.pages++
		for _, m := range resp.Messages {
			if m.Metadata.EventType != slackEventType {
				continue
			}
			intent, _ := m.Metadata.EventPayload["intent"].(string)
			g, _ := m.Metadata.EventPayload["group"].(string)
			if intent != "" {
				sc.found[intent] = postedMessage{ts: m.Timestamp, group: g}
			}
		}
		if !resp.HasMore {
			sc.complete = true
			return
		}
		if p.Cursor = resp.ResponseMetaData.NextCursor; p.Cursor == "" {
			sc.err = errors.New("conversations.history: has_more without a next_cursor")
			return
		}
	}
}

// rateLimited reports whether err is a 429, and how long to wait (a
// second when Slack did not say).
func rateLimited(err error) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	switch {
	case errors.As(err, &rl):
		return max(rl.RetryAfter, time.Second), true
	case errors.As(err, &sc) && sc.Code == http.StatusTooManyRequests:
		return time.Second, true
	}
	return 0, false
}

// waitRateLimit waits out a 429 within ctx's deadline. It answers retry
// after the wait; past, the wait asked for, when it would end after the
// deadline (err is then the 429); ctx's error when ctx ends during the
// wait; and err itself for anything but a 429.
func waitRateLimit(ctx context.Context, err error) (retry bool, past time.Duration, _ error) {
	wait, ok := rateLimited(err)
	if !ok {
		return false, 0, err
	}
	if dl, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(dl) {
		return false, wait, err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true, 0, nil
	case <-ctx.Done():
		return false, 0, ctx.Err()
	}
}

// parseSlackTime reads a Slack timestamp ("1700000000.000123").
func parseSlackTime(ts string) (time.Time, bool) {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || len(frac) > 6 {
		return time.Time{}, false
	}
	us := 0
	if frac != "" {
		if us, err = strconv.Atoi((frac + "000000")[:6]); err != nil {
			return time.Time{}, false
		}
	}
	return time.Unix(s, int64(us)*1000), true
}

// slackTime is t as a Slack timestamp.
func slackTime(t time.Time) string {
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// maybePosted reports whether Slack may have posted a message despite
// err: no answer came (a timeout, a dropped connection). Any HTTP answer
// (ok:false, 429, 5xx) is taken to mean it did not.
func maybePosted(err error) bool {
	var se slack.SlackErrorResponse
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	return !errors.As(err, &se) && !errors.As(err, &rl) && !errors.As(err, &sc)
}

// slackErrText describes a Slack error without anything it may embed
// (URLs, the token).
func slackErrText(err error) string {
	var se slack.SlackErrorResponse
	var sc slack.StatusCodeError
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &se):
		return "ok:false: " + se.Err
	case errors.As(err, &rl):
		return "rate limited"
	case errors.As(err, &sc):
		return fmt.Sprintf("HTTP %d", sc.Code)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timed out"
	default:
		return fmt.Sprintf("request failed (%T)", err)
	}
}
