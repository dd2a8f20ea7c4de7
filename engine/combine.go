package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
)

// Rules share queries.
//
// A rule evaluation is one instant query, and on a small machine the HTTP
// round trip of a short query costs paged more CPU than everything else it
// does for the rule. With Options.CombineQueries the alerting rules of a
// group that paged took over (ruledef.go) and whose expression is a vector
// are sent together, up to maxCombined to a query, at the group's
// evaluation time:
//
//	label_replace(<rule 0>, "__paged_rule__", "0", "", "") or label_replace(<rule 1>, "__paged_rule__", "1", "", "") ...
//
// Every rule's part is evaluated exactly as it would be alone, at the same
// time, and the label, distinct per part, keeps `or` from dropping
// anything: the answer is the union of the rules' answers, told apart by
// the label, which paged removes before the rules manager sees the
// samples. Ten rules to a query cost Prometheus about what the ten
// queries cost; a hundred cost it about a third more, hence maxCombined.
//
// When the combined query fails, the group's rules are queried one by one
// in that evaluation, so each gets its own answer or its own error. Rules
// whose query fails on its own are left out of the combination from then
// on; when every rule answers on its own, the combination itself is at
// fault (too many samples, a timeout) and the group is queried rule by
// rule until the next reload.

// combinedLabel tells the rules' answers apart in a combined answer.
const combinedLabel = "__paged_rule__"

// maxCombined is the most rules one combined query carries. With 1,000
// rules in groups of 100 (bench/engine/RESULTS.md), Prometheus answered
// queries of 100 rules with 30 % more CPU than the rules one by one
// (8.2 s a cycle against 6.3 s), and queries of 10 with about the same
// (5.6–6.7 s); paged's own CPU fell from 491 ms a cycle to 89 and
// 156–173 ms.
var maxCombined = 10

// strikesBeforeOff is how many combined queries in a row may fail for
// lack of an answer while the rules answer one by one before the group is
// queried rule by rule.
const strikesBeforeOff = 3

// combined is the combined queries of one group plan. Members are the
// plan's taken-over alerting rules with a vector expression, in order;
// consecutive members share a query, at most maxCombined to a query.
type combined struct {
	group string

	mu       sync.Mutex
	defs     []*ruleDef // by member
	excluded []bool     // members whose own query failed
	off      bool       // queried rule by rule until the next reload
	strikes  int
	chunks   []chunk // the queries for the members left
	chunkOf  []int   // by member: its chunk, -1 when queried on its own
}

// chunk is one combined query and the members it answers.
type chunk struct {
	expr string
	in   []bool // by member
}

// newCombined returns the combined queries of a group's rules, nil when
// fewer than two rules can take part. It sets each member's def.member.
func newCombined(group string, defs []*ruleDef, exprs []parser.Expr) *combined {
	c := &combined{group: group}
	for i, d := range defs {
		if d == nil || exprs[i] == nil || exprs[i].Type() != parser.ValueTypeVector {
			continue
		}
		d.member = len(c.defs)
		c.defs = append(c.defs, d)
	}
	if len(c.defs) < 2 {
		for _, d := range c.defs {
			d.member = -1
		}
		return nil
	}
	c.excluded = make([]bool, len(c.defs))
	c.rebuild()
	return c
}

// rebuild splits the members left into chunks of at most maxCombined
// (evenly: 12 members make two queries of 6) and writes their queries,
// each a balanced tree of `or`, so that the datasource merges each answer
// a logarithmic number of times.
func (c *combined) rebuild() {
	var left []int
	for m := range c.defs {
		if !c.excluded[m] {
			left = append(left, m)
		}
	}
	c.chunks = nil
	c.chunkOf = make([]int, len(c.defs))
	for m := range c.chunkOf {
		c.chunkOf[m] = -1
	}
	if len(left) < 2 {
		return
	}
	n := (len(left) + maxCombined - 1) / maxCombined
	for k := range n {
		members := left[k*len(left)/n : (k+1)*len(left)/n]
		if len(members) < 2 {
			continue
		}
		ch := chunk{in: make([]bool, len(c.defs))}
		parts := make([]string, len(members))
		for i, m := range members {
			ch.in[m] = true
			c.chunkOf[m] = len(c.chunks)
			parts[i] = "label_replace(" + c.defs[m].query + ", \"" + combinedLabel + "\", \"" + strconv.Itoa(m) + "\", \"\", \"\")"
		}
		ch.expr = orTree(parts)
		c.chunks = append(c.chunks, ch)
	}
}

// orTree joins the parts with `or`, halves first.
func orTree(p []string) string {
	if len(p) == 1 {
		return p[0]
	}
	mid := len(p) / 2
	return "(" + orTree(p[:mid]) + " or " + orTree(p[mid:]) + ")"
}

