package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/rules"
)

// RuleNoSeriesAlert is the built-in alert that fires for a selector of a
// rule that has matched no series for RuleSettings.NoSeriesAfter: the rule
// cannot fire, typically because a server upgrade renamed or removed the
// metric.
const RuleNoSeriesAlert = "PagedRuleNoSeries"

// Dead rules.
//
// Every selector of every loaded rule is reduced to "is this metric
// scraped from the targets the rule means" (rules.SeriesChecks: identity
// matchers kept, value labels dropped, selectors meant to be empty
// skipped). The distinct reduced selectors are counted together
// (seriescount.go) every checkInterval: at most one query per distinct
// selector per check, usually one query for a hundred. Each selector has
// a clock: the first successful check that found no series starts it, a
// check that finds a series stops it. When a selector has been found
// empty at every check for NoSeriesAfter, PagedRuleNoSeries fires for
// every (group, rule, selector) that reads it; it resolves at the first
// check that finds a series, or as soon as a reload removes or changes
// the selector.
//
// A check whose queries fail changes no clock: a datasource that is down
// makes no rule dead (and no alert resolve). A reload keeps the clocks of
// the selectors that are still read. The clocks are in memory: they are
// derived from the datasource, and a restart starts them again (a rule
// that was reported dead is reported again NoSeriesAfter after the
// start). A lookback (last_over_time over NoSeriesAfter) could pick them
// up at once, but a datasource that has just started has no history and
// would make every rule look dead.

// checkInterval is how often the selectors are counted: a sixth of
// NoSeriesAfter (so that a dead selector is reported at most a sixth
// late), at most every 5 minutes, at least every second.
func checkInterval(after time.Duration) time.Duration {
	return min(max(after/6, time.Second), 5*time.Minute)
}

// noSeries runs the checks and holds the clocks.
type noSeries struct {
	e    *Engine
	wake chan struct{} // settings changed

	mu        sync.Mutex
	after     time.Duration       // 0: off
	keep      map[string][]string // by group file: labels a pack's selector adds
	targets   []noSeriesTarget
	reduced   map[promrules.Rule][]rules.SeriesCheck
	clocks    map[string]*selectorClock // by checked selector
	solo      map[string]bool           // selectors whose combined query was rejected
	lastCheck time.Time
}

// noSeriesTarget is one selector of one rule.
type noSeriesTarget struct {
	group, file, rule string
	check             rules.SeriesCheck
}

// selectorClock is what the checks found about one reduced selector.
type selectorClock struct {
	series     int       // at the last answered check
	emptySince time.Time // first answered check of the current run without series; zero while it has series
	lastEmpty  time.Time // last answered check without series
	firedAt    time.Time // when PagedRuleNoSeries started firing for it; zero when it does not
}

func newNoSeries(e *Engine) *noSeries {
	return &noSeries{
		e:       e,
		wake:    make(chan struct{}, 1),
		keep:    map[string][]string{},
		reduced: map[promrules.Rule][]rules.SeriesCheck{},
		clocks:  map[string]*selectorClock{},
		solo:    map[string]bool{},
	}
}

// apply takes the settings of ApplyRules, after the manager swapped the
// groups: the selectors of the new rules are read at once (their clocks
// start at the next check; removed selectors stop firing now).
func (c *noSeries) apply(after time.Duration, keep map[string][]string) {
	c.mu.Lock()
	c.keep = keep
	c.reduced = map[promrules.Rule][]rules.SeriesCheck{}
	c.setAfterLocked(after)
	c.refreshLocked()
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *noSeries) setAfterLocked(after time.Duration) {
	if after <= 0 {
		c.after = 0
		clear(c.clocks)
		clear(c.solo)
		c.targets = nil
		c.lastCheck = time.Time{}
		c.e.metrics.noSeriesSelectors.Set(0)
		return
	}
	c.after = after
	for _, k := range c.clocks {
		switch {
		case k.emptySince.IsZero():
		case k.lastEmpty.Sub(k.emptySince) >= after && k.firedAt.IsZero():
			k.firedAt = k.lastEmpty
		case k.lastEmpty.Sub(k.emptySince) < after:
			k.firedAt = time.Time{}
		}
	}
}

