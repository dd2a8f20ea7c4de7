package ruletest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

// groupRun is one test group about to run.
type groupRun struct {
	file         *File
	group        *TestGroup
	evalInterval time.Duration
	order        map[string]int
	ruleFiles    []string
	result       *GroupResult
	// capture, when set, collects the firing alerts at one time (AlertsAt).
	capture *capture
}

func (g *groupRun) fail(pos Pos, kind, msg string) {
	g.result.Failures = append(g.result.Failures, Failure{Pos: pos, Kind: kind, Message: msg})
}

// namePrefix is promtool's "    name: N,\n" line for named groups.
func (g *groupRun) namePrefix() string {
	if g.group.Name == "" {
		return ""
	}
	return fmt.Sprintf("    name: %s,\n", g.group.Name)
}

// group runs one test group: it loads the input series lazily, evaluates
// every rule group at each evaluation interval up to the last eval_time,
// checks the alert cases at their times, then runs the PromQL cases. The
// returned error is only for cancellation; test failures go to g.result.
func (r *runner) group(ctx context.Context, g groupRun, debug io.Writer) error {
	tg := g.group
	interval := tg.Interval
	if interval == 0 {
		interval = g.file.EvaluationInterval
	}
	if interval == 0 {
		interval = time.Minute
	}
	p := r.opts.Parser

	// The expanding notation makes a few bytes into any number of samples;
	// refuse absurd counts before the loader allocates them.
	total := 0
	for _, s := range tg.InputSeries {
		n, ok := expandedSamples(s.Values)
		total += n
		if !ok || total > MaxSamplesPerGroup {
			g.fail(s.Pos, "input_series", fmt.Sprintf("    input series expand to more than %d samples in this test group", MaxSamplesPerGroup))
			return nil
		}
	}

	suite, err := promqltest.NewLazyLoader(loadCommand(interval, tg.InputSeries), promqltest.LazyLoaderOpts{
		EnableAtModifier:     !r.opts.DisableAtModifier,
		EnableNegativeOffset: !r.opts.DisableNegativeOffset,
		StartTime:            tg.StartTimestamp,
		Parser:               p,
	})
	if err != nil {
		pos, kind := tg.Pos, "input_series"
		for _, s := range tg.InputSeries {
			if _, _, serr := p.ParseSeriesDesc(s.Series + " " + s.Values); serr != nil {
				pos = s.Pos
				break
			}
		}
		g.fail(pos, kind, "    "+err.Error())
		return nil
	}
	defer func() {
		if err := suite.Close(); err != nil {
			g.fail(tg.Pos, "", "    "+err.Error())
		}
	}()
	suite.SubqueryInterval = g.evalInterval

	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:    rules.EngineQueryFunc(suite.QueryEngine(), suite.Storage()),
		AppendableV2: suite.Storage(),
		Context:      ctx,
		NotifyFunc:   func(context.Context, string, ...*rules.Alert) {},
		Logger:       slog.New(slog.DiscardHandler),
		GroupLoader:  r.rules,
		Parser:       p,
	})
	groupsMap, errs := m.LoadGroups(interval, tg.ExternalLabels, tg.ExternalURL, nil, r.opts.IgnoreUnknownFields, g.ruleFiles...)
	if errs != nil {
		for _, err := range errs {
			g.fail(tg.Pos, "rule_files", "    "+err.Error())
		}
		return nil
	}
	groups := orderGroups(groupsMap, g.order, g.ruleFiles)
	for _, rg := range groups {
		for _, rule := range rg.Rules() {
			if ar, ok := rule.(*rules.AlertingRule); ok {
				// As promtool: restored, so ALERTS exists from the first evaluation.
				ar.SetRestored(true)
			}
		}
	}

	mint := time.Unix(0, 0).UTC()
	if !tg.StartTimestamp.IsZero() {
		mint = tg.StartTimestamp
	}
	maxt := mint.Add(tg.maxEvalTime())
	if g.capture != nil {
		maxt = mint.Add(max(tg.maxEvalTime(), g.capture.evalTime))
	}

	for _, c := range tg.AlertRuleTests {
		if c.Alertname == "" {
			where := ""
			if tg.Name != "" {
				where = fmt.Sprintf(" (in TestGroup %s)", tg.Name)
			}
			g.fail(c.Pos, "alert_rule_test", fmt.Sprintf("    an item under alert_rule_test misses required attribute alertname at eval_time %v%s",
				model.Duration(c.EvalTime), where))
			return nil
		}
	}
	// Alert cases sorted by eval_time; each is checked after the evaluation
	// at the last ts <= eval_time.
	cases := slices.Clone(tg.AlertRuleTests)
	slices.SortStableFunc(cases, func(a, b AlertTestCase) int { return cmp.Compare(a.EvalTime, b.EvalTime) })
	next := 0

	for ts := mint; !ts.After(maxt); ts = ts.Add(g.evalInterval) {
		if err := ctx.Err(); err != nil {
			return err
		}
		var evalErrs []string
		suite.WithSamplesTill(ts, func(err error) {
			if err != nil {
				g.fail(tg.Pos, "input_series", "    "+err.Error())
				return
			}
			for _, rg := range groups {
				rg.Eval(ctx, ts)
				for _, rule := range rg.Rules() {
					if err := rule.LastError(); err != nil {
						evalErrs = append(evalErrs, fmt.Sprintf("    rule: %s, time: %s, err: %v",
							rule.Name(), ts.Sub(time.Unix(0, 0).UTC()), err))
					}
				}
			}
		})
		if len(evalErrs) > 0 {
			for _, e := range evalErrs {
				g.fail(tg.Pos, "rule evaluation", e)
			}
			return nil
		}
		for next < len(cases) && ts.Sub(mint) <= cases[next].EvalTime && cases[next].EvalTime < ts.Add(g.evalInterval).Sub(mint) {
			r.checkAlerts(&g, groups, cases[next])
			next++
		}
		if c := g.capture; c != nil && ts.Sub(mint) <= c.evalTime && c.evalTime < ts.Add(g.evalInterval).Sub(mint) {
			c.collect(groups)
		}
		if ts.Equal(maxt) {
			break
		}
	}

	for _, c := range tg.PromQLTests {
		r.checkPromQL(ctx, &g, suite, mint, c)
	}
	if r.opts.Debug {
		r.debugDump(debug, &g, suite, mint)
	}
	return nil
}

