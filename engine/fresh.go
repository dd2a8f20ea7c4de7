package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules"
)

// After an outage.
//
// A datasource that was down did not scrape either: when it comes back,
// its newest samples are from before the outage. Once the outage is longer
// than its lookback delta (5m in Prometheus), an instant query finds no
// sample at all until the next scrape of each target, and an alert whose
// condition still holds would resolve at the first evaluation and fire
// again a scrape later: a false "resolved" and a second page.
//
// So a rule whose query went unanswered while it had active alerts is
// held: when the datasource answers again, the rule's selectors (reduced
// as for the no-series check, rules.SeriesChecks) are counted first, and
// while one of them matches no series the query is treated as failed
// (KindQuery, so the datasource counts as up) and the alerts keep their
// state, marked stale. The hold ends at the first evaluation that finds
// every selector with series, or freshHoldMax after the datasource first
// answered again, whichever comes first: a target that really went away
// during the outage delays its alerts' resolution by at most that much.
// The counting costs one query per held rule per evaluation (the
// selectors of a rule are counted together), and only until the rule's
// data is back.

// freshHoldMax bounds how long a rule is held after the datasource
// answers again: Prometheus's default lookback delta, past which a
// target not scraped again is gone rather than late.
const freshHoldMax = 5 * time.Minute

// freshGate holds the rules whose query went unanswered.
type freshGate struct {
	mu   sync.Mutex
	held map[string]*heldQuery // by query expression
}

type heldQuery struct {
	selectors []string  // the checked selectors of the expression
	until     time.Time // zero until the datasource first answers again
}

func newFreshGate() *freshGate { return &freshGate{held: map[string]*heldQuery{}} }

// hold marks expr as read from a datasource that did not answer.
func (f *freshGate) hold(expr parser.Expr) {
	q := expr.String()
	f.mu.Lock()
	defer f.mu.Unlock()
	if h, ok := f.held[q]; ok {
		h.until = time.Time{} // down again: the bound starts at the next answer
		return
	}
	var sels []string
	for _, c := range rules.SeriesChecks(expr, rules.SeriesCheckOptions{}) {
		if c.Skip == "" {
			sels = append(sels, c.Checked)
		}
	}
	f.held[q] = &heldQuery{selectors: sels}
}

// check is called when the datasource answered q at ts. It returns an
// error while q is held and one of its selectors matches no series, and
// lifts the hold otherwise.
func (f *freshGate) check(ctx context.Context, ds Datasource, q string, ts time.Time) error {
	f.mu.Lock()
	h := f.held[q]
	if h == nil {
		f.mu.Unlock()
		return nil
	}
	if h.until.IsZero() {
		h.until = ts.Add(freshHoldMax)
	}
	if len(h.selectors) == 0 || ts.After(h.until) {
		delete(f.held, q)
		f.mu.Unlock()
		return nil
	}
	sels, until := h.selectors, h.until
	f.mu.Unlock()

	var empty []string
	for i, c := range CountSeries(ctx, ds, sels, ts) {
		if c.Err != nil {
			return c.Err // asked nothing more; the rule stays held
		}
		if c.Series == 0 {
			empty = append(empty, sels[i])
		}
	}
	if len(empty) > 0 {
		return &DatasourceError{Kind: KindQuery, Err: fmt.Errorf(
			"the datasource answers again but has no recent samples of %s yet (not scraped since it came back?): alerts keep their state until it has, or until %s",
			strings.Join(empty, ", "), until.UTC().Format(time.RFC3339))}
	}
	f.mu.Lock()
	if f.held[q] == h {
		delete(f.held, q)
	}
	f.mu.Unlock()
	return nil
}
