package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
)

// combinedRules is a group whose rules can share one query (High, Low,
// Gone, Missing, Repeat and the two Named), one whose query fails on its
// own (Many: many-to-many matching), one with a scalar expression (Total)
// and one with a templated label (Graded), both queried on their own.
const combinedRules = `groups:
  - name: combined
    interval: 10s
    labels:
      team: llm
    rules:
      - alert: High
        expr: load > 5
        labels:
          severity: warning
        annotations:
          summary: '{{ $labels.__name__ }} on {{ $labels.instance }} is {{ $value }}'
      - alert: Many
        expr: load * on() load
      - alert: Low
        expr: sum by (instance) (load) < 10
        annotations:
          summary: '{{ $labels.instance }} low at {{ $value }}'
      - alert: Total
        expr: scalar(sum(load))
      - alert: Gone
        expr: load > 1000
      - alert: Graded
        expr: load > 5
        labels:
          severity: '{{ if gt $value 100.0 }}critical{{ else }}warning{{ end }}'
      - alert: Missing
        expr: absent(nothing)
      - alert: Named
        expr: load{instance="a"} > 0
      - alert: Named
        expr: load{instance="b"} > 0
        labels:
          second: "yes"
      - alert: Repeat
        expr: load > 5
        labels:
          instance: same
`

// recordingDS counts the queries it forwards, and lets a test change the
// answers of combined queries.
type recordingDS struct {
	engine.Datasource
	mu       sync.Mutex
	combined int
	single   int
	alter    func(expr string, v promql.Vector, err error) (promql.Vector, error)
}

func (d *recordingDS) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	v, err := d.Datasource.Query(ctx, expr, ts)
	d.mu.Lock()
	defer d.mu.Unlock()
	if strings.Contains(expr, "__paged_rule__") {
		d.combined++
		if d.alter != nil {
			v, err = d.alter(expr, v, err)
		}
	} else {
		d.single++
	}
	return v, err
}

func (d *recordingDS) counts() (combined, single int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, s := d.combined, d.single
	d.combined, d.single = 0, 0
	return c, s
}

// ruleOutcome is what a rule shows after an evaluation.
type ruleOutcome struct {
	health string
	err    string
	alerts []string
}

func outcomes(e *engine.Engine) map[string][]ruleOutcome {
	out := map[string][]ruleOutcome{}
	for _, g := range e.RuleGroups() {
		for _, r := range g.Rules() {
			ar := r.(*promrules.AlertingRule)
			o := ruleOutcome{health: string(ar.Health()), err: fmt.Sprint(ar.LastError())}
			for _, a := range e.ActiveAlerts(context.Background(), g, ar) {
				o.alerts = append(o.alerts, fmt.Sprintf("%s %s %v %s", a.Labels, a.State, a.Value, a.Annotations))
			}
			slices.Sort(o.alerts)
			out[ar.Name()] = append(out[ar.Name()], o)
		}
	}
	return out
}

// evaluateCombinedRules runs combinedRules for three evaluations and
// returns what every rule shows, and the queries of the last two.
func evaluateCombinedRules(t *testing.T, combine bool, alter func(string, promql.Vector, error) (promql.Vector, error)) (map[string][]ruleOutcome, [2]int) {
	var got map[string][]ruleOutcome
	var counts [2]int
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		now := time.Now()
		ds.Set(t, `load{instance="a",tier="gold"}`, now, 12)
		ds.Set(t, `load{instance="b"}`, now, 7)
		ds.Set(t, `load{instance="c"}`, now, 3)
		rds := &recordingDS{Datasource: ds, alter: alter}
		file := writeFile(t, t.TempDir(), "combined.rules.yaml", combinedRules)
		e := start(t, engine.Options{Datasource: rds, StoragePath: t.TempDir(), CombineQueries: combine}, []string{file}, settings())
		defer e.stop()
		t0 := firstEvaluation(t, e.Engine)
		rds.counts()
		time.Sleep(time.Until(t0.Add(25 * time.Second))) // two more
		synctest.Wait()
		counts[0], counts[1] = rds.counts()
		got = outcomes(e.Engine)
	})
	return got, counts
}

// TestCombinedQueriesMatchSeparate evaluates the same rules with one
// query per rule and with combined queries: every rule's health, error and
// alerts (labels, state, value, annotations) are the same. Many's own
// query fails, so the first combined query fails too: from then on Many
// is queried on its own and the others share one query.
func TestCombinedQueriesMatchSeparate(t *testing.T) {
	want, sep := evaluateCombinedRules(t, false, nil)
	got, comb := evaluateCombinedRules(t, true, nil)
	compareOutcomes(t, got, want)
	if sep != [2]int{0, 20} {
		t.Errorf("separate queries in two evaluations: %d combined, %d single; want 0, 20", sep[0], sep[1])
	}
	// Per evaluation: one combined query, and Many, Total and Graded on
	// their own.
	if comb != [2]int{2, 6} {
		t.Errorf("combined queries in two evaluations: %d combined, %d single; want 2, 6", comb[0], comb[1])
	}
	// Three rules to a query: Many out, the seven others make three
	// queries (2, 2, 3).
	restore := engine.SetMaxCombined(3)
	got, comb = evaluateCombinedRules(t, true, nil)
	restore()
	compareOutcomes(t, got, want)
	if comb != [2]int{6, 6} {
		t.Errorf("combined queries of three in two evaluations: %d combined, %d single; want 6, 6", comb[0], comb[1])
	}
	if !strings.Contains(want["Many"][0].err, "many-to-many") || want["High"][0].health != "ok" || len(want["High"][0].alerts) != 2 ||
		len(want["Missing"][0].alerts) != 1 || len(want["Named"][1].alerts) != 1 || len(want["Total"][0].alerts) != 1 {
		t.Errorf("unexpected outcomes: %v", want)
	}
}

