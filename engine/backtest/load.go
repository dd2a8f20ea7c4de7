package backtest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules"
)

// ruleSpec is one alerting rule to replay, with its group's settings.
type ruleSpec struct {
	file, group  string
	interval     time.Duration
	queryOffset  time.Duration
	limit        int
	name         string
	expr         parser.Expr
	hold, keep   time.Duration
	lbls, annots labels.Labels
	threshold    *Threshold
}

// load reads the rule files with paged's loader (every error with its
// file:line:col) and returns the alerting rules the options select, with
// the threshold overrides applied.
func load(o *Options) ([]*ruleSpec, error) {
	p := parser.NewParser(parser.Options{})
	var (
		specs []*ruleSpec
		errs  []error
	)
	files := slices.Clone(o.Files)
	for _, path := range o.RuleFiles {
		f, err := rules.ReadFile(path, rules.ParseOptions{Parser: p})
		if err != nil {
			errs = append(errs, fmt.Errorf("rule file: %w", err))
			continue
		}
		files = append(files, f)
	}
	for _, f := range files {
		path := f.Path
		if fe := f.Errors(); len(fe) > 0 {
			errs = append(errs, fe...)
			continue
		}
		rgs := f.RuleGroups()
		if rgs == nil {
			continue
		}
		for _, g := range rgs.Groups {
			interval := time.Duration(g.Interval)
			if interval <= 0 {
				interval = o.EvaluationInterval
			}
			var offset time.Duration
			if g.QueryOffset != nil {
				offset = time.Duration(*g.QueryOffset)
			}
			for _, r := range g.Rules {
				if r.Alert == "" || (o.Rules != nil && !o.Rules.MatchString(r.Alert)) {
					continue
				}
				expr, err := p.ParseExpr(r.Expr)
				if err != nil {
					// The loader already checked; this is unexpected.
					errs = append(errs, fmt.Errorf("%s: group %s: alert %s: %w", path, g.Name, r.Alert, err))
					continue
				}
				// Group labels apply to every rule; the rule's own win.
				lm := maps.Clone(g.Labels)
				if lm == nil {
					lm = map[string]string{}
				}
				maps.Copy(lm, r.Labels)
				specs = append(specs, &ruleSpec{
					file: path, group: g.Name, interval: interval, queryOffset: offset, limit: g.Limit,
					name: r.Alert, expr: expr, hold: time.Duration(r.For), keep: time.Duration(r.KeepFiringFor),
					lbls: labels.FromMap(lm), annots: labels.FromMap(r.Annotations),
					threshold: SplitThreshold(expr),
				})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := applyThresholds(specs, o.Thresholds); err != nil {
		return nil, err
	}
	return specs, nil
}

// applyThresholds applies --set: every selected rule of that name gets the
// value. A name that selects no rule, or a rule without a threshold, is an
// error, so that a typo never passes for a comparison.
func applyThresholds(specs []*ruleSpec, set map[string]float64) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(set)) {
		found := false
		for _, s := range specs {
			if s.name != name {
				continue
			}
			found = true
			if s.threshold == nil {
				errs = append(errs, fmt.Errorf("--set %s: %s:%s: expression %q has no top-level comparison with a number", name, s.file, s.group, s.expr.String()))
				continue
			}
			s.threshold.Set(set[name])
		}
		if !found {
			errs = append(errs, fmt.Errorf("--set %s: no selected alerting rule has that name", name))
		}
	}
	return errors.Join(errs...)
}
