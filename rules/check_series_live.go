package rules

import (
	"github.com/prometheus/prometheus/promql/parser"
)

// CheckSeriesLive asks the Prometheus given with --prometheus whether each
// selector of an expression has series.
const CheckSeriesLive = "series/live"

var checkSeriesLive = &Check{
	Name: CheckSeriesLive,
	Help: "With --prometheus URL: every selector of an expression matches at least one series on that server " +
		"(selectors under absent() and names recorded by the same file are skipped; each selector is asked once per file).",
	Severity: Warning,
	Online:   true,
	File:     perRule(seriesLive),
}

func seriesLive(p *Pass, r *Rule, ff *fileFacts) {
	if !ruleExprOK(r) || p.Config == nil || p.Config.Prometheus == nil {
		return
	}
	seen := map[string]bool{}
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs == nil || underAbsent(path) || ff.liveErr != nil {
			return
		}
		if name, ok := selectorName(vs); ok && ff.isRecorded(name) {
			return
		}
		sel := (&parser.VectorSelector{Name: vs.Name, LabelMatchers: vs.LabelMatchers}).String()
		if seen[sel] {
			return
		}
		seen[sel] = true
		exists, asked := ff.live[sel]
		if !asked {
			var err error
			exists, err = p.Config.Prometheus.SeriesExist(sel)
			if err != nil {
				// One finding per file: the next selectors would fail the same way.
				ff.liveErr = err
				p.ReportExpr(r, vs.PositionRange(), "could not ask Prometheus about %s (not asking again for this file): %v", sel, err)
				return
			}
			if ff.live == nil {
				ff.live = map[string]bool{}
			}
			ff.live[sel] = exists
		}
		if !exists {
			p.ReportExpr(r, vs.PositionRange(), "no series matches %s on the Prometheus server", sel)
		}
	})
}

func underAbsent(path []parser.Node) bool {
	for _, n := range path {
		if c, ok := n.(*parser.Call); ok {
			if fn := callName(c); fn == "absent" || fn == "absent_over_time" {
				return true
			}
		}
	}
	return false
}