// refreshLocked lists the selectors of the running rules and keeps a
// clock for each, dropping the clocks nothing reads any more.
func (c *noSeries) refreshLocked() {
	if c.after <= 0 {
		return
	}
	groups := c.e.mgr.RuleGroups()
	recorded := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules() {
			if rr, ok := r.(*promrules.RecordingRule); ok {
				recorded[rr.Name()] = true
			}
		}
	}
	reduced := make(map[promrules.Rule][]rules.SeriesCheck, len(c.reduced))
	var targets []noSeriesTarget
	used := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules() {
			checks, ok := c.reduced[r]
			if !ok {
				lbls, _ := c.e.RuleDefinition(g, r)
				checks = rules.SeriesChecks(r.Query(), rules.SeriesCheckOptions{
					Keep:     c.keep[g.File()],
					Recorded: func(n string) bool { return recorded[n] },
					Server:   lbls.Get("server"),
				})
			}
			reduced[r] = checks
			for _, sc := range checks {
				if sc.Skip != "" {
					continue
				}
				targets = append(targets, noSeriesTarget{group: g.Name(), file: g.File(), rule: r.Name(), check: sc})
				used[sc.Checked] = true
			}
		}
	}
	c.reduced, c.targets = reduced, targets
	for sel := range used {
		if c.clocks[sel] == nil {
			c.clocks[sel] = &selectorClock{}
		}
	}
	for sel := range c.clocks {
		if !used[sel] {
			delete(c.clocks, sel)
		}
	}
	for sel := range c.solo {
		if !used[sel] {
			delete(c.solo, sel)
		}
	}
	c.e.metrics.noSeriesSelectors.Set(float64(len(c.clocks)))
}

