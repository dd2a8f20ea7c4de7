package engine

import (
	"context"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"

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
	aligned bool // activeAt re-aligned after Prometheus's restore
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
// classifies failures and counts them.
func (e *Engine) query(ctx context.Context, q string, ts time.Time) (promql.Vector, error) {
	v, err := e.opts.Datasource.Query(ctx, q, ts)
	if err == nil {
		e.answered.Store(true)
		e.metrics.queries.WithLabelValues("success").Inc()
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

// iterate is the groups' evaluation function: Prometheus's own, then
// paged's re-alignment of restored alerts and its stale handling.
func (e *Engine) iterate(ctx context.Context, g *promrules.Group, ts time.Time) {
	promrules.DefaultEvalIterationFunc(ctx, g, ts)
	if ctx.Err() != nil {
		return
	}
	e.realign(ctx, g, ts)
	e.afterEval(ctx, g, ts)
}

// afterEval keeps the alerts of rules whose query failed: Prometheus's
// group returns before sending them, so a receiver would let them expire
// (resolve). paged re-sends them, flagged stale, and tracks the
// datasource's health.
func (e *Engine) afterEval(ctx context.Context, g *promrules.Group, ts time.Time) {
	var (
		answered, unanswered int
		stale                []*rules.Alert
		down                 []*rules.Alert
	)
	e.mu.Lock()
	ext := e.extLabels
	for _, r := range g.Rules() {
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
		}
		rs.failures++
		rs.lastErr = err
		if ar, ok := r.(*promrules.AlertingRule); ok {
			stale = append(stale, e.staleAlertsLocked(ar, rs, ts, g.Interval(), ext)...)
		}
	}
	down = e.updateHealthLocked(promrules.GroupKey(g.File(), g.Name()), answered, unanswered, ts, g.Interval(), ext)
	e.mu.Unlock()

	if len(stale) > 0 {
		e.metrics.staleSent.Add(float64(len(stale)))
		e.deliver(ctx, stale, ts)
	}
	if len(down) > 0 {
		e.deliver(ctx, down, ts)
	}
	e.sent.prune(ts)
	if err := e.sent.flushDue(ts); err != nil {
		e.logger.Warn("saving sent log failed", "err", err)
	}
}

// staleAlertsLocked returns the rule's firing alerts that are due to be
// re-sent while its query fails, and updates their send times so that the
// first successful evaluation re-sends them without the stale flag.
func (e *Engine) staleAlertsLocked(ar *promrules.AlertingRule, rs *ruleState, ts time.Time, interval time.Duration, ext labels.Labels) []*rules.Alert {
	var out []*rules.Alert
	delta := max(interval, e.opts.ResendDelay)
	expr := ar.Query().String()
	seen := map[uint64]bool{}
	ar.ForEachActiveAlert(func(a *promrules.Alert) {
		if a.State != promrules.StateFiring || !a.ResolvedAt.IsZero() {
			return
		}
		n := e.toAlert(a, expr, ext, true)
		h := n.Labels.Hash()
		seen[h] = true
		if last, ok := rs.staleSent[h]; ok && !last.Add(e.opts.ResendDelay).Before(ts) {
			return
		}
		rs.staleSent[h] = ts
		a.LastSentAt = time.Time{}
		a.ValidUntil = ts.Add(4 * delta)
		n.EndsAt = a.ValidUntil
		out = append(out, n)
	})
	// After a restart the rule has no alerts in memory until its query
	// succeeds; the alerts the previous run sent are re-sent from the
	// sent log so that they do not expire at the receiver.
	for _, a := range e.sent.previous(ar, ts) {
		h := a.Labels.Hash()
		if seen[h] {
			continue
		}
		if last, ok := rs.staleSent[h]; ok && !last.Add(e.opts.ResendDelay).Before(ts) {
			continue
		}
		rs.staleSent[h] = ts
		a.EndsAt = ts.Add(4 * delta)
		a.Stale = true
		out = append(out, a)
	}
	return out
}
