package ruletest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/rules"
)

// FiringAlert is an alert a rule test produces at a time: what the engine
// would hand to the notifier.
type FiringAlert struct {
	Labels      labels.Labels
	Annotations labels.Labels
	ActiveAt    time.Time
	FiredAt     time.Time
}

// capture collects the firing alerts of every alerting rule after the
// evaluation at evalTime.
type capture struct {
	evalTime time.Duration
	alerts   []FiringAlert
	done     bool
}

func (c *capture) collect(groups []*rules.Group) {
	if c.done {
		return
	}
	c.done = true
	for _, g := range groups {
		for _, rule := range g.Rules() {
			ar, ok := rule.(*rules.AlertingRule)
			if !ok {
				continue
			}
			for _, a := range ar.ActiveAlerts() {
				if a.State == rules.StateFiring {
					c.alerts = append(c.alerts, FiringAlert{
						Labels: a.Labels.Copy(), Annotations: a.Annotations.Copy(),
						ActiveAt: a.ActiveAt.UTC(), FiredAt: a.FiredAt.UTC(),
					})
				}
			}
		}
	}
}

// AlertsAt runs the input series and rules of the test file at path and
// returns the alerts firing evalTime after each test group's start: of
// the group named group, or of every group when group is empty. The
// groups' own assertions are not checked. An error names the file's
// position of the problem.
func AlertsAt(ctx context.Context, opts Options, path, group string, evalTime time.Duration) ([]FiringAlert, error) {
	opts.fill()
	content, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tf, errs := Parse(path, content)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	ruleFiles, _, err := resolveRuleFiles(tf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	order := map[string]int{}
	for i, name := range tf.GroupEvalOrder {
		order[name] = i
	}
	evalInterval := tf.EvaluationInterval
	if evalInterval == 0 {
		evalInterval = time.Minute
	}
	r := &runner{opts: opts, rules: newRuleCache(opts.LoadRules, opts.Parser), cov: newCoverage()}
	var out []FiringAlert
	found := false
	for i := range tf.Tests {
		tg := tf.Tests[i]
		if group != "" && tg.Name != group {
			continue
		}
		found = true
		tg.AlertRuleTests, tg.PromQLTests = nil, nil
		c := &capture{evalTime: evalTime}
		gr := &GroupResult{Name: tg.Name, Pos: tg.Pos}
		g := groupRun{file: tf, group: &tg, evalInterval: evalInterval, order: order, ruleFiles: ruleFiles, result: gr, capture: c}
		if err := r.group(ctx, g, io.Discard); err != nil {
			return nil, err
		}
		if len(gr.Failures) > 0 {
			return nil, errors.New(gr.Failures[0].String())
		}
		out = append(out, c.alerts...)
	}
	if !found {
		if group != "" {
			return nil, fmt.Errorf("%s: no test group named %q", path, group)
		}
		return nil, fmt.Errorf("%s: no test groups", path)
	}
	return out, nil
}
