package backtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"
)

// Run replays the selected alerting rules over [From, To] and reports what
// they would have done. A rule whose query fails is reported with its
// Error; Run returns an error only when nothing can be replayed (invalid
// options, unreadable rule files, a canceled context).
func Run(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	specs, err := load(&opts)
	if err != nil {
		return nil, err
	}
	var extURL *url.URL
	if opts.ExternalURL != "" {
		if extURL, err = url.Parse(opts.ExternalURL); err != nil {
			return nil, fmt.Errorf("backtest: external url: %w", err)
		}
	}
	src := &Counting{Source: opts.Source}
	r := &runner{opts: &opts, src: src, extURL: extURL, metrics: promrules.NewGroupMetrics(nil)}
	rep := &Report{
		From: opts.From, To: opts.To, FlapWindow: Duration(opts.FlapWindow),
		Grouping: GroupingReport{
			GroupBy: []string{"alertname"}, GroupWait: Duration(opts.Grouping.GroupWait),
			GroupInterval: Duration(opts.Grouping.GroupInterval), RepeatInterval: Duration(opts.Grouping.RepeatInterval),
			SendResolved: !opts.Grouping.NoResolved,
		},
	}
	plans := make([]plan, len(specs))
	for i, s := range specs {
		plans[i] = r.plan(s)
		r.total += plans[i].queries
	}
	data := r.fetchAll(ctx, specs, plans)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, s := range specs {
		rr, evals := r.replay(ctx, s, plans[i], data[i])
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rr.Evaluations = evals
		rep.Evaluations += evals
		rep.Rules = append(rep.Rules, rr)
	}
	rep.Queries = src.Count()
	r.mu.Lock()
	opts.Progress(r.done, r.done)
	r.mu.Unlock()
	return rep, nil
}

type runner struct {
	opts    *Options
	src     *Counting
	extURL  *url.URL
	metrics *promrules.Metrics

	mu    sync.Mutex // guards total, done and calls of Progress
	total int        // queries planned
	done  int        // queries sent
}

// fetched is what the range queries of one rule returned.
type fetched struct {
	mat, chart promql.Matrix
	err        error // the rule's query failed
	chartErr   error
}

// fetchAll runs the rules' range queries, Options.Parallel at a time.
func (r *runner) fetchAll(ctx context.Context, specs []*ruleSpec, plans []plan) []fetched {
	out := make([]fetched, len(specs))
	sem := make(chan struct{}, r.opts.Parallel)
	var wg sync.WaitGroup
	for i, s := range specs {
		p := plans[i]
		if p.n == 0 {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return out
		}
		wg.Go(func() {
			defer func() { <-sem }()
			f := &out[i]
			start := p.first.Add(-s.queryOffset)
			f.mat, f.err = r.query(ctx, s.expr.String(), start, p.n, s.interval)
			if f.err != nil {
				r.skip(p)
				return
			}
			if r.opts.Charts {
				chartExpr := s.expr.String()
				if s.threshold != nil {
					chartExpr = s.threshold.LHS
				}
				f.chart, f.chartErr = r.query(ctx, chartExpr, start, p.chartN, p.chartStep)
			}
		})
	}
	wg.Wait()
	return out
}

// plan is where one rule is evaluated: n steps from first.
type plan struct {
	first     time.Time
	n         int
	chartStep time.Duration
	chartN    int
	queries   int
}

func (r *runner) chunks(n int) int { return (n + r.opts.MaxPoints - 1) / r.opts.MaxPoints }

// plan places the evaluations in the slots Prometheus gives the group (its
// hash-derived offset within the interval), so that the replay evaluates
// at the instants the live engine does.
func (r *runner) plan(s *ruleSpec) plan {
	g := promrules.NewGroup(promrules.GroupOptions{
		Name: s.group, File: s.file, Interval: s.interval,
		Opts: &promrules.ManagerOptions{Metrics: r.metrics},
	})
	first := g.EvalTimestamp(r.opts.From.UnixNano())
	if first.Before(r.opts.From) {
		first = first.Add(s.interval)
	}
	p := plan{first: first}
	if !first.After(r.opts.To) {
		p.n = int(r.opts.To.Sub(first)/s.interval) + 1
	}
	p.queries = r.chunks(p.n)
	if r.opts.Charts && p.n > 0 {
		span := r.opts.To.Sub(first)
		p.chartStep = max(s.interval, (span / time.Duration(r.opts.ChartPoints)).Truncate(time.Second))
		p.chartN = int(span/p.chartStep) + 1
		p.queries += r.chunks(p.chartN)
	}
	return p
}

// query runs expr at n steps from start, split into range queries of at
// most MaxPoints points, and merges the results by series.
func (r *runner) query(ctx context.Context, expr string, start time.Time, n int, step time.Duration) (promql.Matrix, error) {
	var (
		out   promql.Matrix
		index = map[uint64]int{}
	)
	for i := 0; i < n; i += r.opts.MaxPoints {
		m := min(r.opts.MaxPoints, n-i)
		s := start.Add(time.Duration(i) * step)
		e := s.Add(time.Duration(m-1) * step)
		mat, err := r.src.QueryRange(ctx, expr, s, e, step)
		r.mu.Lock()
		r.done++
		r.opts.Progress(r.done, r.total)
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
		for _, ser := range mat {
			h := ser.Metric.Hash()
			if j, ok := index[h]; ok {
				out[j].Floats = append(out[j].Floats, ser.Floats...)
				continue
			}
			index[h] = len(out)
			out = append(out, promql.Series{Metric: ser.Metric, Floats: ser.Floats})
		}
	}
	return out, nil
}

