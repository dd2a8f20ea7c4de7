package engine

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/model/timestamp"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/template"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/rules"
)

// Templates cost more than queries.
//
// Prometheus's AlertingRule expands every label and annotation template of
// every active alert at every evaluation, and each expansion builds a new
// function map and parses the template again (about 40µs on a 2-vCPU Xeon,
// static text included). With thousands of alerts that is most of the
// engine's CPU, several times what sending the queries costs. paged hands
// the rules manager each alerting rule whose labels are all static without
// its labels and annotations, and puts them back itself:
//
//   - Labels. The query function adds the rule's labels to each sample of
//     the rule's query result (and drops __name__), so the samples Prometheus
//     sees are already the alerts' label sets: the same identities, the same
//     duplicate detection, the same ALERTS_FOR_STATE series as when
//     Prometheus sets the labels itself.
//   - Annotations. The query function keeps each sample as the query
//     returned it. Annotations are expanded, with Prometheus's own template
//     code and data ($labels is the sample's metric, $value its value, query
//     runs at that evaluation's time), when the alert is sent or read
//     through the API, and kept until the sample changes. Pending alerts are
//     never sent, and a firing alert is re-sent once per resend delay, not
//     at every evaluation. Text without "{{" is its own expansion.
//
// A rule with a templated label, or a label named __name__, is handed over
// unchanged: Prometheus expands it as usual.

// ruleDef is an alerting rule as written, for a rule whose labels and
// annotations paged took over.
type ruleDef struct {
	name        string
	query       string        // the parsed expression as Prometheus prints it
	labels      labels.Labels // group and rule labels, all static
	annotations labels.Labels // templates
	usesQuery   bool          // an annotation may call query: not cached across evaluations
	keep        time.Duration // keep_firing_for
	ext         map[string]string
	samples     *sampleStore
	member      int // position in the group's combined query; -1 if none
}

// sampleStore keeps, per alert (label set hash), the sample that last
// produced it. It outlives reloads that keep the rule.
type sampleStore struct {
	mu sync.Mutex
	m  map[uint64]*sampleRecord
}

type sampleRecord struct {
	metric labels.Labels // the sample's labels as the query returned them
	f      float64
	h      *histogram.FloatHistogram
	ts     time.Time // the evaluation that produced the sample
	seen   time.Time // the last evaluation whose result held it

	ann    labels.Labels // annotations expanded from this sample
	annDef *ruleDef      // with these templates; nil until expanded
}

// captured is one sample of a rule's query result, waiting for the rule's
// evaluation to succeed.
type captured struct {
	hash   uint64
	metric labels.Labels
	f      float64
	h      *histogram.FloatHistogram
}

// groupPlan lists the definitions of a group's rules by position: nil for
// recording rules and for rules handed over unchanged.
type groupPlan struct {
	defs     []*ruleDef
	combined *combined // nil when no two rules can share a query (combine.go)
}

// def returns the definition of the group's rule at position i, if paged
// took that rule over and it is still that rule.
func (p *groupPlan) def(i int, r promrules.Rule) *ruleDef {
	if p == nil || i < 0 || i >= len(p.defs) {
		return nil
	}
	d := p.defs[i]
	if d == nil || d.name != r.Name() || !r.Labels().IsEmpty() {
		return nil
	}
	return d
}

// rulePlan is one set of rule files, split: what the rules manager loads,
// and what paged keeps.
type rulePlan struct {
	manager map[string]*rulefmt.RuleGroups // by file
	groups  map[string]*groupPlan          // by promrules.GroupKey
}

// storeKey identifies a rule across reloads the way Prometheus's
// Group.CopyState matches rules: the group, the name and, among rules of
// that name, the position. A taken-over rule has no labels for Prometheus,
// so the name alone is its key there.
type storeKey struct {
	group, name string
	nth         int
}

