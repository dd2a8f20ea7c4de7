package engine

import (
	"context"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/util/strutil"

	"github.com/pagedhq/paged/rules"
)

// toAlert converts a Prometheus alert to the notifier's type: external
// labels added (the alert's own labels win, as in Prometheus's notifier),
// StartsAt the firing time, EndsAt the resolve time or the time until
// which the alert is valid, annotations as given.
func (e *Engine) toAlert(a *promrules.Alert, expr string, ext labels.Labels, stale bool, annotations labels.Labels) *rules.Alert {
	lset := a.Labels
	if !ext.IsEmpty() {
		b := labels.NewBuilder(a.Labels)
		ext.Range(func(l labels.Label) {
			if !a.Labels.Has(l.Name) {
				b.Set(l.Name, l.Value)
			}
		})
		lset = b.Labels()
	}
	out := &rules.Alert{
		Labels:       lset.Copy(),
		Annotations:  annotations,
		StartsAt:     a.FiredAt,
		EndsAt:       a.ValidUntil,
		GeneratorURL: e.generatorURL(expr),
		Stale:        stale,
	}
	if !a.ResolvedAt.IsZero() {
		out.EndsAt = a.ResolvedAt
	}
	return out
}

// generatorURL is the link to the expression's graph.
func (e *Engine) generatorURL(expr string) string {
	if e.opts.GeneratorURL != nil {
		return e.opts.GeneratorURL(expr)
	}
	return e.opts.GeneratorBaseURL + strutil.TableLinkForExpression(expr)
}

// notifyFromRules is the rules manager's NotifyFunc. Prometheus calls it
// after each successful evaluation of an alerting rule with the alerts due
// to be sent (possibly none).
func (e *Engine) notifyFromRules(ctx context.Context, expr string, alerts ...*promrules.Alert) {
	// The rule whose evaluation just succeeded is the one whose query ran
	// last: record its samples, whether or not an alert is due.
	var def *ruleDef
	if it := iterationFrom(ctx); it != nil && it.current != nil && it.current.query == expr {
		def = it.current
		def.samples.commit(def, it.batch, it.ts, it.interval)
		it.current, it.batch = nil, nil
	}
	if len(alerts) == 0 {
		return
	}
	e.mu.Lock()
	ext := e.extLabels
	e.mu.Unlock()
	out := make([]*rules.Alert, 0, len(alerts))
	for _, a := range alerts {
		var ann labels.Labels
		if def != nil {
			ann = e.x.annotations(ctx, def, a)
		} else {
			ann = a.Annotations.Copy()
		}
		out = append(out, e.toAlert(a, expr, ext, false, ann))
	}
	e.deliver(ctx, out)
}

// deliver hands alerts to Options.Notify. During a group's evaluation
// they wait in its outbox until the evaluation's state is on disk
// (iterate).
func (e *Engine) deliver(ctx context.Context, alerts []*rules.Alert) {
	if it := iterationFrom(ctx); it != nil {
		it.outbox = append(it.outbox, alerts...)
		return
	}
	e.opts.Notify(ctx, alerts)
}
