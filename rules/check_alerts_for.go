package rules

import (
	"time"
)

// `for` and `keep_firing_for` that cannot do what their author meant.
var checkAlertsFor = &Check{
	Name:     "alerts/for",
	Help:     "for and keep_firing_for are meaningful: not shorter than the evaluation interval, not absurdly long.",
	Severity: Warning,
	Rule:     lintFor,
}

// A `for` longer than this is almost always a unit mistake (7d instead of 7m);
// Prometheus also forgets pending state older than its outage tolerance (1h
// by default) across restarts.
const maxSensibleFor = 24 * time.Hour

func lintFor(p *Pass, r *Rule) {
	if !r.IsAlert() {
		return
	}
	interval := time.Duration(0)
	if r.Group.Interval != nil {
		interval = time.Duration(r.Group.Interval.Value)
	}
	if r.For != nil && r.For.Value != 0 {
		d := time.Duration(r.For.Value)
		switch {
		case interval > 0 && d < interval:
			p.ReportNode(r.For.Node, "for: %s is shorter than the group's evaluation interval %s: the alert fires on the second evaluation that matches, %s after the first",
				r.For.Value, r.Group.Interval.Value, r.Group.Interval.Value)
		case d > maxSensibleFor:
			p.ReportNode(r.For.Node, "for: %s is longer than a day: one gap in the data (a missed scrape, a query error) or an evaluator outage longer than its restore tolerance (Prometheus: 1h) starts the wait over, so the alert stays pending that long again; use a longer range in the expression instead", r.For.Value)
		}
	}
	if r.KeepFiringFor != nil && r.KeepFiringFor.Value != 0 {
		d := time.Duration(r.KeepFiringFor.Value)
		switch {
		case interval > 0 && d < interval:
			p.ReportNode(r.KeepFiringFor.Node, "keep_firing_for: %s is shorter than the group's evaluation interval %s and has no effect", r.KeepFiringFor.Value, r.Group.Interval.Value)
		case d > maxSensibleFor:
			p.ReportNode(r.KeepFiringFor.Node, "keep_firing_for: %s is longer than a day: a resolved problem keeps paging for that long", r.KeepFiringFor.Value)
		}
	}
}
