package notifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
	"github.com/slack-go/slack"
)

// Keys of the group's Slack message in the notification log's receiver
// data, so that a restart still edits the original message.
const (
	storeTS      = "slack_ts"
	storeChannel = "slack_channel"
)

// slackNotifier delivers Block Kit messages through an incoming webhook or
// the Web API with a bot token.
type slackNotifier struct {
	conf    *SlackConfig
	idx     int // index in the receiver's slack_configs
	tmpl    *template.Template
	links   linkBuilder
	stale   *staleSet
	journal *slackJournal // nil: no journal (notify-test)
	client  *http.Client
	logger  *slog.Logger
	metrics *metrics
	// actions, when set, puts the acknowledge and silence buttons on the
	// message, with what was done from them (slack_actions.go).
	actions *slackActions
	// charts, when set, posts the rule's chart in the message's thread
	// (slack_chart.go).
	charts *charts
	rt     http.RoundTripper
}

func newSlack(c *SlackConfig, idx int, tmpl *template.Template, links linkBuilder, stale *staleSet, journal *slackJournal, rt http.RoundTripper, logger *slog.Logger, m *metrics) (*slackNotifier, error) {
	client, err := httpClient(c.HTTPConfig, "slack", rt)
	if err != nil {
		return nil, err
	}
	// Check the templates now, so a reload with a broken one is refused.
	for _, t := range []string{c.Title, c.Text} {
		if t == "" {
			continue
		}
		if _, err := tmpl.ExecuteTextString(t, &template.Data{}); err != nil {
			return nil, fmt.Errorf("template: %w", err)
		}
	}
	return &slackNotifier{conf: c, idx: idx, tmpl: tmpl, links: links, stale: stale, journal: journal, client: slackClient(client, c), logger: logger, metrics: m, rt: rt}, nil
}

// SendResolved implements notify.ResolvedSender; paged defaults to true.
func (s *slackNotifier) SendResolved() bool { return boolOr(s.conf.SendResolved, true) }

func (s *slackNotifier) render(ctx context.Context, alerts []*alert.Alert) (*template.Data, slackMessage, error) {
	data := notify.GetTemplateData(ctx, s.tmpl, alerts, s.logger)
	var tmplErr error
	text := notify.TmplText(s.tmpl, data, &tmplErr)
	in := messageInput{
		data: data, keyLabels: s.conf.KeyLabels, maxAlerts: s.conf.MaxAlerts, links: s.links,
		stale: func(a template.Alert) bool {
			ls := make(model.LabelSet, len(a.Labels))
			for k, v := range a.Labels {
				ls[model.LabelName(k)] = model.LabelValue(v)
			}
			return s.stale.get(ls.Fingerprint())
		},
	}
	if s.actions != nil {
		recv, _ := notify.ReceiverName(ctx)
		gkey, _ := notify.GroupKey(ctx)
		now, ok := notify.Now(ctx)
		if !ok {
			now = time.Now()
		}
		in.actions = s.actions.view(ctx, recv, s.idx, gkey, now)
	}
	if s.conf.Title != "" {
		in.title = text(s.conf.Title)
	}
	if s.conf.Text != "" {
		in.text = text(s.conf.Text)
	}
	if tmplErr != nil {
		return nil, slackMessage{}, tmplErr
	}
	return data, renderSlack(in), nil
}

// Notify implements notify.Notifier.
func (s *slackNotifier) Notify(ctx context.Context, alerts ...*alert.Alert) notify.NotifyVerdict {
	data, msg, err := s.render(ctx, alerts)
	if err != nil {
		return notify.Unrecoverable(fmt.Errorf("slack template: %w", err), notify.TemplateErrorReason)
	}
	timeout := time.Duration(s.conf.Timeout)
	if timeout <= 0 {
		timeout = DefaultSlackTimeout
	}
	if !s.conf.BotMode() {
		return s.postWebhook(ctx, timeout, msg)
	}
	v := s.postBot(ctx, timeout, data, msg)
	if msg.actions != nil {
		recv, _ := notify.ReceiverName(ctx)
		gkey, _ := notify.GroupKey(ctx)
		s.actions.recheck(recv, s.idx, gkey, msg.actions.lastTS)
	}
	return v
}