// MaxSamplesPerGroup bounds the input samples of one test group (about
// 115 days of 1s samples), so a hostile `1x100000000000` fails cleanly
// instead of exhausting memory.
const MaxSamplesPerGroup = 10_000_000

var repeatSuffix = regexp.MustCompile(`x(\d+)$`)

// expandedSamples counts the samples a values string expands to; false when
// a repeat count does not even fit in an int.
func expandedSamples(values string) (int, bool) {
	n := 0
	for _, tok := range strings.Fields(values) {
		m := repeatSuffix.FindStringSubmatch(tok)
		if m == nil {
			n++
			continue
		}
		k, err := strconv.Atoi(m[1])
		if err != nil || k > MaxSamplesPerGroup {
			return n, false
		}
		n += k + 1
	}
	return n, true
}

// loadCommand renders the input series as a promqltest "load" command.
func loadCommand(interval time.Duration, series []Series) string {
	var b strings.Builder
	fmt.Fprintf(&b, "load %v\n", model.Duration(interval))
	for _, s := range series {
		fmt.Fprintf(&b, "  %s %s\n", s.Series, s.Values)
	}
	return b.String()
}

// orderGroups puts groups listed in group_eval_order in that order. Groups not
// listed share rank 0 with the first listed group, as in promtool; among
// equals the order is the rule files' order, so a run is deterministic.
func orderGroups(m map[string]*rules.Group, order map[string]int, files []string) []*rules.Group {
	fileIdx := map[string]int{}
	for i, f := range files {
		if _, ok := fileIdx[f]; !ok {
			fileIdx[f] = i
		}
	}
	groups := make([]*rules.Group, 0, len(m))
	for _, g := range m {
		groups = append(groups, g)
	}
	// The map loses the order of groups inside a file; GroupKey order within
	// a file is by name, which keeps runs reproducible.
	slices.SortFunc(groups, func(a, b *rules.Group) int {
		if c := cmp.Compare(order[a.Name()], order[b.Name()]); c != 0 {
			return c
		}
		if c := cmp.Compare(fileIdx[a.File()], fileIdx[b.File()]); c != 0 {
			return c
		}
		return strings.Compare(a.Name(), b.Name())
	})
	return groups
}

