package notifier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/common/model"
	"github.com/slack-go/slack"
)

// actionsView is what a group's message shows of its actions: a status
// line per acknowledgement and silence, and the buttons that act.
type actionsView struct {
	value    string // the buttons' value (actionRef.encode)
	lastTS   string // the newest press the view shows (last_action_ts)
	status   []string
	acked    bool
	silenced bool
}

// view reads a group's actions for its message. resolved: the group has
// no firing alert left.
func (a *slackActions) view(ctx context.Context, receiver string, idx int, gkey string, now time.Time) *actionsView {
	v := &actionsView{value: actionRef{Receiver: receiver, Idx: idx, GroupKey: gkey}.encode()}
	st := loadActions(a.n.nflog, receiver, idx, gkey)
	v.lastTS = st.str(actLastTS)
	if u := st.str(actAckUser); u != "" {
		at := slackDate(st.ackAt())
		switch st.str(actAckEnd) {
		case "":
			v.acked = true
			v.status = append(v.status, fmt.Sprintf("👀 Acknowledged by <@%s> at %s", u, at))
		case ackEndUnack:
			v.status = append(v.status, fmt.Sprintf("👀 Acknowledgement by <@%s> (%s) withdrawn by <@%s>", u, at, st.str(actAckEndBy)))
		case ackEndNewAlert:
			v.status = append(v.status, fmt.Sprintf("👀 Acknowledgement by <@%s> (%s) ended: a new alert joined the group", u, at))
		case ackEndResolved:
			v.status = append(v.status, fmt.Sprintf("👀 Acknowledged by <@%s> at %s · ended: the group resolved", u, at))
		}
	}
	if sil := a.n.silenceByID(ctx, st.str(actSilenceID)); sil != nil {
		u := st.str(actSilenceUser)
		untilResolved := sil.Annotations[silenceAnnotationUntilResol] == "true"
		switch {
		case silenceActive(sil, now) && untilResolved:
			v.silenced = true
			v.status = append(v.status, fmt.Sprintf("🔕 Silenced by <@%s> until the group resolves", u))
		case silenceActive(sil, now):
			v.silenced = true
			v.status = append(v.status, fmt.Sprintf("🔕 Silenced by <@%s> until %s", u, slackDate(sil.EndsAt.AsTime())))
		case st.str(actSilenceEnd) != "":
			v.status = append(v.status, fmt.Sprintf("🔕 Silence by <@%s> lifted by <@%s>", u, st.str(actSilenceEnd)))
		case untilResolved:
			v.status = append(v.status, fmt.Sprintf("🔕 Silence by <@%s> ended: the group resolved", u))
		default:
			v.status = append(v.status, fmt.Sprintf("🔕 Silence by <@%s> ended at %s", u, slackDate(sil.EndsAt.AsTime())))
		}
	}
	return v
}

// slackDate is a time Slack shows in each reader's own time zone, with
// the UTC time as the fallback for clients that cannot.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{time}|%s UTC>", t.Unix(), t.UTC().Format("15:04"))
}

// actionBlocks are the status line and the buttons of a group's message.
// firing: the group has a firing alert (a resolved group gets no
// buttons but Unsilence, while a silence from Slack still holds).
func actionBlocks(v *actionsView, firing bool) []slack.Block {
	var blocks []slack.Block
	if len(v.status) > 0 {
		var els []slack.MixedElement
		for _, s := range v.status {
			els = append(els, slack.NewTextBlockObject(slack.MarkdownType, truncate(s, slackMaxSectionText), false, false))
		}
		blocks = append(blocks, slack.NewContextBlock(statusBlockID, els...))
	}
	if v.value == "" {
		return blocks // the group key is too long for a button: links only
	}
	button := func(id, label string) *slack.ButtonBlockElement {
		b := slack.NewButtonBlockElement(id, v.value, slack.NewTextBlockObject(slack.PlainTextType, label, true, false))
		return b
	}
	var els []slack.BlockElement
	if firing {
		if v.acked {
			els = append(els, button(ActionUnack, "Unacknowledge"))
		} else {
			b := button(ActionAck, "👀 Acknowledge")
			b.Style = slack.StylePrimary
			els = append(els, b)
		}
	}
	switch {
	case v.silenced:
		els = append(els, button(ActionUnsilence, "🔔 Unsilence"))
	case firing:
		els = append(els,
			button(ActionSilence1h, "🔕 Silence 1h"),
			button(ActionSilence4h, "4h"),
			button(ActionSilence24h, "24h"),
			button(ActionSilenceUntilResolved, "Until resolved"),
		)
	}
	if len(els) > 0 {
		blocks = append(blocks, slack.NewActionBlock(actionsBlockID, els...))
	}
	return blocks
}

