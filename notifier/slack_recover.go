package notifier

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/alertmanager/notify"
	"github.com/slack-go/slack"
)

const (
	// slackEventType is the metadata event type of a group's top-level
	// message; its payload holds the intent id and a hash of the group key.
	slackEventType = "paged_alert_group"
	// historyMargin widens the conversations.history window around an
	// intent, for the difference between paged's and Slack's clocks.
	historyMargin = 2 * time.Minute
	historyLimit  = 200
)

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
	case err != nil:
		s.logger.Warn("cannot look for the message posted before a restart, posting a new one; "+
			"conversations.history needs the channels:history (or groups:history) scope and the channel as an ID",
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
// history, around the time of the intent. The channel is the ID learned
// from earlier posts, or the configured value (Slack answers a name with
// channel_not_found).
func (s *slackNotifier) findPosted(ctx context.Context, api *slack.Client, k journalKey, e journalEntry, timeout time.Duration) (channel, ts string, err error) {
	channel = s.journal.channelID(e.Channel)
	resp, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
		ChannelID:          channel,
		Oldest:             slackTime(e.At.Add(-historyMargin)),
		Latest:             slackTime(e.At.Add(timeout + historyMargin)),
		Inclusive:          true,
		Limit:              historyLimit,
		IncludeAllMetadata: true,
	})
	if err != nil {
		return channel, "", fmt.Errorf("conversations.history: %s", slackErrText(err))
	}
	group := groupHash(k.Group)
	for _, m := range resp.Messages {
		if m.Metadata.EventType != slackEventType {
			continue
		}
		intent, _ := m.Metadata.EventPayload["intent"].(string)
		g, _ := m.Metadata.EventPayload["group"].(string)
		if intent == e.Intent && g == group {
			return channel, m.Timestamp, nil
		}
	}
	return channel, "", nil
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
