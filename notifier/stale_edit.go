package notifier

import (
	"context"
	"log/slog"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/notify"
)

// A firing group's Slack message says when the datasource is failing
// ("⚠️ datasource failing: state is the last known, not resolved"), but
// an outage changes no alert of the group: the dedup stage sees the same
// firing alerts and lets nothing through until the repeat interval, so the
// message would never show the line, nor lose it when the datasource
// answers again. The stale-edit stage lets a group through once when its
// alerts turn stale and once when they turn fresh, for the integrations
// that can edit the group's message in place (Slack with a bot token and
// update_message), and the Slack notifier then only edits the message.
//
// What the message shows is kept in the notification log's receiver data
// (storeStale, beside the message's timestamp), written with the entry
// after each notification: the next flush compares with it, so each
// transition edits once, however many flushes and evaluations the outage
// lasts, and a restart or an HA peer does not edit again a message that
// already shows the right state.

// storeStale is set in a group's receiver data while its message shows
// the datasource failing.
const storeStale = "slack_stale"

// staleEdits lists the integrations that edit their group's message on a
// stale transition, by receiver and slack_configs index.
type staleEdits struct {
	stale *staleSet
	slack map[string]map[int]bool
	// acts and interactive: the integrations whose messages have action
	// buttons, which an acknowledgement holds back (ackStage).
	acts        *slackActions
	interactive map[string]map[int]bool
}

// wrap returns dedup, followed by the stale check for an integration that
// edits its message.
func (e staleEdits) wrap(receiver string, in *notify.Integration, dedup notify.Stage) notify.Stage {
	if in.Name() != "slack" {
		return dedup
	}
	st := dedup
	if e.stale != nil && e.slack[receiver][in.Index()] {
		st = staleEditStage{dedup: dedup, stale: e.stale}
	}
	if e.acts != nil && e.interactive[receiver][in.Index()] {
		st = ackStage{next: st, acts: e.acts, receiver: receiver, idx: in.Index()}
	}
	return st
}

// staleEditStage runs the dedup stage; when it lets nothing through, it
// lets the group through as a stale-only edit if the group's message shows
// another datasource state than its alerts now have.
type staleEditStage struct {
	dedup notify.Stage
	stale *staleSet
}

func (s staleEditStage) Exec(ctx context.Context, l *slog.Logger, alerts ...*alert.Alert) (context.Context, []*alert.Alert, error) {
	ctx, out, err := s.dedup.Exec(ctx, l, alerts...)
	if err != nil || len(out) > 0 {
		return ctx, out, err // a notification goes out: it renders the state and records it
	}
	store, ok := notify.NflogStore(ctx)
	if !ok || store == nil {
		return ctx, nil, nil
	}
	if ts, _ := store.GetStr(storeTS); ts == "" {
		return ctx, nil, nil // no message to edit
	}
	firing, stale := false, false
	for _, a := range alerts {
		if a.Resolved() {
			continue
		}
		firing = true
		stale = stale || s.stale.get(a.Fingerprint())
	}
	if !firing {
		return ctx, nil, nil
	}
	_, shown := store.GetStr(storeStale)
	if stale == shown {
		return ctx, nil, nil
	}
	return withStaleEdit(ctx), alerts, nil
}

type staleEditKey struct{}

// withStaleEdit marks a notification that only brings the group's message
// up to date with its datasource state.
func withStaleEdit(ctx context.Context) context.Context {
	return context.WithValue(ctx, staleEditKey{}, true)
}

// isStaleEdit reports whether the notification only updates the message's
// datasource state: edit the message, post nothing new.
func isStaleEdit(ctx context.Context) bool {
	v, _ := ctx.Value(staleEditKey{}).(bool)
	return v
}

// recordStale keeps in the receiver data whether the message just sent
// shows the datasource failing.
func recordStale(store *nflog.Store, stale bool) {
	if stale {
		store.SetStr(storeStale, "1")
	} else {
		store.Delete(storeStale)
	}
}
