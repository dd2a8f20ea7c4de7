package engine

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/history"
)

// HistoryRecorder receives what the engine saw happen: alerts' changes of
// state, alerts going stale and fresh, the datasource's outages. It is a
// *history.Store; Flush returns once what was recorded is written.
type HistoryRecorder interface {
	Record(events ...history.Event)
	Flush(ctx context.Context) error
}

// historyFlushTimeout bounds how long an evaluation waits for its events
// to be written before its notifications go out anyway.
const historyFlushTimeout = 5 * time.Second

// withExternal adds the external labels an alert lacks, as notifications
// get them, so that the history's fingerprints are the notifier's.
func withExternal(ls, ext labels.Labels) map[string]string {
	m := ls.Map()
	ext.Range(func(l labels.Label) {
		if _, ok := m[l.Name]; !ok {
			m[l.Name] = l.Value
		}
	})
	return m
}

// alertDetails are the details of an alert's event: its value (when it
// is a number JSON can carry) and since when it is active.
func alertDetails(value float64, activeAt time.Time, group string) map[string]any {
	d := map[string]any{"group": group}
	if !math.IsNaN(value) && !math.IsInf(value, 0) {
		d["value"] = value
	}
	if !activeAt.IsZero() {
		d["active_at"] = activeAt.UTC().Format(time.RFC3339Nano)
	}
	return d
}

// transitionEvents turns the state changes of a group's evaluation at ts
// into history events.
func transitionEvents(trans []transition, ext labels.Labels, ts time.Time, group string) []history.Event {
	out := make([]history.Event, 0, len(trans))
	for _, t := range trans {
		out = append(out, history.Event{
			Time:    ts,
			Type:    t.typ,
			Labels:  withExternal(t.labels, ext),
			Details: history.Details(alertDetails(t.value, t.activeAt, group)),
		})
	}
	return out
}

// staleEvents are the events of a rule's firing alerts when its query
// starts (typ stale) or stops (typ fresh) failing.
func staleEvents(typ string, ar *promrules.AlertingRule, ext labels.Labels, ts time.Time, group, reason string) []history.Event {
	var out []history.Event
	ar.ForEachActiveAlert(func(a *promrules.Alert) {
		if a.State != promrules.StateFiring || !a.ResolvedAt.IsZero() {
			return
		}
		d := alertDetails(a.Value, a.ActiveAt, group)
		if reason != "" {
			d["error"] = reason
		}
		out = append(out, history.Event{Time: ts, Type: typ, Labels: withExternal(a.Labels, ext), Details: history.Details(d)})
	})
	return out
}

// recordHistory hands an evaluation's events to the history and waits
// until they are written, so that what its notifications say is in the
// history before they go out. A history that cannot be written delays
// them by historyFlushTimeout at most.
func (e *Engine) recordHistory(ctx context.Context, events []history.Event) {
	if len(events) == 0 || e.opts.History == nil {
		return
	}
	e.opts.History.Record(events...)
	ctx, cancel := context.WithTimeout(ctx, historyFlushTimeout)
	defer cancel()
	if err := e.opts.History.Flush(ctx); err != nil {
		e.logger.Debug("history not written before the notifications", "events", len(events), "err", err)
	}
}

// datasourceEventLocked is the event of the datasource going down or
// answering again, after updateHealthLocked changed it.
func (e *Engine) datasourceEventLocked(ts time.Time, group string) history.Event {
	d := map[string]any{"datasource": e.opts.DatasourceName, "group": group}
	outcome := history.OutcomeUp
	if e.health.down {
		outcome = history.OutcomeDown
		d["failed_evaluations"] = e.health.maxFailures()
		if e.lastDSErr != "" {
			d["error"] = e.lastDSErr
		}
	} else {
		d["down_since"] = e.health.downSince.UTC().Format(time.RFC3339Nano)
	}
	return history.Event{Time: ts, Type: history.TypeDatasource, Outcome: outcome, Details: history.Details(d)}
}
