package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// With a live server: how many series each evaluation of a rule reads,
// selector by selector. A rule that reads 200,000 series every 30 s is
// the one that slows the server and times out first.
var checkQueryCost = &Check{
	Name: "query/cost",
	Help: "With --prometheus URL: how many series one evaluation of the rule reads, by selector (info; a warning above " +
		"lint.prometheus.max_series, default 100000).",
	Severity: Info,
	Online:   true,
	Rule:     lintQueryCost,
}

func lintQueryCost(p *Pass, r *Rule) {
	if !ruleExprOK(r) || p.liveDown() || p.live().missing["/api/v1/query"] {
		return
	}
	api, ok := p.Config.Prometheus.(LiveAPI)
	if !ok {
		return
	}
	type part struct {
		sel string
		n   int
	}
	var parts []part
	total := 0
	seen := map[string]bool{}
	failed := false
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || failed {
			return
		}
		sel := (&parser.VectorSelector{Name: vs.Name, LabelMatchers: vs.LabelMatchers}).String()
		if seen[sel] {
			return
		}
		seen[sel] = true
		c, err := api.CountSeries(sel)
		if err != nil {
			p.liveError(r, "/api/v1/query", err)
			failed = true
			return
		}
		parts = append(parts, part{sel, c})
		total += c
	})
	if failed || len(parts) == 0 {
		return
	}
	slices.SortStableFunc(parts, func(a, b part) int { return b.n - a.n })
	var b strings.Builder
	for i, pt := range parts {
		if i == 3 {
			fmt.Fprintf(&b, ", and %d more", len(parts)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", pt.sel, pt.n)
	}
	sev := Info
	if max := p.Config.LiveMaxSeries; max > 0 && total > max {
		sev = Warning
	}
	p.ReportSeverity(sev, p.File.NodeRange(r.Expr.Node), "one evaluation reads %d series (%s)", total, b.String())
}