// run checks every checkInterval while the check is on, until ctx ends.
func (c *noSeries) run(ctx context.Context) {
	for {
		c.mu.Lock()
		after, last := c.after, c.lastCheck
		c.mu.Unlock()
		var (
			timer *time.Timer
			due   <-chan time.Time
		)
		if after > 0 {
			now := time.Now()
			next := last.Add(checkInterval(after))
			if last.IsZero() || !now.Before(next) {
				c.check(ctx, now)
				continue
			}
			timer = time.NewTimer(next.Sub(now))
			due = timer.C
		}
		select {
		case <-ctx.Done():
		case <-due:
		case <-c.wake:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// check counts the selectors at now and moves their clocks.
func (c *noSeries) check(ctx context.Context, now time.Time) {
	c.mu.Lock()
	if c.after <= 0 {
		c.mu.Unlock()
		return
	}
	c.lastCheck = now
	c.refreshLocked()
	sels := make([]string, 0, len(c.clocks))
	for sel := range c.clocks {
		sels = append(sels, sel)
	}
	slices.Sort(sels)
	queries := countQueries(sels, func(i int) bool { return c.solo[sels[i]] })
	timeout := min(checkInterval(c.after), time.Minute)
	c.mu.Unlock()

	counts := map[string]int{}
	var rejected []string
	outcome := "success"
	for _, q := range queries {
		qctx, cancel := context.WithTimeout(ctx, timeout)
		res, err := runCount(qctx, c.e.opts.Datasource, q, now)
		cancel()
		if ctx.Err() != nil {
			return // shutting down: not the datasource's fault
		}
		if err != nil {
			kind := asDatasourceError(err).Kind
			c.e.metrics.noSeriesQueries.WithLabelValues(kind.String()).Inc()
			if kind == KindUnavailable {
				// Nothing more is asked, and no clock moves.
				outcome = "failure"
				c.e.logger.Debug("no-series check stopped: the datasource did not answer", "err", err)
				break
			}
			outcome = "failure"
			if len(q.members) > 1 {
				for _, m := range q.members {
					rejected = append(rejected, sels[m])
				}
				c.e.logger.Warn("no-series check: combined query rejected; its selectors are counted one by one from the next check", "selectors", len(q.members), "err", err)
			} else {
				c.e.logger.Warn("no-series check: query rejected; this selector's clock stays where it is", "selector", sels[q.members[0]], "err", err)
			}
			continue
		}
		c.e.metrics.noSeriesQueries.WithLabelValues("success").Inc()
		for _, m := range q.members {
			counts[sels[m]] = res[m]
		}
	}
	c.e.metrics.noSeriesChecks.WithLabelValues(outcome).Inc()

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sel := range rejected {
		c.solo[sel] = true
	}
	for sel, n := range counts {
		k := c.clocks[sel]
		if k == nil {
			continue // gone with a reload meanwhile
		}
		wasFiring := !k.firedAt.IsZero()
		k.observe(now, n, c.after)
		switch firing := !k.firedAt.IsZero(); {
		case firing && !wasFiring:
			c.e.logger.Warn("selector has matched no series: its rules cannot fire", "selector", sel, "since", k.emptySince, "for", model.Duration(c.after))
		case !firing && wasFiring:
			c.e.logger.Info("selector matches series again", "selector", sel, "series", n)
		}
	}
}

// observe records one answered check.
func (k *selectorClock) observe(now time.Time, series int, after time.Duration) {
	k.series = series
	if series > 0 {
		k.emptySince, k.lastEmpty, k.firedAt = time.Time{}, time.Time{}, time.Time{}
		return
	}
	if k.emptySince.IsZero() {
		k.emptySince = now
	}
	k.lastEmpty = now
	if k.firedAt.IsZero() && now.Sub(k.emptySince) >= after {
		k.firedAt = now
	}
}

// alerts returns PagedRuleNoSeries for every rule selector whose clock
// fires, by label hash.
func (c *noSeries) alerts(ext labels.Labels, add func(*rules.Alert)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.after <= 0 {
		return
	}
	iv := checkInterval(c.after)
	for _, t := range c.targets {
		k := c.clocks[t.check.Checked]
		if k == nil || k.firedAt.IsZero() {
			continue
		}
		add(c.alert(t, k, ext, iv))
	}
}

func (c *noSeries) alert(t noSeriesTarget, k *selectorClock, ext labels.Labels, iv time.Duration) *rules.Alert {
	e := c.e
	b := labels.NewBuilder(ext)
	b.Set(labels.AlertName, RuleNoSeriesAlert)
	b.Set("severity", "warning")
	b.Set("rule", t.rule)
	b.Set("group", t.group)
	b.Set("selector", t.check.Selector)
	after := model.Duration(c.after).String()

	var d strings.Builder
	fmt.Fprintf(&d, "paged has found no series for %s at every check since %s (every %s, on %s)",
		t.check.Checked, k.emptySince.UTC().Format(time.RFC3339), model.Duration(iv), e.opts.DatasourceName)
	if t.check.Checked != t.check.Selector {
		fmt.Fprintf(&d, ", which stands for the rule's selector %s", t.check.Selector)
		if len(t.check.Dropped) > 0 {
			fmt.Fprintf(&d, " without its matchers on %s (they only pick among the metric's series)", strings.Join(t.check.Dropped, ", "))
		}
		if t.check.ViaCount {
			d.WriteString(", counted through the histogram's _count series (the same targets as its buckets)")
		}
		d.WriteString(": the metric itself is not there")
	}
	fmt.Fprintf(&d, ". Rule %s of group %s (%s) reads nothing through it and cannot fire.", t.rule, t.group, t.file)
	if t.check.Hint != "" {
		d.WriteString(" " + t.check.Hint + ".")
	} else {
		d.WriteString(" Are its targets up and scraped under the job and labels the selector names? Does the server's version expose this metric?")
	}
	return &rules.Alert{
		Labels: b.Labels(),
		Annotations: labels.FromStrings(
			"description", d.String(),
			"runbook_url", "paged/"+RuleNoSeriesAlert,
			"summary", fmt.Sprintf("Rule %s selects %s, which has matched no series for %s", t.rule, t.check.Selector, after),
		),
		StartsAt:     k.firedAt,
		GeneratorURL: e.opts.ExternalURL,
	}
}