// activeAlerts collects the alerts of every rule named name in the given state.
func activeAlerts(groups []*rules.Group, name string, state rules.AlertState) []alertInstance {
	var out []alertInstance
	for _, g := range groups {
		for _, rule := range g.Rules() {
			ar, ok := rule.(*rules.AlertingRule)
			if !ok || ar.Name() != name {
				continue
			}
			for _, a := range ar.ActiveAlerts() {
				if a.State == state {
					out = append(out, alertInstance{Labels: a.Labels.Copy(), Annotations: a.Annotations.Copy()})
				}
			}
		}
	}
	return out
}

func expectedAlerts(alertname string, exp []ExpAlert) []alertInstance {
	var out []alertInstance
	for _, a := range exp {
		lm := make(map[string]string, len(a.Labels)+1)
		for k, v := range a.Labels {
			lm[k] = v
		}
		lm[labels.AlertName] = alertname
		out = append(out, alertInstance{Labels: labels.FromMap(lm), Annotations: labels.FromMap(a.Annotations)})
	}
	return out
}

// checkAlerts compares one alert_rule_test case; only a case that passes
// counts towards coverage (a failing case proves nothing about the rule).
func (r *runner) checkAlerts(g *groupRun, groups []*rules.Group, c AlertTestCase) {
	ok := r.compareAlerts(g, c, "alert_rule_test", "", expectedAlerts(c.Alertname, c.ExpAlerts), activeAlerts(groups, c.Alertname, rules.StateFiring))
	if c.HasPending {
		ok = r.compareAlerts(g, c, "alert_rule_test exp_pending_alerts", "pending ", expectedAlerts(c.Alertname, c.ExpPendingAlerts), activeAlerts(groups, c.Alertname, rules.StatePending)) && ok
	}
	if ok {
		r.cov.record(g.ruleFiles, c.Alertname, len(c.ExpAlerts) > 0, CaseRef{Pos: c.Pos, Group: g.result.Name})
	}
}

func (r *runner) compareAlerts(g *groupRun, c AlertTestCase, kind, what string, exp, got []alertInstance) bool {
	sortAlerts(exp)
	sortAlerts(got)
	if alertsEqual(exp, got) {
		return true
	}
	head := fmt.Sprintf("%s    %salertname: %s, time: %s, ", g.namePrefix(), what, c.Alertname, model.Duration(c.EvalTime))
	if r.opts.Diff {
		g.fail(c.Pos, kind, head+"\n        diff (- expected, + got):\n            "+
			indent(LineDiff(alertLines(exp), alertLines(got)), "            "))
		return false
	}
	g.fail(c.Pos, kind, head+"\n        exp:"+indent(alertsText(exp), "            ")+
		", \n        got:"+indent(alertsText(got), "            "))
	return false
}

