package engine

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/rules"
)

// ruleState is what paged tracks per rule on top of Prometheus's state.
type ruleState struct {
	stale      bool
	staleSince time.Time
	failures   int // consecutive evaluations whose query failed
	lastErr    error
	staleSent  map[uint64]time.Time // alert hash -> last stale send
}

// groupState is what paged tracks per group.
type groupState struct {
	plan        *groupPlan // the definitions of the rules paged took over
	prime       sync.Once  // restores the stored state (restore.go)
	catchUpFrom time.Time  // the stored state's last evaluation, until the first one of this run
}

// RuleStatus is paged's view of one rule's datasource health.
type RuleStatus struct {
	// Stale is set while the rule's query fails: its alerts keep their
	// last state and are sent with Stale set.
	Stale bool
	// StaleSince is the evaluation time of the first failed query.
	StaleSince time.Time
	// ConsecutiveFailures counts the failed evaluations in a row.
	ConsecutiveFailures int
	// LastError is the last query error (a *DatasourceError), nil when
	// the last query succeeded.
	LastError error
}

// RuleStatus returns the datasource health of a rule of RuleGroups().
func (e *Engine) RuleStatus(r promrules.Rule) RuleStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs, ok := e.rules[r]
	if !ok {
		return RuleStatus{}
	}
	return RuleStatus{Stale: rs.stale, StaleSince: rs.staleSince, ConsecutiveFailures: rs.failures, LastError: rs.lastErr}
}

// query is the rules manager's QueryFunc: it calls the datasource,
// classifies failures and counts them. For a rule whose labels and
// annotations paged took over, it turns the result into the alerts' label
// sets and keeps the samples (ruledef.go).
func (e *Engine) query(ctx context.Context, q string, ts time.Time) (promql.Vector, error) {
	var def *ruleDef
	it := iterationFrom(ctx)
	if it != nil {
		def = it.match(ctx, q)
	}
	if def != nil && e.opts.CombineQueries {
		if v, ok := e.fromCombined(ctx, it, def, ts); ok {
			if err := e.fresh.check(ctx, e.opts.Datasource, q, ts); err != nil {
				return nil, err
			}
			return it.capture(def, v), nil
		}
	}
	v, err := e.opts.Datasource.Query(ctx, q, ts)
	if def != nil {
		it.noteOwnQuery(def, err)
	}
	if err == nil {
		e.answered.Store(true)
		e.metrics.queries.WithLabelValues("success").Inc()
		if err := e.fresh.check(ctx, e.opts.Datasource, q, ts); err != nil {
			return nil, err // after an outage (fresh.go)
		}
		if def != nil {
			v = it.capture(def, v)
		}
		return v, nil
	}
	de := asDatasourceError(err)
	if ctx.Err() != nil {
		return nil, de // shutting down: not the datasource's fault
	}
	e.metrics.queries.WithLabelValues(de.Kind.String()).Inc()
	if de.Kind == KindQuery {
		e.answered.Store(true)
	} else {
		e.mu.Lock()
		e.lastDSErr = de.Err.Error()
		e.mu.Unlock()
	}
	return nil, de
}

// iterate is the groups' evaluation function: restore (the first time),
// Prometheus's own evaluation, paged's stale handling; then the changed
// state is written, and only then do the notifications go out.
func (e *Engine) iterate(ctx context.Context, g *promrules.Group, ts time.Time) {
	slot, now := ts, time.Now()
	ph := iterPhases{start: now, last: now}
	if e.align != nil {
		var ok bool
		if ts, ok = e.align.before(ctx, g, ts); !ok {
			return
		}
	}
	ph.mark(&ph.wait)
	var learn func()
	if e.align != nil {
		learn = e.align.ask(ctx, g, ts)
	}
	e.primeGroup(ctx, g)
	if err := e.catchUp(ctx, g, ts); err != nil {
		e.logger.Warn("replaying missed evaluations stopped; restored state kept", "group", g.Name(), "err", err)
	}
	it := &iteration{plan: e.planFor(g), ts: ts, interval: g.Interval()}
	ictx := withIteration(ctx, it)
	promrules.DefaultEvalIterationFunc(ictx, g, ts)
	if ctx.Err() == nil {
		if it.plan != nil {
			it.plan.combined.settle(ctx, it.combined, e.logger)
		}
		e.afterEval(ictx, g, it.plan, ts)
	}
	ph.mark(&ph.eval)
	e.persist(g, it, ts)
	ph.mark(&ph.persist)
	e.recordHistory(ctx, it.events)
	if ctx.Err() == nil && len(it.outbox) > 0 {
		e.opts.Notify(ctx, it.outbox)
	}
	ph.mark(&ph.notify)
	if learn != nil {
		learn()
	}
	ph.mark(&ph.align)
	// The group's next slot is one interval after this one; an iteration
	// that ends two intervals after its slot makes Prometheus's loop skip
	// the next one (prometheus_rule_group_iterations_missed_total).
	if time.Since(slot) >= 2*g.Interval() && ctx.Err() == nil {
		e.logger.Warn("group evaluation ran past its next slot; an evaluation is skipped",
			"group", g.Name(), "interval", g.Interval(), "late", ph.start.Sub(slot).Round(time.Millisecond),
			"aligned_wait", ph.wait, "evaluation", ph.eval, "state_write", ph.persist, "hand_over", ph.notify, "alignment_query", ph.align)
	}
}

// iterPhases times the parts of one iteration.
type iterPhases struct {
	start, last                        time.Time
	wait, eval, persist, notify, align time.Duration
}

// mark sets d to the time since the previous mark (or the start).
func (p *iterPhases) mark(d *time.Duration) {
	now := time.Now()
	*d = now.Sub(p.last).Round(time.Millisecond)
	p.last = now
}

