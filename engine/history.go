package engine

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
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

// alertDetails are the details of an alert's event, as JSON: since when
// it is active, the error of its rule's query when it went stale, its
// rule group, and its value when it is a number JSON can carry. It writes
// what json.Marshal writes of them in a map (keys sorted), without the
// map, the reflection and their garbage: an evaluation where 10,000
// alerts change state makes 10,000 of them. errText and group are JSON
// strings (json.Marshal of the string), errText nil for none.
func alertDetails(value float64, activeAt time.Time, errText, group []byte) json.RawMessage {
	b := make([]byte, 0, 48+len(errText)+len(group))
	b = append(b, '{')
	if !activeAt.IsZero() {
		b = append(b, `"active_at":"`...)
		b = activeAt.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	if errText != nil {
		b = append(b, `"error":`...)
		b = append(b, errText...)
		b = append(b, ',')
	}
	b = append(b, `"group":`...)
	b = append(b, group...)
	if !math.IsNaN(value) && !math.IsInf(value, 0) {
		b = append(b, `,"value":`...)
		b = appendJSONFloat(b, value)
	}
	return append(b, '}')
}

// appendJSONFloat writes f as encoding/json does: the shortest decimal,
// in exponent form below 1e-6 and from 1e21.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 to e-7
		b = b[:n-1]
	}
	return b
}

// jsonString is s as a JSON string.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

// transitionEvents turns the state changes of a group's evaluation at ts
// into history events.
func transitionEvents(trans []transition, ext labels.Labels, ts time.Time, group string) []history.Event {
	out := make([]history.Event, 0, len(trans))
	g := jsonString(group)
	for _, t := range trans {
		out = append(out, history.Event{
			Time:    ts,
			Type:    t.typ,
			Labels:  withExternal(t.labels, ext),
			Details: alertDetails(t.value, t.activeAt, nil, g),
		})
	}
	return out
}

// staleEvents are the events of a rule's firing alerts when its query
// starts (typ stale) or stops (typ fresh) failing.
func staleEvents(typ string, ar *promrules.AlertingRule, ext labels.Labels, ts time.Time, group, reason string) []history.Event {
	var (
		out     []history.Event
		errText []byte
	)
	g := jsonString(group)
	if reason != "" {
		errText = jsonString(reason)
	}
	ar.ForEachActiveAlert(func(a *promrules.Alert) {
		if a.State != promrules.StateFiring || !a.ResolvedAt.IsZero() {
			return
		}
		out = append(out, history.Event{Time: ts, Type: typ, Labels: withExternal(a.Labels, ext), Details: alertDetails(a.Value, a.ActiveAt, errText, g)})
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
