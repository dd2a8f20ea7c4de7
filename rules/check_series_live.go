package rules

import (
	"github.com/prometheus/prometheus/promql/parser"
)

// CheckSeriesLive asks the Prometheus given with --prometheus whether each
// selector of an expression has series.
const CheckSeriesLive = "series/live"

var checkSeriesLive = &Check{
	Name: CheckSeriesLive,
	Help: "With --prometheus URL: every selector of an expression matches at least one series on that server, and when it " +
		"does not the finding says why: the name never had series in the lookback (7d), it disappeared, or which matcher " +
		"excludes every series and what values the label has (selectors under absent() and names recorded by the same file " +
		"are skipped; each selector is asked once per file; an unreachable server is one finding for the run).",
	Severity: Warning,
	Online:   true,
	File:     perRule(seriesLive),
}

func seriesLive(p *Pass, r *Rule, ff *fileFacts) {
	if !ruleExprOK(r) || p.Config == nil || p.Config.Prometheus == nil || p.liveDown() {
		return
	}
	api, rich := p.Config.Prometheus.(LiveAPI)
	seen := map[string]bool{}
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs == nil || underAbsent(path) || p.liveDown() {
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
		msg, asked := ff.live[sel]
		if !asked {
			exists, err := p.Config.Prometheus.SeriesExist(sel)
			if err != nil {
				p.liveError(r, "/api/v1/series", err)
				return
			}
			msg = ""
			if !exists {
				msg = "no series matches " + sel + " on the Prometheus server"
				if rich {
					msg = diagnoseSelector(p, r, api, vs, sel)
				}
			}
			if ff.live == nil {
				ff.live = map[string]string{}
			}
			ff.live[sel] = msg
		}
		if msg != "" {
			p.ReportExpr(r, vs.PositionRange(), "%s", msg)
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
