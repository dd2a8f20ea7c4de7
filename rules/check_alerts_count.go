package rules

import (
	"time"

	"github.com/prometheus/common/model"
)

// With a live server, each alert is replayed over the recent past: how
// many times it would have fired, honouring `for` and keep_firing_for.
// An alert that would have fired fifty times yesterday is noise; one that
// never could have is worth a second look.
var checkAlertsCount = &Check{
	Name: "alerts/count",
	Help: "With --prometheus URL: how many times each alert would have fired over the last day (lint.prometheus.window), " +
		"honouring for and keep_firing_for, and on how many series (info).",
	Severity: Info,
	Online:   true,
	Rule:     lintAlertsCount,
}

func lintAlertsCount(p *Pass, r *Rule) {
	if !r.IsAlert() || !ruleExprOK(r) || p.liveDown() || p.live().missing["/api/v1/query_range"] {
		return
	}
	api, ok := p.Config.Prometheus.(LiveAPI)
	if !ok {
		return
	}
	window := p.Config.LiveWindow
	step := time.Minute
	if r.Group != nil && r.Group.Interval != nil && r.Group.Interval.Value > 0 {
		step = time.Duration(r.Group.Interval.Value)
	}
	for window/step > 10000 {
		step *= 2
	}
	m, err := api.QueryRange(r.Expr.Value, window, step)
	if err != nil {
		if Unreachable(err) {
			p.liveError(r, "/api/v1/query_range", err)
		} else {
			p.ReportSeverity(Info, p.File.NodeRange(r.Expr.Node), "could not replay the alert over the last %s: %v", model.Duration(window), err)
		}
		return
	}
	var forD, keep time.Duration
	if r.For != nil {
		forD = time.Duration(r.For.Value)
	}
	if r.KeepFiringFor != nil {
		keep = time.Duration(r.KeepFiringFor.Value)
	}
	fires, series, firing := replayAlert(m, step, forD, keep)
	node := r.Node
	if r.Alert != nil {
		node = r.Alert.Node
	}
	if fires == 0 {
		p.ReportNode(node, "would not have fired in the last %s (the expression returned %d series)", model.Duration(window), len(m))
		return
	}
	p.ReportNode(node, "would have fired %d %s in the last %s, on %d series, firing %s in all",
		fires, plural(fires, "time", "times"), model.Duration(window), series, model.Duration(firing.Round(step)))
}

// replayAlert counts firings in a range result: a series is active at the
// steps where it has a sample; it fires once it has been active for `for`
// without a gap, and stays firing through gaps up to keep_firing_for.
func replayAlert(m model.Matrix, step, forD, keep time.Duration) (fires, series int, firing time.Duration) {
	for _, s := range m {
		n := 0
		var activeSince, lastSeen model.Time
		isFiring, started := false, false
		for _, v := range s.Values {
			gap := started && v.Timestamp.Sub(lastSeen) > step
			if gap {
				if isFiring && v.Timestamp.Sub(lastSeen) <= keep+step {
					// keep_firing_for bridges the gap
				} else {
					if isFiring {
						firing += lastSeen.Sub(activeSince.Add(forD)) + step
					}
					isFiring, started = false, false
				}
			}
			if !started {
				started, activeSince = true, v.Timestamp
			}
			lastSeen = v.Timestamp
			if !isFiring && v.Timestamp.Sub(activeSince) >= forD {
				isFiring = true
				n++
			}
		}
		if isFiring {
			firing += lastSeen.Sub(activeSince.Add(forD)) + step
		}
		if n > 0 {
			series++
			fires += n
		}
	}
	return fires, series, firing
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
