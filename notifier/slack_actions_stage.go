package notifier

import (
	"github.com/pagedhq/paged/history"

	"context"
	"log/slog"
	"time"

	"github.com/prometheus/alertmanager/alert"
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
		if e != nil && sameSet(firing, e.FiringAlerts) {
			// Nothing changed since the message: a repeat.
			s.acts.suppressed.Inc()
			l.Debug("repeat notification held back: the group is acknowledged", "group", gkey)
			return ctx, nil, nil
		}
		return ctx, out, nil // some alerts resolved: the message shows it
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
