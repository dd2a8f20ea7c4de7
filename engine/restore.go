package engine

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/pagedhq/paged/rules"
)

// Restoring alerts after a restart.
//
// Prometheus restores the 'for' state of a group only after its second
// evaluation, from the ALERTS_FOR_STATE series, and shifts pending alerts
// by the time it was down. Until then a firing alert shows as pending
// with a new activeAt, its FiredAt and last send are lost, and a crash in
// that window restores nothing. paged does it differently:
//
//  1. prime: when a group is loaded for the first time in this run, its
//     rules get back the alerts the state store holds for them (state,
//     activeAt, firedAt, resolvedAt, last sent, valid until,
//     keep_firing_since, value; for rules paged took over, the sample).
//     This happens before the group's first evaluation and before the
//     engine reports ready, so the API shows firing alerts as firing.
//  2. catch up: at the group's first evaluation, for a datasource that
//     keeps history (a remote Prometheus), the evaluations paged missed
//     while it was down are replayed through Prometheus's own state
//     machine, from one range query per rule with restored alerts. A
//     condition that held all along keeps its activeAt; one that cleared
//     resolves, and a resolution is sent. The embedded datasource has no
//     data for that time (paged is its scraper): the alerts keep the
//     state they had, as if their conditions had held.
//
// State older than OutageTolerance is not restored.

// HistoryDatasource is a Datasource that can also answer for the past:
// the engine replays the evaluations it missed while it was down.
type HistoryDatasource interface {
	Datasource
	QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error)
}

// maxCatchUpSteps bounds the evaluations replayed per group (Prometheus
// answers at most 11,000 points per series).
const maxCatchUpSteps = 11000

// noRestore is the rules manager's Queryable: Prometheus's own restore
// finds nothing to restore, paged has done it (prime).
var noRestore = storage.QueryableFunc(func(int64, int64) (storage.Querier, error) {
	return storage.NoopQuerier(), nil
})

// primeKind says where a group's alerts come from when it is primed.
type primeKind int

const (
	// primeFromDisk: the group is new to this run and the store has the
	// state the previous run left.
	primeFromDisk primeKind = iota + 1
	// primeReload: a reload replaced the running group. Prometheus's
	// CopyState has moved the alerts over by rule name and labels; for
	// the rules paged took over it sees no labels, so same-named rules
	// may have swapped their alerts: the store, which knows each rule's
	// labels, puts them right.
	primeReload
)

// primeGroup primes g once, if ApplyRules asked for it. Called by
// ApplyRules and by the group's first evaluation, whichever comes first.
func (e *Engine) primeGroup(ctx context.Context, g *promrules.Group) {
	e.mu.Lock()
	gs := e.groupStateLocked(g)
	e.mu.Unlock()
	gs.prime.Do(func() {
		key := promrules.GroupKey(g.File(), g.Name())
		e.mu.Lock()
		kind := e.toPrime[key]
		delete(e.toPrime, key)
		e.mu.Unlock()
		if kind == 0 {
			return
		}
		if from := e.prime(ctx, g, kind, time.Now()); !from.IsZero() && kind == primeFromDisk {
			e.mu.Lock()
			gs.catchUpFrom = from
			e.mu.Unlock()
		}
	})
}

// prime sets the alerts of g's rules to what the store holds for them and
// returns the time of the store's last evaluation of g (zero when nothing
// was restored).
func (e *Engine) prime(ctx context.Context, g *promrules.Group, kind primeKind, now time.Time) time.Time {
	key := promrules.GroupKey(g.File(), g.Name())
	snap := e.state.loaded(key)
	if snap == nil {
		return time.Time{}
	}
	if kind == primeFromDisk && now.Sub(snap.lastEval) > e.opts.OutageTolerance {
		e.logger.Info("alert state older than the outage tolerance not restored", "group", g.Name(), "last_evaluation", snap.lastEval)
		return time.Time{}
	}
	restored := 0
	for _, src := range alertSources(g, e.planFor(g)) {
		stored := snap.rules[src.id]
		if kind == primeFromDisk && len(stored) == 0 {
			continue
		}
		if kind == primeReload && holds(src.rule, stored) {
			continue
		}
		restored += e.primeRule(ctx, src.rule, src.def, stored, snap.lastEval, now)
	}
	if restored == 0 {
		return time.Time{}
	}
	if kind == primeFromDisk {
		e.logger.Info("alerts restored", "group", g.Name(), "alerts", restored, "last_evaluation", snap.lastEval)
	}
	return snap.lastEval
}

// holds reports whether ar's alerts are exactly the stored ones.
func holds(ar *promrules.AlertingRule, stored map[uint64]*storedAlert) bool {
	n, same := 0, true
	ar.ForEachActiveAlert(func(a *promrules.Alert) {
		n++
		if sa := stored[a.Labels.Hash()]; sa == nil || !labels.Equal(sa.labels, a.Labels) {
			same = false
		}
	})
	return same && n == len(stored)
}