// persist writes what the evaluation at ts changed in g's alerts and
// waits until it is on disk. A write failure is reported by the store
// (and retried); paging goes on from memory.
func (e *Engine) persist(g *promrules.Group, it *iteration, ts time.Time) {
	var trans *[]transition
	if e.opts.History != nil {
		trans = new([]transition)
	}
	key := promrules.GroupKey(g.File(), g.Name())
	seq, changed := e.state.commit(key, ts, alertSources(g, it.plan), trans)
	if trans != nil && len(*trans) > 0 {
		e.mu.Lock()
		ext := e.extLabels
		e.mu.Unlock()
		it.events = append(it.events, transitionEvents(*trans, ext, ts, g.Name())...)
	}
	if changed {
		if err := e.state.log.Wait(seq); err != nil {
			e.logger.Debug("alert state not written", "group", g.Name(), "err", err)
		}
	}
}

// afterEval keeps the alerts of rules whose query failed: Prometheus's
// group returns before sending them, so a receiver would let them expire
// (resolve). paged re-sends them, flagged stale, and tracks the
// datasource's health.
func (e *Engine) afterEval(ctx context.Context, g *promrules.Group, plan *groupPlan, ts time.Time) {
	var (
		answered, unanswered int
		stale                []staleAlert
		down                 []*rules.Alert
		events               []history.Event
	)
	e.mu.Lock()
	ext := e.extLabels
	for i, r := range g.Rules() {
		rs := e.rules[r]
		if rs == nil {
			rs = &ruleState{}
			e.rules[r] = rs
		}
		err := r.LastError()
		kind, failed := errorKindOf(err)
		if !failed {
			// Success, or an error that is not the query's (limit,
			// duplicate label sets, local append): Prometheus semantics.
			answered++
			if rs.stale {
				if ar, ok := r.(*promrules.AlertingRule); ok && e.opts.History != nil {
					events = append(events, staleEvents(history.TypeFresh, ar, ext, ts, g.Name(), "")...)
				}
				*rs = ruleState{}
			}
			continue
		}
		if kind == KindUnavailable {
			unanswered++
		} else {
			answered++
		}
		if !rs.stale {
			rs.stale, rs.staleSince, rs.staleSent = true, ts, map[uint64]time.Time{}
			if ar, ok := r.(*promrules.AlertingRule); ok && e.opts.History != nil {
				events = append(events, staleEvents(history.TypeStale, ar, ext, ts, g.Name(), err.Error())...)
			}
		}
		rs.failures++
		rs.lastErr = err
		if ar, ok := r.(*promrules.AlertingRule); ok {
			if kind == KindUnavailable && len(ar.ActiveAlerts()) > 0 {
				e.fresh.hold(ar.Query())
			}
			stale = append(stale, e.staleAlertsLocked(ar, plan.def(i, r), rs, ts, g.Interval(), ext)...)
		}
	}
	wasDown := e.health.down
	down = e.updateHealthLocked(promrules.GroupKey(g.File(), g.Name()), answered, unanswered, ts, g.Interval(), ext)
	health := healthRecord{down: e.health.down, downSince: e.health.downSince, lastSent: e.health.lastSent}
	if e.health.down != wasDown && e.opts.History != nil {
		events = append(events, e.datasourceEventLocked(ts, g.Name()))
	}
	e.mu.Unlock()
	if it := iterationFrom(ctx); it != nil {
		it.events = append(it.events, events...)
	} else {
		e.recordHistory(ctx, events)
	}
	if err := e.state.setHealth(health); err != nil {
		e.logger.Debug("datasource health not written", "err", err)
	}

	if len(stale) > 0 {
		out := make([]*rules.Alert, len(stale))
		for i, s := range stale {
			if s.def != nil && s.alert != nil {
				// Expanded when it was last sent: the query failed, so
				// there is no new sample.
				s.out.Annotations = e.x.annotations(ctx, s.def, s.alert)
			}
			out[i] = s.out
		}
		e.metrics.staleSent.Add(float64(len(out)))
		e.deliver(ctx, out)
	}
	if len(down) > 0 {
		e.deliver(ctx, down)
	}
}

// staleAlert is an alert to re-send stale; alert and def are set when its
// annotations are still to be filled in.
type staleAlert struct {
	out   *rules.Alert
	alert *promrules.Alert
	def   *ruleDef
}

// staleAlertsLocked returns the rule's firing alerts that are due to be
// re-sent while its query fails, and updates their send times so that the
// first successful evaluation re-sends them without the stale flag. def is
// the rule's definition when paged took it over.
func (e *Engine) staleAlertsLocked(ar *promrules.AlertingRule, def *ruleDef, rs *ruleState, ts time.Time, interval time.Duration, ext labels.Labels) []staleAlert {
	var out []staleAlert
	delta := max(interval, e.opts.ResendDelay)
	expr := ar.Query().String()
	ar.ForEachActiveAlert(func(a *promrules.Alert) {
		if a.State != promrules.StateFiring || !a.ResolvedAt.IsZero() {
			return
		}
		var ann labels.Labels
		if def == nil {
			ann = a.Annotations.Copy()
		}
		n := e.toAlert(a, expr, ext, true, ann)
		h := n.Labels.Hash()
		if last, ok := rs.staleSent[h]; ok && !last.Add(e.opts.ResendDelay).Before(ts) {
			return
		}
		rs.staleSent[h] = ts
		a.LastSentAt = time.Time{}
		a.ValidUntil = ts.Add(4 * delta)
		n.EndsAt = a.ValidUntil
		sa := staleAlert{out: n}
		if def != nil {
			c := *a
			c.Labels = a.Labels.Copy()
			sa.alert, sa.def = &c, def
		}
		out = append(out, sa)
	})
	return out
}
