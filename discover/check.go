package discover

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/packs"
	"github.com/pagedhq/paged/rules"
)

// Finding is one selector of a pack's rule that matches no series (or
// could not be counted, or is not checked), as PagedRuleNoSeries would
// report it.
type Finding struct {
	Pack, Group, Rule string
	rules.SeriesCheck
	// Err is why it could not be counted.
	Err error
}

// Report is what the selector check found for the packs of an inventory.
type Report struct {
	// Rules is the number of rules of the packs.
	Rules int
	// Selectors is the number of distinct selectors counted.
	Selectors int
	// Dead are the selectors that match no series.
	Dead []Finding
	// Failed are the selectors whose count failed.
	Failed []Finding
	// Skipped are the selectors not checked, with the reason in Skip.
	Skipped []Finding
}

// DeadRules returns the number of distinct rules with a dead selector.
func (r *Report) DeadRules() int {
	seen := map[string]bool{}
	for _, f := range r.Dead {
		seen[f.Pack+"\x00"+f.Group+"\x00"+f.Rule] = true
	}
	return len(seen)
}

// Check applies each fitting pack with its selector and counts the
// series of every selector of its rules, reduced as the engine's
// PagedRuleNoSeries check reduces them: through ds (a remote
// Prometheus), or, for an inventory from FromTargets, in the scraped
// series.
func (inv *Inventory) Check(ctx context.Context, ds engine.Datasource, now time.Time) (*Report, error) {
	rep := &Report{}
	p := parser.NewParser(parser.Options{})
	var (
		found   []Finding
		sels    []string
		indexOf = map[string]int{}
	)
	for _, fit := range inv.Packs {
		pack, err := packs.Lookup(fit.Pack)
		if err != nil {
			return nil, err
		}
		o := packs.Overrides{Selector: fit.Selector()}
		var keep []string
		if o.Selector != "" {
			ms, err := packs.ParseSelector(o.Selector)
			if err != nil {
				return nil, fmt.Errorf("pack %s: %w", fit.Pack, err)
			}
			for _, m := range ms {
				keep = append(keep, m.Name)
			}
		}
		rendered, err := pack.Apply(o)
		if err != nil {
			return nil, fmt.Errorf("pack %s with selector %s: %w", fit.Pack, o.Selector, err)
		}
		groups := rendered.RuleGroups().Groups
		recorded := map[string]bool{}
		for _, g := range groups {
			for _, r := range g.Rules {
				if r.Record != "" {
					recorded[r.Record] = true
				}
			}
		}
		for _, g := range groups {
			for _, r := range g.Rules {
				rep.Rules++
				expr, err := p.ParseExpr(r.Expr)
				if err != nil {
					return nil, fmt.Errorf("pack %s, rule %s%s: %w", fit.Pack, r.Alert, r.Record, err)
				}
				for _, sc := range rules.SeriesChecks(expr, rules.SeriesCheckOptions{
					Keep:     keep,
					Recorded: func(n string) bool { return recorded[n] },
					Server:   r.Labels["server"],
				}) {
					f := Finding{Pack: fit.Pack, Group: g.Name, Rule: r.Alert + r.Record, SeriesCheck: sc}
					if sc.Skip != "" {
						rep.Skipped = append(rep.Skipped, f)
						continue
					}
					if _, ok := indexOf[sc.Checked]; !ok {
						indexOf[sc.Checked] = len(sels)
						sels = append(sels, sc.Checked)
					}
					found = append(found, f)
				}
			}
		}
	}
	rep.Selectors = len(sels)
	var counts []engine.SeriesCount
	if ds != nil {
		counts = engine.CountSeries(ctx, ds, sels, now)
	} else {
		counts = inv.countScraped(found, sels, indexOf)
	}
	for _, f := range found {
		c := counts[indexOf[f.Checked]]
		switch {
		case c.Err != nil:
			f.Err = c.Err
			rep.Failed = append(rep.Failed, f)
		case c.Series == 0:
			rep.Dead = append(rep.Dead, f)
		}
	}
	return rep, nil
}

// countScraped counts, for each selector, the scraped series its
// matchers match.
func (inv *Inventory) countScraped(found []Finding, sels []string, indexOf map[string]int) []engine.SeriesCount {
	matchers := make([][]*labels.Matcher, len(sels))
	for _, f := range found {
		matchers[indexOf[f.Checked]] = f.Matchers
	}
	out := make([]engine.SeriesCount, len(sels))
	for i, ms := range matchers {
		for _, s := range inv.series {
			if !slices.ContainsFunc(ms, func(m *labels.Matcher) bool { return !m.Matches(s.Get(m.Name)) }) {
				out[i].Series++
			}
		}
	}
	return out
}