// primeRule puts the stored alerts into ar: Prometheus's Eval makes them
// from samples with their label sets (and resolves alerts ar held that
// are not among them), then their state and times are set back.
func (e *Engine) primeRule(ctx context.Context, ar *promrules.AlertingRule, def *ruleDef, stored map[uint64]*storedAlert, lastEval, now time.Time) int {
	vec := make(promql.Vector, 0, len(stored))
	for _, sa := range stored {
		b := labels.NewBuilder(sa.labels)
		b.Del(labels.AlertName)
		vec = append(vec, promql.Sample{Metric: b.Labels(), F: sa.value, T: now.UnixMilli()})
	}
	if _, err := ar.Eval(ctx, 0, now, answer(ar.Query().String(), vec), e.x.extURL, 0); err != nil {
		e.logger.Warn("restoring alerts failed", "alert", ar.Name(), "err", err)
		return 0
	}
	n := 0
	ar.ForEachActiveAlert(func(a *promrules.Alert) {
		sa := stored[a.Labels.Hash()]
		if sa == nil || !labels.Equal(sa.labels, a.Labels) {
			if a.ResolvedAt.Equal(now) || !a.ActiveAt.Equal(now) {
				return // an alert ar held that the store does not: resolved by Eval
			}
			// A templated label expanded to another value than before:
			// not an alert the state had. It goes without ever being
			// sent (resolved, with a last send in the future).
			a.State, a.ResolvedAt, a.LastSentAt = promrules.StateInactive, now, now.Add(24*time.Hour)
			return
		}
		a.State, a.Value = sa.state, sa.value
		a.ActiveAt, a.FiredAt, a.ResolvedAt = sa.activeAt, sa.firedAt, sa.resolvedAt
		a.LastSentAt, a.ValidUntil, a.KeepFiringSince = sa.lastSentAt, sa.validUntil, sa.keepFiringSince
		if def == nil && !sa.annotations.IsEmpty() {
			a.Annotations = sa.annotations
		}
		n++
	})
	if def != nil {
		// The samples, for the annotations (expanded when sent or read).
		def.samples.mu.Lock()
		for h, sa := range stored {
			if _, ok := def.samples.m[h]; !ok {
				def.samples.m[h] = &sampleRecord{metric: sa.metric(), f: sa.value, ts: lastEval, seen: now}
			}
		}
		def.samples.mu.Unlock()
	}
	return n
}

// answer is a QueryFunc that answers expr with v and every other query (a
// template's) with nothing.
func answer(expr string, v promql.Vector) promrules.QueryFunc {
	return func(_ context.Context, q string, _ time.Time) (promql.Vector, error) {
		if q == expr {
			return v, nil
		}
		return promql.Vector{}, nil
	}
}

// catchUpTimeout bounds the replay of missed evaluations at start.
const catchUpTimeout = 30 * time.Second

// catchUpAll replays what paged missed for every restored group, before
// the groups evaluate and before the restored alerts are sent. A
// datasource that does not answer ends it: the restored state stands.
func (e *Engine) catchUpAll(ctx context.Context, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
	defer cancel()
	for _, g := range e.mgr.RuleGroups() {
		if err := e.catchUp(ctx, g, now); err != nil {
			e.logger.Warn("replaying missed evaluations stopped; restored state kept", "err", err)
			e.mu.Lock()
			for _, gs := range e.groups {
				gs.catchUpFrom = time.Time{}
			}
			e.mu.Unlock()
			return
		}
	}
}

