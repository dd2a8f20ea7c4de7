package notifier

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/alertmanager/alert"
	events "github.com/prometheus/alertmanager/eventrecorder/events/v2"
	"github.com/prometheus/alertmanager/notify"
	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/alertmanager/silence/silencepb"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/pagedhq/paged/history"
)

// historyFlushTimeout bounds how long a notification that was sent waits
// for its event to be written before the notification log records it.
const historyFlushTimeout = 5 * time.Second

// maxAlertsInEvent bounds the alerts a notification event lists.
const maxAlertsInEvent = 100

// historyStage records each delivery of a group to one integration in the
// history, around Alertmanager's retry stage: a failure with its reason,
// a success with what the integration left in the notification log (the
// Slack channel and message ts). A success is written before the
// notification log records it, so after a kill -9 a notification is in
// the history or sent again, never neither.
type historyStage struct {
	retry, setNotifies notify.Stage
	history            *history.Store
	receiver           string
	integration        string
	sendResolved       bool
	logger             *slog.Logger
}

func (s historyStage) Exec(ctx context.Context, l *slog.Logger, alerts ...*alert.Alert) (context.Context, []*alert.Alert, error) {
	ctx, sent, err := s.retry.Exec(ctx, l, alerts...)
	if len(alerts) > 0 && (s.sendResolved || countFiring(alerts) > 0) {
		ev := notificationEvent(ctx, alerts, s.receiver, s.integration)
		if err != nil {
			ev.Outcome = history.OutcomeFailed
			ev.Details = history.Details(notificationDetails(ctx, alerts, err))
			s.history.Record(ev)
		} else {
			ev.Outcome = history.OutcomeSent
			ev.Details = history.Details(notificationDetails(ctx, alerts, nil))
			s.history.Record(ev)
			fctx, cancel := context.WithTimeout(ctx, historyFlushTimeout)
			if ferr := s.history.Flush(fctx); ferr != nil {
				s.logger.Debug("notification not in the history before the notification log", "receiver", s.receiver, "err", ferr)
			}
			cancel()
		}
	}
	if err != nil {
		return ctx, sent, err
	}
	return s.setNotifies.Exec(ctx, l, sent...)
}

func countFiring(alerts []*alert.Alert) int {
	n := 0
	for _, a := range alerts {
		if a.Status() == model.AlertFiring {
			n++
		}
	}
	return n
}

// notificationEvent is the event of a group's notification: its labels
// are the labels all its alerts share, its fingerprint the alert's when
// there is one.
func notificationEvent(ctx context.Context, alerts []*alert.Alert, receiver, integration string) history.Event {
	ev := history.Event{Time: time.Now(), Type: history.TypeNotification, Receiver: receiver, Integration: integration}
	ev.GroupKey, _ = notify.GroupKey(ctx)
	common := map[string]string{}
	for k, v := range alerts[0].Labels {
		common[string(k)] = string(v)
	}
	for _, a := range alerts[1:] {
		for k, v := range common {
			if string(a.Labels[model.LabelName(k)]) != v {
				delete(common, k)
			}
		}
	}
	ev.Labels = common
	if len(alerts) == 1 {
		ev.Fingerprint = alerts[0].Fingerprint().String()
	}
	return ev
}

func notificationDetails(ctx context.Context, alerts []*alert.Alert, err error) map[string]any {
	d := map[string]any{}
	firing := countFiring(alerts)
	d["firing"], d["resolved"] = firing, len(alerts)-firing
	var list []map[string]string
	for i, a := range alerts {
		if i == maxAlertsInEvent {
			break
		}
		list = append(list, map[string]string{"fingerprint": a.Fingerprint().String(), "alertname": a.Name(), "status": string(a.Status())})
	}
	d["alerts"] = list
	if err != nil {
		d["error"] = err.Error()
	}
	if store, ok := notify.NflogStore(ctx); ok && store != nil {
		if ts, ok := store.GetStr(storeTS); ok && ts != "" {
			d["slack_ts"] = ts
		}
		if ch, ok := store.GetStr(storeChannel); ok && ch != "" {
			d["slack_channel"] = ch
		}
	}
	return d
}