func (s *slackNotifier) postWebhook(ctx context.Context, timeout time.Duration, msg slackMessage) notify.NotifyVerdict {
	u, err := secretOrFile(string(s.conf.APIURL), s.conf.APIURLFile)
	if err != nil {
		return notify.Unrecoverable(fmt.Errorf("api_url_file: %w", err), notify.FileReadErrorReason)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = slack.PostWebhookCustomHTTPContext(ctx, u, s.client, &slack.WebhookMessage{
		Text: msg.Text, Blocks: &slack.Blocks{BlockSet: msg.Blocks},
	})
	return s.verdict("webhook", err)
}

func (s *slackNotifier) postBot(ctx context.Context, timeout time.Duration, data *template.Data, msg slackMessage) notify.NotifyVerdict {
	token, err := secretOrFile(string(s.conf.AppToken), s.conf.AppTokenFile)
	if err != nil {
		return notify.Unrecoverable(fmt.Errorf("app_token_file: %w", err), notify.FileReadErrorReason)
	}
	appURL := s.conf.AppURL
	if appURL == "" {
		appURL = DefaultSlackAppURL
	}
	api := slack.New(token, slack.OptionAPIURL(appURL), slack.OptionHTTPClient(s.client))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	store, _ := notify.NflogStore(ctx)
	var ts, channel string
	if store != nil {
		ts, _ = store.GetStr(storeTS)
		channel, _ = store.GetStr(storeChannel)
	}
	key, keyed := s.journalKey(ctx)
	fromJournal := false
	if ts == "" && keyed {
		// The notification log knows no message: the journal may, if the
		// process died after Slack accepted the post.
		ts, channel = s.journalMessage(ctx, api, key, timeout)
		fromJournal = ts != ""
	}
	update := boolOr(s.conf.UpdateMessage, true)
	threads := boolOr(s.conf.ThreadReplies, true)
	allResolved := len(data.Alerts.Firing()) == 0
	opts := []slack.MsgOption{slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...)}

	if isStaleEdit(ctx) {
		return s.editStale(ctx, api, store, ts, channel, fromJournal, msg, opts)
	}

	if update && ts != "" && channel != "" {
		_, _, _, err := api.UpdateMessageContext(ctx, channel, ts, opts...)
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && (se.Err == "message_not_found" || se.Err == "cant_update_message" || se.Err == "edit_window_closed") {
			// The original is gone: start over with a new message.
			s.logger.Warn("slack message cannot be edited, posting a new one", "error_code", se.Err)
			ts, channel, fromJournal = "", "", false
		} else if err != nil {
			return s.verdict("chat.update", err)
		} else {
			if threads {
				if _, _, err := api.PostMessageContext(ctx, channel, slack.MsgOptionText(threadReply(data), false), slack.MsgOptionTS(ts)); err != nil {
					return s.verdict("chat.postMessage", err)
				}
			}
			switch {
			case allResolved:
				s.postChart(data, channel, ts, true)
				// The group's lifecycle is over; the next firing posts anew.
				if store != nil {
					store.Delete(storeTS)
					store.Delete(storeChannel)
					store.Delete(storeStale)
				}
				s.dropJournal(key, keyed)
			case store != nil:
				if fromJournal {
					store.SetStr(storeTS, ts)
					store.SetStr(storeChannel, channel)
				}
				recordStale(store, msg.Stale)
			}
			return notify.Success()
		}
	}
	target := s.conf.Channel
	postOpts := opts
	topLevel := true
	if !update && threads && ts != "" && channel != "" {
		// Not editing: follow up in the thread of the first message.
		target, postOpts, topLevel = channel, append(opts, slack.MsgOptionTS(ts)), false
	}
	var intent journalEntry
	if topLevel && keyed {
		// Written before the post: if the process dies before Slack's
		// answer is recorded, the next notification looks for this message.
		intent = s.journal.intend(key, s.conf.Channel, time.Now())
		postOpts = append(postOpts, slack.MsgOptionMetadata(intentMetadata(intent.Intent, key.Group)))
	}
	gotChannel, gotTS, err := api.PostMessageContext(ctx, target, postOpts...)
	if err != nil {
		if topLevel && keyed && !maybePosted(err) {
			s.journal.cancel(key, intent.Intent)
		}
		return s.verdict("chat.postMessage", err)
	}
	if topLevel && keyed {
		s.journal.posted(key, intent, gotChannel, gotTS)
	}
	if topLevel {
		s.postChart(data, gotChannel, gotTS, allResolved)
	}
	if allResolved {
		s.dropJournal(key, keyed)
	}
	switch {
	case store == nil:
	case allResolved:
		// The group's lifecycle is over; the next firing starts a new thread.
		store.Delete(storeTS)
		store.Delete(storeChannel)
		store.Delete(storeStale)
	case ts == "" || update:
		store.SetStr(storeTS, gotTS)
		store.SetStr(storeChannel, gotChannel)
		recordStale(store, msg.Stale)
	case fromJournal:
		// A reply in the thread of the journal's message: keep following it.
		store.SetStr(storeTS, ts)
		store.SetStr(storeChannel, channel)
	}
	return notify.Success()
}

