package notifier

import (
	"github.com/pagedhq/paged/history"

	"context"
	"log/slog"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"github.com/prometheus/alertmanager/notify"
)

// ackStage follows the dedup stage of a Slack integration with buttons.
// While the group is acknowledged it holds back the repeat notifications
// (repeat_interval), which only say again what the message says; a new
// alert in the group, or the group's resolution, ends the
// acknowledgement and goes out, and the message says so.
type ackStage struct {
	next     notify.Stage
	acts     *slackActions
	receiver string
	idx      int
}

func (s ackStage) Exec(ctx context.Context, l *slog.Logger, alerts ...*alert.Alert) (context.Context, []*alert.Alert, error) {
	ctx, out, err := s.next.Exec(ctx, l, alerts...)
	if err != nil || len(out) == 0 || isStaleEdit(ctx) {
		return ctx, out, err
	}
	gkey, ok := notify.GroupKey(ctx)
	if !ok {
		return ctx, out, nil
	}
	now, ok := notify.Now(ctx)
	if !ok {
		now = time.Now()
	}
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	st := loadActions(s.acts.n.nflog, s.receiver, s.idx, gkey)
	if !st.acked() {
		return ctx, out, nil
	}
	firing := firingHashes(out, now)
	end := ""
	switch {
	case len(firing) == 0:
		end = ackEndResolved
	case !subset(firing, st.firing):
		end = ackEndNewAlert
	}
	if end == "" {
		e := slackEntry(s.acts.n.nflog, s.receiver, s.idx, gkey)
		switch {
		case e == nil:
			// The message's entry expired (paged was down for longer than
			// it lives): what would go out says again what the message
			// says.
		case sameSet(firing, e.FiringAlerts):
			// Nothing changed since the message: a repeat. Its entry
			// lives twice the repeat_interval and a held repeat writes
			// none, so it is written again, as it is: an acknowledgement
			// that outlasts it keeps holding, and the message its record.
			s.keep(ctx, l, gkey, e)
		default:
			return ctx, out, nil // some alerts resolved: the message shows it
		}
		s.acts.suppressed.Inc()
		l.Debug("repeat notification held back: the group is acknowledged", "group", gkey)
		return ctx, nil, nil
	}
	st.store.SetStr(actAckEnd, end)
	if err := s.acts.writeActions(actionRef{Receiver: s.receiver, Idx: s.idx, GroupKey: gkey}, st.store, st.firing); err != nil {
		l.Warn("end of acknowledgement kept in memory only; the write is retried", "group", gkey, "err", err)
	}
	s.acts.logger.Info("slack acknowledgement ended", "receiver", s.receiver, "group", gkey, "reason", end, "user", st.str(actAckUser))
	s.acts.n.opts.History.Record(history.Event{Time: now, Type: history.TypeAck, Outcome: history.OutcomeEnded,
		GroupKey: gkey, Receiver: s.receiver, Integration: "slack", User: st.str(actAckName),
		Labels:  groupLabels(ctx),
		Details: history.Details(map[string]string{"reason": end, "acknowledged_by": st.str(actAckUser)})})
	return ctx, out, nil
}

// keep writes the message's notification log entry again as it is, with
// the expiry the notify pipeline gives it (SetNotifiesStage).
func (s ackStage) keep(ctx context.Context, l *slog.Logger, gkey string, e *nflogpb.Entry) {
	repeat, _ := notify.RepeatInterval(ctx)
	if err := s.acts.n.nflog.Log(e.Receiver, gkey, e.FiringAlerts, e.ResolvedAlerts, e.MutedAlerts, nflog.NewStore(e), 2*repeat); err != nil {
		l.Warn("the acknowledged group's message entry not renewed", "group", gkey, "err", err)
	}
}
