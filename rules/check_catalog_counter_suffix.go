package rules

import "github.com/pagedhq/paged/rules/catalog"

// CheckCatalogCounterSuffix reports counters written without the _total
// their server adds, or with a _total their server does not add.
const CheckCatalogCounterSuffix = "catalog/counter-suffix"

var checkCatalogCounterSuffix = &Check{
	Name: CheckCatalogCounterSuffix,
	Help: "vLLM and SGLang (Python prometheus_client) expose every counter as <name>_total; TGI, Triton and dcgm-exporter never add _total. " +
		"A counter written the other way matches no series, so the rule can never fire.",
	Severity: Error,
	File:     perRule(catalogCounterSuffix),
}

func catalogCounterSuffix(p *Pass, r *Rule, ff *fileFacts) {
	for _, s := range llmSelectors(r, ff) {
		pr := s.VS.PositionRange()
		switch s.Verdict {
		case vMissingTotal:
			p.ReportExpr(r, pr, "%s matches no series: %s exposes this counter as %s (prometheus_client adds _total)",
				s.Name, s.Server.Title, s.AltName)
		case vExtraTotal:
			if s.Alt.Metric.Type == catalog.Gauge {
				p.ReportExpr(r, pr, "%s matches no series: %s is a gauge, it has no _total", s.Name, s.AltName)
			} else {
				p.ReportExpr(r, pr, "%s matches no series: %s counters have no _total suffix, use %s", s.Name, s.Server.Title, s.AltName)
			}
		}
	}
}