// silenceEvent is the history event of a silence created, updated or
// expired; its details are Alertmanager's event recorder's silence event
// (silenceCreated or silenceUpdated, its schema field for field).
func silenceEvent(sil *silencepb.Silence, outcome string, now time.Time) history.Event {
	s := &events.Silence{
		Id: sil.Id, StartsAt: sil.StartsAt, EndsAt: sil.EndsAt, UpdatedAt: sil.UpdatedAt,
		CreatedBy: sil.CreatedBy, Comment: sil.Comment, Annotations: sil.Annotations,
	}
	ms := sil.Matchers
	if len(ms) == 0 && len(sil.MatcherSets) > 0 {
		ms = sil.MatcherSets[0].Matchers
	}
	ev := history.Event{Time: now, Type: history.TypeSilence, Outcome: outcome, User: sil.CreatedBy}
	for _, m := range ms {
		em := &events.Matcher{Name: m.Name, Pattern: m.Pattern}
		var t amlabels.MatchType
		switch m.Type {
		case silencepb.Matcher_EQUAL:
			em.Type, t = events.Matcher_TYPE_EQUAL, amlabels.MatchEqual
		case silencepb.Matcher_REGEXP:
			em.Type, t = events.Matcher_TYPE_REGEXP, amlabels.MatchRegexp
		case silencepb.Matcher_NOT_EQUAL:
			em.Type, t = events.Matcher_TYPE_NOT_EQUAL, amlabels.MatchNotEqual
		case silencepb.Matcher_NOT_REGEXP:
			em.Type, t = events.Matcher_TYPE_NOT_REGEXP, amlabels.MatchNotRegexp
		}
		if pm, err := amlabels.NewMatcher(t, m.Name, m.Pattern); err == nil {
			em.Rendered = pm.String()
		}
		s.Matchers = append(s.Matchers, em)
		if m.Name == model.AlertNameLabel && m.Type == silencepb.Matcher_EQUAL {
			ev.Alertname = m.Pattern
		}
	}
	data := &events.EventData{EventType: &events.EventData_SilenceUpdated{SilenceUpdated: &events.SilenceUpdatedEvent{Silence: s}}}
	if outcome == history.OutcomeCreated {
		data = &events.EventData{EventType: &events.EventData_SilenceCreated{SilenceCreated: &events.SilenceCreatedEvent{Silence: s}}}
	}
	if b, err := protojson.Marshal(data); err == nil {
		ev.Details = b
	}
	return ev
}

// groupLabels are the labels of the notification's group, for events
// about a group.
func groupLabels(ctx context.Context) map[string]string {
	ls, ok := notify.GroupLabels(ctx)
	if !ok || len(ls) == 0 {
		return nil
	}
	out := make(map[string]string, len(ls))
	for k, v := range ls {
		out[string(k)] = string(v)
	}
	return out
}

// recordAction puts an action applied from a Slack message in the
// history: an acknowledgement, its end by unack, a silence or its end.
func (a *slackActions) recordAction(ctx context.Context, p press, res actionResult) {
	h := a.n.opts.History
	if h == nil {
		return
	}
	ev := history.Event{Time: time.Now(), GroupKey: res.ref.GroupKey, Receiver: res.ref.Receiver, Integration: "slack", User: p.userName}
	if ev.User == "" {
		ev.User = p.userID
	}
	d := map[string]string{"action": p.action, "slack_user": p.userID, "slack_channel": p.channelID, "slack_ts": p.messageTS}
	switch p.action {
	case ActionAck:
		ev.Type, ev.Outcome = history.TypeAck, history.OutcomeAcknowledged
	case ActionUnack:
		ev.Type, ev.Outcome = history.TypeAck, history.OutcomeEnded
		d["reason"] = "unacknowledged"
	default:
		return // silences are recorded from the silences they create and expire
	}
	ev.Details = history.Details(d)
	h.Record(ev)
	fctx, cancel := context.WithTimeout(ctx, historyFlushTimeout)
	defer cancel()
	_ = h.Flush(fctx)
}
