package engine

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/rules"
)

// Evaluation aligned to the scrape.
//
// Prometheus's rule manager starts each group at a phase derived from a
// hash of its name, so a group evaluates anywhere between two scrapes of
// the targets it reads: on average half a scrape interval after the data
// changed, and up to a whole one. With Options.AlignToScrapes the engine
// learns when the data a group reads arrives and moves the group's
// evaluations to just after it.
//
// Alongside an evaluation at ts, one query asks for the newest sample
// timestamp among the group's selectors (reduced as for the no-series
// check, at most alignMaxSelectors of them):
//
//	max(timestamp(<sel 0>) or timestamp(<sel 1>) or ...)
//
// The age of that sample, ts - query_offset - newest, says how long ago
// the last scrape landed; the evaluation should have come margin after
// it. Three answers in a row that agree (within alignTolerance) move the
// group: each tick of the manager's ticker is delayed by a fixed delay in
// [0, interval), so the evaluations stay one interval apart. A data
// phase that does not repeat at the group's interval (a scrape interval
// that does not divide it, targets that come and go) never agrees, and
// the group keeps its delay. Once three aligned evaluations in a row have
// found fresh data, the query is asked at every tenth evaluation only.
//
// The rules this keeps:
//   - never two evaluations closer than the interval: the delay only
//     grows within a tick; a move to an earlier phase skips one tick and
//     so leaves one gap of less than two intervals;
//   - the evaluation timestamp is the time the group actually evaluates,
//     so `for` is measured between real evaluations and an alert never
//     fires before its `for` has passed;
//   - the margin starts at alignMargin; when the newest sample is older
//     than the margin at an aligned evaluation, the scrape had not landed
//     yet (or its phase moved): the margin doubles, up to a quarter of the
//     interval, and the phase is learned again.
//
// Embedded mode works the same way: its TSDB stamps a sample with the
// time its scrape started and makes it visible when the scrape is
// appended, which is what the margin covers.

const (
	alignMargin       = 100 * time.Millisecond
	alignObservations = 3  // agreeing answers before a move
	alignRecheck      = 10 // evaluations between queries once aligned
	alignMaxSelectors = 20
)

// alignTolerance is how far apart answers may be and still agree.
func alignTolerance(interval time.Duration) time.Duration {
	return max(25*time.Millisecond, interval/100)
}

// aligner holds the learned phase of every group, by group key.
type aligner struct {
	e  *Engine
	mu sync.Mutex
	gs map[string]*groupPhase
}

type groupPhase struct {
	interval  time.Duration
	delay     time.Duration // added to every tick, in [0, interval)
	pending   time.Duration // an earlier delay to take at the next tick, -1: none
	margin    time.Duration
	lastEval  time.Time
	evals     int
	aligned   bool
	settled   int             // aligned evaluations in a row that found fresh data
	obs       []time.Duration // recent wanted delays
	rules     []promrules.Rule
	selectors []string
	query     string
}

func newAligner(e *Engine) *aligner { return &aligner{e: e, gs: map[string]*groupPhase{}} }

// AlignmentStatus is what the engine has learned about a group's phase.
type AlignmentStatus struct {
	// Delay is added to the group's scheduled evaluation times.
	Delay time.Duration
	// Margin is how long after the newest sample the group evaluates.
	Margin time.Duration
	// Aligned is set once the phase of the group's data is known.
	Aligned bool
}

// Alignment returns the evaluation alignment of a group of RuleGroups().
func (e *Engine) Alignment(g *promrules.Group) AlignmentStatus {
	if e.align == nil {
		return AlignmentStatus{}
	}
	e.align.mu.Lock()
	defer e.align.mu.Unlock()
	p := e.align.gs[promrules.GroupKey(g.File(), g.Name())]
	if p == nil {
		return AlignmentStatus{}
	}
	return AlignmentStatus{Delay: p.delay, Margin: p.margin, Aligned: p.aligned}
}

// phase returns the group's state, reset when its interval changed and
// with its selectors refreshed when its rules did.
func (a *aligner) phaseLocked(g *promrules.Group) *groupPhase {
	key := promrules.GroupKey(g.File(), g.Name())
	p := a.gs[key]
	if p == nil || p.interval != g.Interval() {
		p = &groupPhase{interval: g.Interval(), margin: alignMargin, pending: -1}
		a.gs[key] = p
	}
	rs := g.Rules()
	if !slices.Equal(p.rules, rs) {
		p.rules = rs
		p.selectors, p.query = alignQuery(rs)
	}
	return p
}