// replay evaluates one rule over its plan with Prometheus's AlertingRule.
func (r *runner) replay(ctx context.Context, s *ruleSpec, p plan, f fetched) (*RuleReport, int) {
	exprStr := s.expr.String()
	rr := &RuleReport{
		Name: s.name, Group: s.group, File: s.file, Expr: exprStr,
		Interval: Duration(s.interval), For: Duration(s.hold), KeepFiringFor: Duration(s.keep),
		Threshold: s.threshold,
	}
	if p.n == 0 {
		return rr, 0
	}
	queryStart := p.first.Add(-s.queryOffset)
	if f.err != nil {
		rr.Error = f.err.Error()
		return rr, 0
	}
	mat := f.mat
	ar := promrules.NewAlertingRule(s.name, s.expr, s.hold, s.keep, s.lbls, s.annots,
		r.opts.ExternalLabels, r.opts.ExternalURL, true, r.opts.Logger)
	steps := newStepper(mat, queryStart, s.interval)
	var current promql.Vector
	qf := func(_ context.Context, q string, _ time.Time) (promql.Vector, error) {
		if q == exprStr {
			return current, nil
		}
		// A template's own query: backtest does not replay those; the
		// annotation sees an empty result.
		return nil, nil
	}
	tr := newTracker()
	for k := range p.n {
		ts := p.first.Add(time.Duration(k) * s.interval)
		current = steps.at(k)
		if _, err := ar.Eval(ctx, s.queryOffset, ts, qf, r.extURL, s.limit); err != nil {
			if errors.Is(err, context.Canceled) {
				return rr, k
			}
			rr.EvalErrors++
			r.opts.Logger.Debug("evaluation failed", "rule", s.name, "ts", ts, "err", err)
		}
		tr.observe(ar, ts)
	}
	tr.finish(r.opts.To)
	rr.Firing, rr.Pending = tr.firing, tr.pending
	summarise(rr, r.opts)

	if r.opts.Charts {
		if f.chartErr != nil {
			rr.Error = fmt.Sprintf("chart query: %v", f.chartErr)
		} else {
			chartExpr := exprStr
			if s.threshold != nil {
				chartExpr = s.threshold.LHS
			}
			rr.Chart = newChart(chartExpr, f.chart, s.queryOffset, r.opts.ChartSeries)
		}
	}
	return rr, p.n
}

// skip drops a failed rule's chart queries from the progress total.
func (r *runner) skip(p plan) {
	if r.opts.Charts {
		r.mu.Lock()
		r.total -= r.chunks(p.chartN)
		r.mu.Unlock()
	}
}

// stepper serves each step's slice of a range result as the vector an
// instant query at that step returns.
type stepper struct {
	mat   promql.Matrix
	cur   []int
	start int64
	step  int64
}

func newStepper(mat promql.Matrix, start time.Time, step time.Duration) *stepper {
	return &stepper{mat: mat, cur: make([]int, len(mat)), start: start.UnixMilli(), step: step.Milliseconds()}
}

// at returns the samples at step k; calls must have increasing k. A point
// counts for the step it is nearest to (some query frontends align the
// range to the step).
func (s *stepper) at(k int) promql.Vector {
	ts := s.start + int64(k)*s.step
	half := s.step / 2
	var v promql.Vector
	for i, ser := range s.mat {
		j := s.cur[i]
		for j < len(ser.Floats) && ser.Floats[j].T < ts-half {
			j++
		}
		s.cur[i] = j
		if j < len(ser.Floats) && ser.Floats[j].T < ts+max(half, 1) {
			v = append(v, promql.Sample{Metric: ser.Metric, T: ts, F: ser.Floats[j].F})
		}
	}
	return v
}

// tracker follows each label set through pending and firing.
type tracker struct {
	open    map[uint64]*track
	firing  []Interval
	pending []Interval
}

type track struct {
	lbls  labels.Labels
	state promrules.AlertState
	since time.Time
}

func newTracker() *tracker { return &tracker{open: map[uint64]*track{}} }

func (t *tracker) observe(ar *promrules.AlertingRule, ts time.Time) {
	seen := map[uint64]bool{}
	ar.ForEachActiveAlert(func(a *promrules.Alert) {
		if !a.ResolvedAt.IsZero() || a.State == promrules.StateInactive {
			return
		}
		h := a.Labels.Hash()
		seen[h] = true
		tr, ok := t.open[h]
		switch {
		case !ok && a.State == promrules.StatePending:
			t.open[h] = &track{lbls: a.Labels, state: a.State, since: a.ActiveAt}
		case !ok:
			t.open[h] = &track{lbls: a.Labels, state: a.State, since: a.FiredAt}
		case tr.state == promrules.StatePending && a.State == promrules.StateFiring:
			t.close(tr, a.FiredAt, false)
			tr.state, tr.since = a.State, a.FiredAt
		}
	})
	for h, tr := range t.open {
		if !seen[h] {
			t.close(tr, ts, false)
			delete(t.open, h)
		}
	}
}

func (t *tracker) close(tr *track, end time.Time, open bool) {
	iv := Interval{Labels: tr.lbls.Map(), Start: tr.since, End: end, Duration: Duration(end.Sub(tr.since)), Open: open}
	if tr.state == promrules.StateFiring {
		t.firing = append(t.firing, iv)
	} else {
		t.pending = append(t.pending, iv)
	}
}

func (t *tracker) finish(end time.Time) {
	for h, tr := range t.open {
		t.close(tr, end, true)
		delete(t.open, h)
	}
	sortIntervals(t.firing)
	sortIntervals(t.pending)
}