func (r *runner) checkPromQL(ctx context.Context, g *groupRun, suite *promqltest.LazyLoader, mint time.Time, c PromQLTestCase) {
	const kind = "promql_expr_test"
	head := fmt.Sprintf("    expr: %q, time: %s", c.Expr, model.Duration(c.EvalTime))
	got, err := instantQuery(ctx, suite, c.Expr, mint.Add(c.EvalTime))
	if err != nil {
		g.fail(c.Pos, kind, head+", err: "+err.Error())
		return
	}
	var exp []sample
	for _, s := range c.ExpSamples {
		lb, err := r.opts.Parser.ParseMetric(s.Labels)
		var h *histogram.FloatHistogram
		if err == nil && s.Histogram != "" {
			h, err = r.parseHistogram(s.Histogram)
		}
		if err != nil {
			g.fail(s.Pos, kind, fmt.Sprintf("%s, err: labels %q: %v", head, s.Labels, err))
			return
		}
		exp = append(exp, sample{Labels: lb, Value: s.Value, Histogram: promqltest.HistogramTestExpression(h)})
	}
	sortSamples(exp)
	sortSamples(got)
	if samplesEqual(exp, got, g.file.FuzzyCompare) {
		return
	}
	if r.opts.Diff {
		g.fail(c.Pos, kind, head+",\n        diff (- expected, + got):\n            "+
			indent(LineDiff(sampleLines(exp), sampleLines(got)), "            "))
		return
	}
	g.fail(c.Pos, kind, fmt.Sprintf("%s,\n        exp: %v\n        got: %v", head, samplesText(exp), samplesText(got)))
}

func (r *runner) parseHistogram(s string) (*histogram.FloatHistogram, error) {
	_, values, err := r.opts.Parser.ParseSeriesDesc("{} " + s)
	switch {
	case err != nil:
		return nil, err
	case len(values) != 1:
		return nil, fmt.Errorf("expected 1 value, got %d", len(values))
	case values[0].Histogram == nil:
		return nil, fmt.Errorf("expected histogram, got %v", values[0])
	}
	return values[0].Histogram, nil
}

// instantQuery evaluates expr at t; a scalar becomes one sample without labels.
func instantQuery(ctx context.Context, suite *promqltest.LazyLoader, expr string, t time.Time) ([]sample, error) {
	q, err := suite.QueryEngine().NewInstantQuery(ctx, suite.Queryable(), nil, expr, t)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return nil, res.Err
	}
	switch v := res.Value.(type) {
	case promql.Vector:
		out := make([]sample, 0, len(v))
		for _, s := range v {
			out = append(out, sample{Labels: s.Metric.Copy(), Value: s.F, Histogram: promqltest.HistogramTestExpression(s.H)})
		}
		return out, nil
	case promql.Scalar:
		return []sample{{Labels: labels.EmptyLabels(), Value: v.V}}, nil
	}
	return nil, errors.New("rule result is not a vector or scalar")
}

// debugDump prints every series (input and recorded) up to the last eval time.
func (r *runner) debugDump(w io.Writer, g *groupRun, suite *promqltest.LazyLoader, mint time.Time) {
	// PromQL ranges are whole milliseconds; round up to the next second.
	end := (g.group.maxEvalTime() + time.Second).Truncate(time.Second)
	// The range is left-open (Prometheus 3), so widen it by 1ms to keep the
	// samples at the start time in the dump.
	expr := fmt.Sprintf(`{__name__=~".+"}[%v]`, model.Duration(end+time.Millisecond))
	q, err := suite.QueryEngine().NewInstantQuery(context.Background(), suite.Queryable(), nil, expr, mint.Add(end))
	if err != nil {
		fmt.Fprintf(w, "DEBUG: Failed querying, expr: %q, err: %v\n", expr, err)
		return
	}
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		fmt.Fprintf(w, "DEBUG: Failed query exec, expr: %q, err: %v\n", expr, res.Err)
		return
	}
	if mat, ok := res.Value.(promql.Matrix); ok {
		fmt.Fprintf(w, "DEBUG: Dump of all data (input_series and rules) at %v:\n", end)
		fmt.Fprintln(w, mat.String())
		return
	}
	fmt.Fprintf(w, "DEBUG: Got unexpected type %T\n", res.Value)
}