// postChart posts the group's chart in the thread of its message, in the
// background (slack_chart.go).
func (s *slackNotifier) postChart(data *template.Data, channel, ts string, resolved bool) {
	if s.charts == nil {
		return
	}
	s.charts.post(s, chartJob{conf: s.conf, channel: channel, threadTS: ts, data: data, resolved: resolved, requested: time.Now()})
}

// editStale brings the group's message up to date with its datasource
// state (stale_edit.go): it edits the message and posts nothing, neither a
// thread reply nor a new message if the original is gone.
func (s *slackNotifier) editStale(ctx context.Context, api *slack.Client, store *nflog.Store, ts, channel string, fromJournal bool, msg slackMessage, opts []slack.MsgOption) notify.NotifyVerdict {
	if ts == "" || channel == "" || store == nil {
		return notify.Success()
	}
	_, _, _, err := api.UpdateMessageContext(ctx, channel, ts, opts...)
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && (se.Err == "message_not_found" || se.Err == "cant_update_message" || se.Err == "edit_window_closed") {
		// Nothing to bring up to date: the next change of the group posts
		// a new message, as any edit that fails this way does.
		s.logger.Warn("slack message cannot be edited to show the datasource state", "error_code", se.Err)
		store.Delete(storeTS)
		store.Delete(storeChannel)
		store.Delete(storeStale)
		return notify.Success()
	}
	if err != nil {
		return s.verdict("chat.update", err)
	}
	if fromJournal {
		store.SetStr(storeTS, ts)
		store.SetStr(storeChannel, channel)
	}
	recordStale(store, msg.Stale)
	return notify.Success()
}

// verdict classifies a Slack error: 429 waits for Retry-After, 5xx and
// network errors retry with backoff, ok:false and other 4xx are permanent.
// Errors never carry the webhook URL or the token.
func (s *slackNotifier) verdict(op string, err error) notify.NotifyVerdict {
	if err == nil {
		return notify.Success()
	}
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	var ue *url.Error
	var ne net.Error
	switch {
	case errors.As(err, &rl):
		return notify.Retry(rl.RetryAfter, fmt.Errorf("slack %s: rate limited, retry after %s", op, rl.RetryAfter), notify.RateLimitedReason)
	case errors.As(err, &sc):
		e := fmt.Errorf("slack %s: HTTP %d", op, sc.Code)
		if sc.Code >= 500 || sc.Code == http.StatusTooManyRequests {
			return notify.Retry(0, e, notify.ServerErrorReason)
		}
		return notify.Unrecoverable(e, notify.GetFailureReasonFromStatusCode(sc.Code))
	case errors.As(err, &se):
		s.metrics.slackErrors.WithLabelValues(se.Err).Inc()
		s.logger.Error("slack refused the message", "op", op, "error_code", se.Err)
		return notify.Unrecoverable(fmt.Errorf("slack %s: ok:false: %s", op, se.Err), notify.ClientErrorReason)
	case errors.As(err, &ue):
		return notify.Retry(0, fmt.Errorf("slack %s: %s: %w", op, ue.Op, ue.Err), notify.RequestErrorReason)
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded):
		return notify.Retry(0, fmt.Errorf("slack %s: %w", op, err), notify.RequestErrorReason)
	default:
		// Unknown errors may embed a URL; do not echo them.
		return notify.Retry(0, fmt.Errorf("slack %s: request failed (%T)", op, err), notify.RequestErrorReason)
	}
}
