package rules

import "github.com/pagedhq/paged/rules/catalog"

// CheckCatalogSeriesSuffix reports _bucket, _sum and _count on metrics
// that are not histograms or summaries, and bare histogram names.
const CheckCatalogSeriesSuffix = "catalog/series-suffix"

var checkCatalogSeriesSuffix = &Check{
	Name: CheckCatalogSeriesSuffix,
	Help: "_bucket exists only for histograms, _sum and _count only for histograms and summaries, _created only for counters and histograms of vLLM; " +
		"the bare name of a classic histogram matches nothing (LLM servers expose no native histograms).",
	Severity: Error,
	File:     perRule(catalogSeriesSuffix),
}

func catalogSeriesSuffix(p *Pass, r *Rule, ff *fileFacts) {
	for _, s := range llmSelectors(r, ff) {
		if s.Verdict != vWrongSuffix {
			continue
		}
		pr := s.VS.PositionRange()
		m := s.Series.Metric
		switch {
		case s.Series.Suffix == "" && m.Type == catalog.Histogram:
			p.ReportSeverity(Warning, p.File.ExprRange(r.Expr, int(pr.Start), int(pr.End)),
				"%s is a classic histogram: select %s_bucket, %s_sum or %s_count (the bare name exists only for native histograms, which %s does not expose)",
				s.Name, m.Name, m.Name, m.Name, m.Server.Title)
		case s.Series.Suffix == "_bucket" && m.Type == catalog.Summary:
			p.ReportExpr(r, pr, "%s matches no series: %s is a summary, it has quantile series, _sum and _count but no _bucket", s.Name, m.Name)
		case s.Series.Suffix == "_created":
			p.ReportExpr(r, pr, "%s matches no series: %s is a %s, and %s exposes no _created series for it", s.Name, m.Name, typeName(m.Type), m.Server.Title)
		default:
			p.ReportExpr(r, pr, "%s matches no series: %s is a %s, not a histogram", s.Name, m.Name, typeName(m.Type))
		}
	}
}

func typeName(t catalog.Type) string {
	if t == catalog.Unknown {
		return "metric of unknown type"
	}
	return string(t)
}
