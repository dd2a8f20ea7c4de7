package rules

import (
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
)

// rate() needs two samples in its window; with jitter and a missed scrape a
// window of less than two scrape intervals often has fewer, and the rule
// silently returns nothing.
var checkPromQLRange = &Check{
	Name:     "promql/range",
	Help:     "Range selectors span at least min_range_scrapes (default 2) scrape intervals (default 15s), so the window always holds enough samples.",
	Severity: Warning,
	Rule:     lintRange,
}

func lintRange(p *Pass, r *Rule) {
	if r.Expr == nil || isNilNode(r.Expr.AST) || p.Config.ScrapeInterval <= 0 {
		return
	}
	minRange := time.Duration(max(1, p.Config.MinRangeScrapes)) * p.Config.ScrapeInterval
	walkAST(r.Expr.AST, func(node parser.Node, _ []parser.Node) {
		ms, ok := node.(*parser.MatrixSelector)
		if !ok || ms == nil || ms.RangeExpr != nil {
			return
		}
		if ms.Range > 0 && ms.Range < minRange {
			p.ReportExpr(r, ms.PositionRange(), "range [%s] is shorter than %d scrape intervals of %s: the window may hold too few samples and the expression returns nothing",
				model.Duration(ms.Range), max(1, p.Config.MinRangeScrapes), model.Duration(p.Config.ScrapeInterval))
		}
		return
	})
}