// alignQuery builds the newest-sample query of a group's rules.
func alignQuery(rs []promrules.Rule) ([]string, string) {
	seen := map[string]bool{}
	var sels []string
	for _, r := range rs {
		var expr parser.Expr
		switch r := r.(type) {
		case *promrules.AlertingRule:
			expr = r.Query()
		case *promrules.RecordingRule:
			expr = r.Query()
		}
		if expr == nil {
			continue
		}
		for _, c := range rules.SeriesChecks(expr, rules.SeriesCheckOptions{}) {
			if c.Skip != "" || seen[c.Checked] || len(sels) == alignMaxSelectors {
				continue
			}
			seen[c.Checked] = true
			sels = append(sels, c.Checked)
		}
	}
	if len(sels) == 0 {
		return nil, ""
	}
	parts := make([]string, len(sels))
	for i, s := range sels {
		parts[i] = "timestamp(" + s + ")"
	}
	return sels, "max(" + strings.Join(parts, " or ") + ")"
}

// before is called at each tick at ts. It waits until the group's
// aligned time and returns it, or returns false when this tick is
// skipped (the delay moves earlier, or ctx ended).
func (a *aligner) before(ctx context.Context, g *promrules.Group, ts time.Time) (time.Time, bool) {
	a.mu.Lock()
	p := a.phaseLocked(g)
	if p.pending >= 0 {
		// An earlier phase: skip this tick, so that the evaluations stay
		// at least an interval apart.
		p.delay, p.pending = p.pending, -1
		a.mu.Unlock()
		return ts, false
	}
	at := ts.Add(p.delay)
	if !p.lastEval.IsZero() && at.Before(p.lastEval.Add(p.interval)) {
		at = p.lastEval.Add(p.interval)
	}
	a.mu.Unlock()
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ts, false
		}
	}
	a.mu.Lock()
	p.lastEval = at
	a.mu.Unlock()
	return at, true
}

// ask starts, alongside the group's evaluation at ts, the query of the
// newest sample when one is due, and returns what waits for its answer
// and learns from it (nil when none is due). The query runs while the
// group evaluates, so that on a slow datasource it does not add its own
// latency to the iteration: an aligned iteration already starts up to an
// interval after its slot, and one that ends two intervals after it makes
// the group skip its next slot.
func (a *aligner) ask(ctx context.Context, g *promrules.Group, ts time.Time) (learn func()) {
	a.mu.Lock()
	p := a.phaseLocked(g)
	p.evals++
	q := p.query
	ask := q != "" && (p.settled < alignObservations || p.evals%alignRecheck == 0)
	a.mu.Unlock()
	if !ask {
		return nil
	}
	qts := ts.Add(-g.QueryOffset())
	type answer struct {
		v   promql.Vector
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := a.e.opts.Datasource.Query(ctx, q, qts)
		ch <- answer{v, err}
	}()
	return func() {
		r := <-ch
		if r.err != nil || len(r.v) != 1 {
			return // no answer, or no data: nothing learned
		}
		newest := time.UnixMilli(int64(r.v[0].F * 1000))
		a.learn(g, p, max(qts.Sub(newest), 0))
	}
}

// learn moves the group's phase after an evaluation found its newest
// sample age old.
func (a *aligner) learn(g *promrules.Group, p *groupPhase, age time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	iv, tol := p.interval, alignTolerance(p.interval)
	if age >= iv+p.margin+tol {
		// Data older than an interval: scraped less often than the group
		// evaluates, or not at all. No phase to align to.
		p.obs = p.obs[:0]
		return
	}
	if p.aligned && age > p.margin+tol {
		// An aligned evaluation found no fresh sample: the scrape lands
		// later than the margin (or its phase moved). A wider margin, and
		// the phase learned again.
		p.margin = min(2*p.margin, max(iv/4, alignMargin))
		p.aligned, p.settled = false, 0
		p.obs = p.obs[:0]
	}
	if p.aligned && age <= p.margin+tol {
		p.settled++
	}
	want := mod(p.delay-age+p.margin, iv)
	p.obs = append(p.obs, want)
	if len(p.obs) > alignObservations {
		p.obs = p.obs[1:]
	}
	if len(p.obs) < alignObservations || !agree(p.obs, iv, tol) {
		return
	}
	p.aligned = true
	if circDist(want, p.delay, iv) <= min(tol, p.margin/2) {
		return
	}
	p.settled = 0
	if want > p.delay {
		p.delay = want
	} else {
		p.pending = want
	}
	p.obs = p.obs[:0]
	a.e.logger.Debug("group evaluation aligned to its data", "group", g.Name(), "delay", p.delay, "pending", p.pending, "margin", p.margin, "age", age)
}

// forget drops the phases of groups that are no longer loaded.
func (a *aligner) forget(keep map[string]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.gs {
		if !keep[k] {
			delete(a.gs, k)
		}
	}
}

func mod(d, m time.Duration) time.Duration {
	d %= m
	if d < 0 {
		d += m
	}
	return d
}

// circDist is the distance between two phases of a cycle of length m.
func circDist(a, b, m time.Duration) time.Duration {
	d := mod(a-b, m)
	return min(d, m-d)
}

func agree(obs []time.Duration, m, tol time.Duration) bool {
	for i := range obs {
		for j := i + 1; j < len(obs); j++ {
			if circDist(obs[i], obs[j], m) > tol {
				return false
			}
		}
	}
	return true
}