// editMessage brings a group's message up to date with its actions. The
// message is the one the notification log knows for the group, or the
// one pressed.
func (a *slackActions) editMessage(ctx context.Context, ref actionRef, channel, ts string) error {
	s := a.n.slackNotifierFor(ref.Receiver, ref.Idx)
	if s == nil {
		return errors.New("the slack_configs entry is gone")
	}
	if e := slackEntry(a.n.nflog, ref.Receiver, ref.Idx, ref.GroupKey); e != nil {
		st := nflog.NewStore(e)
		if c, _ := st.GetStr(storeChannel); c != "" {
			channel = c
		}
		if t, _ := st.GetStr(storeTS); t != "" {
			ts = t
		}
	}
	if channel == "" || ts == "" {
		return errors.New("no message known for the group")
	}
	g := a.n.liveGroup(ctx, ref.Receiver, ref.GroupKey)
	if g == nil {
		return errors.New("the group is not held (yet)")
	}
	return a.renderEdit(ctx, s, ref, channel, ts, g.Labels, g.Alerts)
}

// editResolved brings the message of a group paged no longer holds up to
// date: its alerts, resolved, are given. The message is the one the
// notification log knows, else the one the group's last action was on.
func (a *slackActions) editResolved(ctx context.Context, ref actionRef, labels model.LabelSet, alerts []*alert.Alert) error {
	s := a.n.slackNotifierFor(ref.Receiver, ref.Idx)
	if s == nil {
		return errors.New("the slack_configs entry is gone")
	}
	st := loadActions(a.n.nflog, ref.Receiver, ref.Idx, ref.GroupKey)
	channel, ts := st.str(actChannel), st.str(actMessageTS)
	if e := slackEntry(a.n.nflog, ref.Receiver, ref.Idx, ref.GroupKey); e != nil {
		st := nflog.NewStore(e)
		if t, _ := st.GetStr(storeTS); t != "" {
			channel, _ = st.GetStr(storeChannel)
			ts = t
		}
	}
	if channel == "" || ts == "" {
		return errors.New("no message known for the group")
	}
	return a.renderEdit(ctx, s, ref, channel, ts, labels, alerts)
}

// renderEdit renders the group's message from its alerts and actions and
// edits it.
func (a *slackActions) renderEdit(ctx context.Context, s *slackNotifier, ref actionRef, channel, ts string, labels model.LabelSet, alerts []*alert.Alert) error {
	rctx := notify.WithReceiverName(ctx, ref.Receiver)
	rctx = notify.WithGroupKey(rctx, ref.GroupKey)
	rctx = notify.WithGroupLabels(rctx, labels)
	rctx = notify.WithNow(rctx, time.Now())
	// Not a notification: the message is only brought up to date.
	rctx = notify.WithNotificationReason(rctx, notify.ReasonUnknown)
	_, msg, err := s.render(rctx, alerts)
	if err != nil {
		return err
	}
	api, err := botAPI(s.conf, a.n.opts.Transport)
	if err != nil {
		return err
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...)); err != nil {
		return fmt.Errorf("chat.update: %w", err)
	}
	return a.clearPending(ref)
}

// clearPending records that the message shows the group's actions.
func (a *slackActions) clearPending(ref actionRef) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := loadActions(a.n.nflog, ref.Receiver, ref.Idx, ref.GroupKey)
	if _, ok := st.store.GetInt(actPending); !ok {
		return nil
	}
	st.store.Delete(actPending)
	return a.writeActions(ref, st.store, st.firing)
}

// recheck edits a group's message again when a press was applied while
// a notification rendered it: the notification may have overwritten the
// press's own edit with the state before it.
func (a *slackActions) recheck(receiver string, idx int, gkey, shown string) {
	st := loadActions(a.n.nflog, receiver, idx, gkey)
	if st.str(actLastTS) == shown {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(a.n.baseCtx(), 30*time.Second)
		defer cancel()
		ref := actionRef{Receiver: receiver, Idx: idx, GroupKey: gkey}
		if err := a.editMessage(ctx, ref, st.str(actChannel), st.str(actMessageTS)); err != nil {
			a.logger.Debug("slack message not brought up to date after a notification", "group", gkey, "err", err)
		}
	}()
}