// catchUp replays the evaluations of g that paged missed between the
// state's last evaluation and ts, the group's first evaluation in this
// run. Only rules with restored alerts are replayed; a rule whose range
// query is refused keeps its restored state. It returns an error when the
// datasource does not answer.
func (e *Engine) catchUp(ctx context.Context, g *promrules.Group, ts time.Time) error {
	e.mu.Lock()
	gs := e.groupStateLocked(g)
	from := gs.catchUpFrom
	gs.catchUpFrom = time.Time{}
	e.mu.Unlock()
	if from.IsZero() {
		return nil
	}
	hist, ok := e.opts.Datasource.(HistoryDatasource)
	if !ok {
		return nil
	}
	interval, offset := g.Interval(), g.QueryOffset()
	var steps []time.Time
	for t := from.Add(interval); t.Before(ts); t = t.Add(interval) {
		steps = append(steps, t)
		if len(steps) > maxCatchUpSteps {
			e.logger.Warn("too many missed evaluations to replay; restored state kept", "group", g.Name(), "since", from)
			return nil
		}
	}
	if len(steps) == 0 {
		return nil
	}
	plan := e.planFor(g)
	replayed := 0
	for i, r := range g.Rules() {
		ar, ok := r.(*promrules.AlertingRule)
		if !ok || ar.ActiveAlertsCount() == 0 {
			continue
		}
		def := plan.def(i, r)
		start, end := steps[0].Add(-offset), steps[len(steps)-1].Add(-offset)
		m, err := hist.QueryRange(ctx, ar.Query().String(), start, end, interval)
		if err != nil {
			if asDatasourceError(err).Kind == KindUnavailable || ctx.Err() != nil {
				return err
			}
			e.logger.Warn("replaying missed evaluations failed; restored state kept", "alert", ar.Name(), "err", err)
			continue
		}
		byStep := make([]promql.Vector, len(steps))
		add := func(k int, s promql.Sample) {
			if k >= 0 && k < len(steps) {
				byStep[k] = append(byStep[k], s)
			}
		}
		stepMS := float64(interval.Milliseconds())
		sampleOf := map[uint64]labels.Labels{} // alert label hash -> the series' own labels
		for _, series := range m {
			metric := series.Metric
			if def != nil {
				metric = alertLabels(def, metric)
				sampleOf[metric.Hash()] = series.Metric
			}
			for _, p := range series.Floats {
				add(stepIndex(p.T, start, stepMS), promql.Sample{Metric: metric, F: p.F, T: p.T})
			}
			for _, p := range series.Histograms {
				add(stepIndex(p.T, start, stepMS), promql.Sample{Metric: metric, H: p.H, T: p.T})
			}
		}
		q := ar.Query().String()
		for k, st := range steps {
			if _, err := ar.Eval(ctx, offset, st, answer(q, byStep[k]), e.x.extURL, g.Limit()); err != nil {
				e.logger.Warn("replaying a missed evaluation failed", "alert", ar.Name(), "at", st, "err", err)
			}
		}
		if def != nil {
			last := byStep[len(byStep)-1]
			batch := make([]captured, 0, len(last))
			for _, s := range last {
				h := s.Metric.Hash()
				batch = append(batch, captured{hash: h, metric: sampleOf[h], f: s.F, h: s.H})
			}
			def.samples.commit(def, batch, steps[len(steps)-1], interval)
		}
		replayed++
	}
	if replayed > 0 {
		e.logger.Info("missed evaluations replayed", "group", g.Name(), "since", from, "evaluations", len(steps), "rules", replayed)
	}
	return nil
}

func stepIndex(t int64, start time.Time, stepMS float64) int {
	if stepMS <= 0 {
		return 0
	}
	return int(math.Round(float64(t-start.UnixMilli()) / stepMS))
}

// alertLabels is what capture makes of a sample of a rule paged took over:
// the alert's label set.
func alertLabels(def *ruleDef, metric labels.Labels) labels.Labels {
	b := labels.NewBuilder(metric)
	b.Del(labels.MetricName)
	def.labels.Range(func(l labels.Label) { b.Set(l.Name, l.Value) })
	b.Set(labels.AlertName, def.name)
	return b.Labels()
}

// announceRestored sends the restored alerts once, before the first
// evaluation: the firing ones, and the resolved ones Prometheus still
// re-sends (for 15 minutes after they resolve). A notifier that restarted
// with paged holds none of them, and may have lost a notification it had
// not delivered yet. They count as sent (the validity of firing ones
// starts over); the notifier's notification log keeps them from being
// notified twice. A restored PagedDatasourceDown goes too.
func (e *Engine) announceRestored(ctx context.Context, now time.Time) {
	e.mu.Lock()
	ext := e.extLabels
	e.mu.Unlock()
	var out []*rules.Alert
	for _, g := range e.mgr.RuleGroups() {
		plan := e.planFor(g)
		valid := 4 * max(g.Interval(), e.opts.ResendDelay)
		for i, r := range g.Rules() {
			ar, ok := r.(*promrules.AlertingRule)
			if !ok {
				continue
			}
			def := plan.def(i, r)
			var due []*promrules.Alert
			ar.ForEachActiveAlert(func(a *promrules.Alert) {
				resolved := !a.ResolvedAt.IsZero()
				if a.State == promrules.StatePending || a.LastSentAt.After(now) || (!resolved && a.LastSentAt.IsZero()) {
					return // never sent, or never to be sent (primeRule)
				}
				a.LastSentAt = now
				if !resolved {
					a.ValidUntil = now.Add(valid)
				}
				c := *a
				due = append(due, &c)
			})
			expr := ar.Query().String()
			for _, a := range due {
				ann := a.Annotations
				if def != nil {
					ann = e.x.annotations(ctx, def, a)
				}
				out = append(out, e.toAlert(a, expr, ext, false, ann))
			}
		}
	}
	e.mu.Lock()
	if e.health.down {
		a := e.downAlertLocked(now, ext)
		a.EndsAt = now.Add(4 * max(e.opts.EvaluationInterval, e.opts.ResendDelay))
		e.health.lastSent = now
		out = append(out, a)
	}
	e.mu.Unlock()
	if len(out) > 0 {
		e.logger.Info("restored alerts sent", "alerts", len(out))
		e.opts.Notify(ctx, out)
	}
}