// split builds the plan of the parsed files. Sample stores of rules that
// match one of old (the plan running until now) carry over.
func split(files []string, parsed map[string]*rulefmt.RuleGroups, p parser.Parser, ext labels.Labels, old map[storeKey]*sampleStore) (*rulePlan, map[storeKey]*sampleStore, error) {
	plan := &rulePlan{manager: map[string]*rulefmt.RuleGroups{}, groups: map[string]*groupPlan{}}
	stores := map[storeKey]*sampleStore{}
	extMap := ext.Map()
	for _, file := range files {
		rgs := parsed[file]
		out := &rulefmt.RuleGroups{Groups: make([]rulefmt.RuleGroup, len(rgs.Groups))}
		for gi, rg := range rgs.Groups {
			key := promrules.GroupKey(file, rg.Name)
			gp := &groupPlan{defs: make([]*ruleDef, len(rg.Rules))}
			exprs := make([]parser.Expr, len(rg.Rules))
			og := rg
			og.Labels = nil
			og.Rules = make([]rulefmt.Rule, len(rg.Rules))
			nth := map[string]int{}
			for ri, r := range rg.Rules {
				merged := mergeLabels(rg.Labels, r.Labels)
				or := r
				or.Labels = merged
				if r.Alert != "" && takeOver(merged) {
					expr, err := p.ParseExpr(r.Expr)
					if err != nil {
						return nil, nil, fmt.Errorf("%s: group %q, rule %q: %w", file, rg.Name, r.Alert, err)
					}
					sk := storeKey{group: key, name: r.Alert, nth: nth[r.Alert]}
					nth[r.Alert]++
					st := old[sk]
					if st == nil {
						st = &sampleStore{m: map[uint64]*sampleRecord{}}
					}
					stores[sk] = st
					ann := labels.FromMap(r.Annotations)
					gp.defs[ri] = &ruleDef{
						name:        r.Alert,
						query:       expr.String(),
						labels:      labels.FromMap(merged),
						annotations: ann,
						usesQuery:   mayQuery(ann),
						keep:        time.Duration(r.KeepFiringFor),
						ext:         extMap,
						samples:     st,
						member:      -1,
					}
					exprs[ri] = expr
					or.Labels, or.Annotations = nil, nil
				}
				og.Rules[ri] = or
			}
			gp.combined = newCombined(key, gp.defs, exprs)
			out.Groups[gi] = og
			plan.groups[key] = gp
		}
		plan.manager[file] = out
	}
	return plan, stores, nil
}

// mergeLabels is Prometheus's merge of group and rule labels (the rule's
// win).
func mergeLabels(group, rule map[string]string) map[string]string {
	if len(group) == 0 {
		return rule
	}
	m := make(map[string]string, len(group)+len(rule))
	maps.Copy(m, group)
	maps.Copy(m, rule)
	return m
}

// takeOver reports whether paged can set the rule's labels itself: none is
// a template, and none is __name__ (Prometheus drops the sample's __name__
// before it sets the rule's labels).
func takeOver(lbls map[string]string) bool {
	for k, v := range lbls {
		if k == labels.MetricName || strings.Contains(v, "{{") {
			return false
		}
	}
	return true
}

// mayQuery reports whether an annotation can call the query function,
// which makes its expansion depend on the evaluation time.
func mayQuery(ann labels.Labels) bool {
	found := false
	ann.Range(func(l labels.Label) {
		if strings.Contains(l.Value, "query") {
			found = true
		}
	})
	return found
}

// iteration is one evaluation of one group, carried in the context that
// Prometheus passes to the query function and to the notify function.
type iteration struct {
	plan     *groupPlan
	ts       time.Time
	interval time.Duration

	next     int      // position after the last rule matched
	current  *ruleDef // the rule whose query ran last
	batch    []captured
	combined map[int]*combinedAnswer // the group's combined queries sent, by chunk
	outbox   []*rules.Alert          // notifications, sent once the state is written
	events   []history.Event         // for the history, written before the notifications go out
}

type iterationKey struct{}

func withIteration(ctx context.Context, it *iteration) context.Context {
	return context.WithValue(ctx, iterationKey{}, it)
}

func iterationFrom(ctx context.Context) *iteration {
	it, _ := ctx.Value(iterationKey{}).(*iteration)
	return it
}

// match returns the definition of the rule whose main query q is, when
// paged took that rule over. Queries that templates run, and queries of
// other rules, return nil. Rules are evaluated one after another in their
// order, so the first definition of that name and query from the position
// of the last match on is the rule's, also when names repeat.
func (it *iteration) match(ctx context.Context, q string) *ruleDef {
	d := promrules.FromOriginContext(ctx)
	if d.Kind != promrules.KindAlerting || d.Query != q {
		return nil
	}
	it.current, it.batch = nil, nil
	if it.plan == nil || !d.Labels.IsEmpty() {
		return nil
	}
	for _, from := range []int{it.next, 0} {
		for i := from; i < len(it.plan.defs); i++ {
			def := it.plan.defs[i]
			if def != nil && def.name == d.Name && def.query == q {
				it.next, it.current = i+1, def
				return def
			}
		}
	}
	return nil
}