// TestCombinedQueryAtFault: when the datasource fails the combined query
// while each rule answers on its own, paged queries the rules one by one
// and stops combining; when it answers the combined query with samples of
// no rule, it does the same, and never turns them into alerts.
func TestCombinedQueryAtFault(t *testing.T) {
	want, _ := evaluateCombinedRules(t, false, nil)
	cases := map[string]func(string, promql.Vector, error) (promql.Vector, error){
		"rejected": func(string, promql.Vector, error) (promql.Vector, error) {
			return nil, &engine.DatasourceError{Kind: engine.KindQuery, Err: fmt.Errorf("query processing would load too many samples into memory")}
		},
		"label lost": func(_ string, v promql.Vector, err error) (promql.Vector, error) {
			for i := range v {
				v[i].Metric = labels.NewBuilder(v[i].Metric).Del("__paged_rule__").Labels()
			}
			return v, err
		},
		"unavailable": func(string, promql.Vector, error) (promql.Vector, error) {
			return nil, engine.Unavailable(fmt.Errorf("server_error: server error: 503"))
		},
	}
	for name, alter := range cases {
		t.Run(name, func(t *testing.T) {
			got, counts := evaluateCombinedRules(t, true, alter)
			compareOutcomes(t, got, want)
			// The first evaluation's combined query fails with Many
			// in it, which leaves the combination. A failure without
			// Many turns combining off, at once for a wrong answer,
			// after three in a row for an unavailable datasource.
			want := [2]int{1, 20}
			if name == "unavailable" {
				want = [2]int{2, 20}
			}
			if counts != want {
				t.Errorf("queries in two evaluations: %d combined, %d single; want %d, %d", counts[0], counts[1], want[0], want[1])
			}
		})
	}
}

// TestCombinedQueryDatasourceDown: while nothing answers, the rules are
// stale as with separate queries, and the combination is not blamed: once
// the datasource answers, the group shares one query again.
func TestCombinedQueryDatasourceDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		now := time.Now()
		ds.Set(t, `load{instance="a"}`, now, 12)
		rds := &recordingDS{Datasource: ds}
		file := writeFile(t, t.TempDir(), "combined.rules.yaml", combinedRules)
		e := start(t, engine.Options{Datasource: rds, StoragePath: t.TempDir(), CombineQueries: true}, []string{file}, settings())
		defer e.stop()
		t0 := firstEvaluation(t, e.Engine)
		ds.SetDown(true)
		time.Sleep(time.Until(t0.Add(45 * time.Second)))
		synctest.Wait()
		if st := e.RuleStatus(ruleNamed(t, e.Engine, "High")); !st.Stale || st.ConsecutiveFailures != 4 {
			t.Errorf("High while down: %+v", st)
		}
		if len(activeAlerts(e.Engine, "High")) != 1 {
			t.Errorf("High lost its alert while the datasource was down")
		}
		ds.SetDown(false)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		rds.counts()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		// With one series Many's query succeeds: only Total and Graded
		// are queried on their own.
		if c, s := rds.counts(); c != 1 || s != 2 {
			t.Errorf("after the datasource came back: %d combined, %d single queries per evaluation; want 1, 2", c, s)
		}
		if st := e.RuleStatus(ruleNamed(t, e.Engine, "High")); st.Stale {
			t.Errorf("High still stale: %+v", st)
		}
	})
}

// firstEvaluation waits for the group's first evaluation and returns its
// time (in a synctest bubble).
func firstEvaluation(t *testing.T, e *engine.Engine) time.Time {
	t.Helper()
	for range 60 {
		synctest.Wait()
		if gs := e.RuleGroups(); len(gs) == 1 && !gs[0].GetLastEvaluation().IsZero() {
			return gs[0].GetLastEvaluation()
		}
		time.Sleep(time.Second)
	}
	t.Fatal("no evaluation in a minute")
	return time.Time{}
}

func compareOutcomes(t *testing.T, got, want map[string][]ruleOutcome) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rule names, want %d", len(got), len(want))
	}
	for name, ws := range want {
		gs := got[name]
		if len(gs) != len(ws) {
			t.Errorf("%s: %d rules, want %d", name, len(gs), len(ws))
			continue
		}
		for i := range ws {
			g, w := gs[i], ws[i]
			if g.health != w.health || g.err != w.err || !slices.Equal(g.alerts, w.alerts) {
				t.Errorf("%s #%d:\n got  %s %s %q\n want %s %s %q", name, i, g.health, g.err, g.alerts, w.health, w.err, w.alerts)
			}
		}
	}
}