// chunkFor returns the chunk that answers member m; ok is false when m is
// queried on its own.
func (c *combined) chunkFor(m int) (k int, ch chunk, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off || c.chunkOf[m] < 0 {
		return 0, chunk{}, false
	}
	k = c.chunkOf[m]
	return k, c.chunks[k], true
}

// combinedAnswer is a combined query's outcome in one iteration.
type combinedAnswer struct {
	in    []bool          // members the query answers
	parts []promql.Vector // by member, when the query succeeded
	err   error           // why its rules are queried one by one

	// Outcomes of the members' own queries after a failure.
	failed    []int // members whose own query failed (query error)
	succeeded int
}

// fromCombined returns the answer of def's query from its combined query,
// sending that at the first of its members' queries in the iteration (a
// group evaluates all its rules at the same time, ts). ok is false when
// def's query must be sent on its own.
func (e *Engine) fromCombined(ctx context.Context, it *iteration, def *ruleDef, ts time.Time) (v promql.Vector, ok bool) {
	c := it.plan.combined
	if c == nil || def.member < 0 {
		return nil, false
	}
	k, ch, ok := c.chunkFor(def.member)
	if !ok {
		return nil, false
	}
	a := it.combined[k]
	if a == nil {
		a = &combinedAnswer{in: ch.in}
		if it.combined == nil {
			it.combined = map[int]*combinedAnswer{}
		}
		it.combined[k] = a
		ans, err := e.opts.Datasource.Query(ctx, ch.expr, ts)
		if err == nil {
			a.parts, err = splitCombined(ans, ch.in)
		}
		if err != nil {
			a.err = err
			if ctx.Err() == nil {
				e.metrics.queries.WithLabelValues(asDatasourceError(err).Kind.String()).Inc()
			}
			return nil, false
		}
		e.metrics.queries.WithLabelValues("success").Inc()
		e.answered.Store(true)
	}
	if a.parts == nil || !a.in[def.member] {
		return nil, false
	}
	return a.parts[def.member], true
}

// splitCombined sorts a combined answer by member and removes the label.
// A sample without a valid member label means the datasource does not
// evaluate the combination as Prometheus does.
func splitCombined(v promql.Vector, in []bool) ([]promql.Vector, error) {
	parts := make([]promql.Vector, len(in))
	for m := range parts {
		if in[m] {
			parts[m] = promql.Vector{}
		}
	}
	lb := labels.NewBuilder(labels.EmptyLabels())
	for _, s := range v {
		m, err := strconv.Atoi(s.Metric.Get(combinedLabel))
		if err != nil || m < 0 || m >= len(in) || !in[m] {
			return nil, &DatasourceError{Kind: KindQuery, Err: fmt.Errorf("combined answer holds a sample of no rule: %s", s.Metric)}
		}
		lb.Reset(s.Metric)
		lb.Del(combinedLabel)
		s.Metric = lb.Labels()
		parts[m] = append(parts[m], s)
	}
	return parts, nil
}

// noteOwnQuery records the outcome of a member's own query after its
// combined query failed.
func (it *iteration) noteOwnQuery(def *ruleDef, err error) {
	if def.member < 0 {
		return
	}
	for _, a := range it.combined {
		if a.err == nil || !a.in[def.member] {
			continue
		}
		if err == nil {
			a.succeeded++
		} else if de := asDatasourceError(err); de.Kind == KindQuery {
			a.failed = append(a.failed, def.member)
		}
	}
}

// settle draws the conclusions of an iteration's combined queries: the
// members whose own query failed after their combined query failed leave
// the combination; if every member of a failed combined query answered
// on its own, the combination is at fault.
func (c *combined) settle(ctx context.Context, answers map[int]*combinedAnswer, logger *slog.Logger) {
	if c == nil || len(answers) == 0 || ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var (
		failed        []int
		atFault       error
		wrong, strike bool // a wrong answer or a rejection; no answer
	)
	for _, a := range answers {
		switch {
		case a.err == nil:
		case len(a.failed) > 0:
			failed = append(failed, a.failed...)
		case a.succeeded == 0:
			// Nothing answered: the datasource is down, not the combination.
		case asDatasourceError(a.err).Kind == KindQuery:
			atFault, wrong = a.err, true
		default:
			strike = true
			if atFault == nil {
				atFault = a.err
			}
		}
	}
	switch {
	case len(failed) > 0:
		var names []string
		for _, m := range failed {
			c.excluded[m] = true
			names = append(names, c.defs[m].name)
		}
		c.rebuild()
		logger.Warn("combined query failed; rules whose own query fails are now queried on their own", "group", c.group, "rules", strings.Join(names, ","))
	case wrong || (strike && c.strikes+1 >= strikesBeforeOff):
		c.off = true
		logger.Warn("combined query failed while its rules answer one by one; querying the group rule by rule until the next reload", "group", c.group, "err", atFault)
	case strike:
		c.strikes++
	default:
		c.strikes = 0
	}
}
