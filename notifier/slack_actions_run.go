package notifier

import (
	"github.com/pagedhq/paged/history"

	"context"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"github.com/prometheus/alertmanager/silence"
	"github.com/prometheus/alertmanager/silence/silencepb"
	"github.com/prometheus/common/model"
)

// actionsInterval is how often the notifier looks for group messages
// that do not show their actions yet, and for silences "until resolved"
// whose group has resolved.
const actionsInterval = 10 * time.Second

// untilResolvedGrace: a silence "until resolved" whose group paged does
// not hold is expired only once paged has run this long (the engine has
// sent its alerts again after a restart) and the silence is this old.
const untilResolvedGrace = 5 * time.Minute

// run does, every actionsInterval while interactivity is configured:
//   - edit the messages whose action is on disk but not shown (paged was
//     killed between the two, or the HA peer that applied it was);
//   - expire the silences "until resolved" whose group has resolved.
func (a *slackActions) run(ctx context.Context) {
	started := time.Now()
	every := actionsInterval
	if a.n.opts.actionsInterval > 0 {
		every = a.n.opts.actionsInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c, _ := a.n.currentConfig(); c == nil || c.SlackInteractivity == nil {
			continue
		}
		a.showPending(ctx)
		a.expireResolved(ctx, started)
	}
}

func (n *Notifier) currentConfig() (*Config, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.conf, n.running
}

// pendingActions lists the groups whose message does not show their
// actions yet.
func (a *slackActions) pendingActions() []actionRef {
	var refs []actionRef
	a.n.actionEntries(func(e *nflogpb.Entry) {
		if _, ok := nflog.NewStore(e).GetInt(actPending); ok {
			refs = append(refs, actionRef{Receiver: e.Receiver.GroupName, Idx: int(e.Receiver.Idx), GroupKey: string(e.GroupKey)})
		}
	})
	return refs
}

func (a *slackActions) showPending(ctx context.Context) {
	for _, ref := range a.pendingActions() {
		st := loadActions(a.n.nflog, ref.Receiver, ref.Idx, ref.GroupKey)
		err := a.editMessage(ctx, ref, st.str(actChannel), st.str(actMessageTS))
		if err != nil {
			a.logger.Debug("slack message still does not show its action", "receiver", ref.Receiver, "group", ref.GroupKey, "err", err)
			continue
		}
		a.logger.Info("slack message now shows the action applied before", "receiver", ref.Receiver, "group", ref.GroupKey)
	}
}

// expireResolved expires the silences "until resolved" whose group has
// no firing alert left. Both peers of a pair do it; the second finds it
// expired.
//
// The silence mutes its group's resolution too, and the dispatcher drops
// a group once its resolution went through the pipeline, muted or not:
// the group is then gone moments after it resolved. So when paged does
// not hold the group, the alerts paged holds decide: one the silence
// matches that fires keeps it, a resolved one and none firing ends it.
// Only when paged holds no alert the silence matches (none sent since a
// restart) does the grace apply.
func (a *slackActions) expireResolved(ctx context.Context, started time.Time) {
	sils, _, err := a.n.silences.Query(ctx, silence.QState(silence.SilenceStateActive))
	if err != nil {
		return
	}
	now := time.Now()
	for _, s := range sils {
		if s.Annotations[silenceAnnotationUntilResol] != "true" {
			continue
		}
		receiver, gkey := s.Annotations[silenceAnnotationReceiver], s.Annotations[silenceAnnotationGroup]
		g := a.n.liveGroup(ctx, receiver, gkey)
		if g != nil && groupFiring(g, now) {
			continue
		}
		var matched []*alert.Alert
		if g == nil {
			var firing bool
			matched, firing = a.silencedAlerts(ctx, s.Id, now)
			switch {
			case firing:
				continue
			case len(matched) == 0 && (now.Sub(started) < untilResolvedGrace || now.Sub(s.StartsAt.AsTime()) < untilResolvedGrace):
				continue
			}
		}
		if err := a.n.silences.Expire(ctx, s.Id); err != nil {
			continue // expired by the peer meanwhile, or gone
		}
		a.logger.Info("silence from Slack expired: its group resolved", "silence", s.Id, "receiver", receiver, "group", gkey)
		a.n.recordSilence(ctx, s.Id, history.OutcomeExpired)
		idx, ok := a.silenceMessage(receiver, gkey)
		if !ok {
			continue
		}
		ref := actionRef{Receiver: receiver, Idx: idx, GroupKey: gkey}
		var err error
		switch {
		case g != nil:
			err = a.editMessage(ctx, ref, "", "")
		case len(matched) > 0:
			// The resolution went through muted, and may never be sent
			// now that the silence is over: the message's entry expires
			// twice the repeat_interval after its last notification,
			// which a long silence outlasts. The message is brought to
			// it here.
			err = a.editResolved(ctx, ref, silenceLabels(s), matched)
		}
		if err != nil {
			a.logger.Warn("slack message not edited after its silence ended with the group", "receiver", receiver, "group", gkey, "err", err)
		}
	}
}

// silencedAlerts returns the alerts paged holds that silence id matches,
// and whether one of them is firing.
func (a *slackActions) silencedAlerts(ctx context.Context, id string, now time.Time) (matched []*alert.Alert, firing bool) {
	it := a.n.alerts.GetPending()
	defer it.Close()
	for pa := range it.Next() {
		if pa == nil || pa.Data == nil {
			continue
		}
		if _, err := a.n.silences.QueryOne(ctx, silence.QIDs(id), silence.QMatches(pa.Data.Labels)); err != nil {
			continue
		}
		matched = append(matched, pa.Data)
		if !pa.Data.ResolvedAt(now) {
			firing = true
		}
	}
	return matched, firing
}

// silenceLabels are the labels a silence from a message matches on (its
// group's labels: groupSilence).
func silenceLabels(s *silencepb.Silence) model.LabelSet {
	ls := model.LabelSet{}
	for _, set := range s.MatcherSets {
		for _, m := range set.Matchers {
			if m.Type == silencepb.Matcher_EQUAL {
				ls[model.LabelName(m.Name)] = model.LabelValue(m.Pattern)
			}
		}
	}
	return ls
}

// silenceMessage finds which slack_configs entry's message a silence came
// from: the entry whose actions record it.
func (a *slackActions) silenceMessage(receiver, gkey string) (int, bool) {
	c, _ := a.n.currentConfig()
	if c == nil {
		return 0, false
	}
	r, ok := c.Receiver(receiver)
	if !ok {
		return 0, false
	}
	for i := range r.SlackConfigs {
		if loadActions(a.n.nflog, receiver, i, gkey).str(actSilenceID) != "" {
			return i, true
		}
	}
	return 0, false
}