// capture turns the rule's query result into the alerts' label sets and
// keeps the samples as they were for the templates.
func (it *iteration) capture(def *ruleDef, v promql.Vector) promql.Vector {
	lb := labels.NewBuilder(labels.EmptyLabels())
	it.batch = make([]captured, len(v))
	for i := range v {
		s := &v[i]
		lb.Reset(s.Metric)
		lb.Del(labels.MetricName)
		def.labels.Range(func(l labels.Label) { lb.Set(l.Name, l.Value) })
		lb.Set(labels.AlertName, def.name)
		al := lb.Labels()
		it.batch[i] = captured{hash: al.Hash(), metric: s.Metric, f: s.F, h: s.H}
		s.Metric = al
		s.DropName = false
	}
	return v
}

// commit records the samples of an evaluation that succeeded, and forgets
// alerts that Prometheus has forgotten too: a resolved alert is kept for
// 15 minutes after it resolves, which is at most keep_firing_for and an
// interval after its sample was last seen.
func (s *sampleStore) commit(def *ruleDef, batch []captured, ts time.Time, interval time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range batch {
		rec := s.m[c.hash]
		if rec != nil && rec.annDef != nil && !def.usesQuery && c.h == nil && rec.h == nil &&
			rec.f == c.f && labels.Equal(rec.metric, c.metric) {
			rec.seen = ts // same sample: the expansion stands
			continue
		}
		s.m[c.hash] = &sampleRecord{metric: c.metric, f: c.f, h: c.h, ts: ts, seen: ts}
	}
	horizon := ts.Add(-(def.keep + 15*time.Minute + 2*interval))
	for h, rec := range s.m {
		if rec.seen.Before(horizon) {
			delete(s.m, h)
		}
	}
}

// expander expands taken-over annotations.
type expander struct {
	query       promrules.QueryFunc
	externalURL string
	extURL      *url.URL
	logf        func(msg string, args ...any)
}

// annotations returns the alert's annotations: expanded from the sample
// that last produced the alert, or from the alert itself when paged has no
// sample for it (an alert restored or copied from a rule it no longer
// knows).
func (x *expander) annotations(ctx context.Context, def *ruleDef, a *promrules.Alert) labels.Labels {
	if def.annotations.IsEmpty() {
		return labels.EmptyLabels()
	}
	h := a.Labels.Hash()
	def.samples.mu.Lock()
	rec := def.samples.m[h]
	if rec != nil && rec.annDef == def {
		ann := rec.ann
		def.samples.mu.Unlock()
		return ann
	}
	var in sampleRecord
	if rec != nil {
		in = *rec
	} else {
		in = sampleRecord{metric: a.Labels, f: a.Value, ts: a.LastSentAt}
		if in.ts.IsZero() {
			in.ts = time.Now()
		}
	}
	def.samples.mu.Unlock()

	ann := x.expand(ctx, def, in)
	if rec != nil {
		def.samples.mu.Lock()
		if def.samples.m[h] == rec {
			rec.ann, rec.annDef = ann, def
		}
		def.samples.mu.Unlock()
	}
	return ann
}

// expand runs Prometheus's template expansion for every annotation, with
// the same text, data, name, time and functions as AlertingRule.Eval.
func (x *expander) expand(ctx context.Context, def *ruleDef, rec sampleRecord) labels.Labels {
	smpl := promql.Sample{Metric: rec.metric, F: rec.f, H: rec.h}
	data := template.AlertTemplateData(rec.metric.Map(), def.ext, x.externalURL, smpl)
	const defs = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"
	ts := model.Time(timestamp.FromTime(rec.ts))
	sb := labels.NewScratchBuilder(def.annotations.Len())
	def.annotations.Range(func(l labels.Label) {
		if !strings.Contains(l.Value, "{{") {
			// Text without an action comes out of the template as it went
			// in: a runbook link, a fixed description.
			sb.Add(l.Name, l.Value)
			return
		}
		tmpl := template.NewTemplateExpander(ctx, defs+l.Value, "__alert_"+def.name, data, ts, template.QueryFunc(x.query), x.extURL, nil)
		out, err := tmpl.Expand()
		if err != nil {
			out = fmt.Sprintf("<error expanding template: %s>", err)
			x.logf("Expanding alert template failed", "alert", def.name, "err", err, "data", data)
		}
		sb.Add(l.Name, out)
	})
	return sb.Labels()
}
