package rules

import "strings"

// CheckCatalogUnknownMetric reports names with a known LLM server's prefix
// that the server does not export.
const CheckCatalogUnknownMetric = "catalog/unknown-metric"

var checkCatalogUnknownMetric = &Check{
	Name: CheckCatalogUnknownMetric,
	Help: "A metric with the prefix of a known LLM server (vllm:, tgi_, sglang:, nv_, DCGM_) is one that server exports; " +
		"names it never exported are errors with the catalogue's advice, other unknown names are warnings with a \"did you mean\" " +
		"(for dcgm-exporter, whose fields are configurable, only likely typos are reported). A misspelt prefix (sglang_, sgl:, vllm_, tgi:, " +
		"nv:, dcgm_fi_) is reported when the right prefix gives a known name; triton_server_, triton_inference_ and sglang_ names " +
		"get the closest known name even when the right prefix gives none. A real DCGM field that dcgm-exporter's default counters " +
		"leave out (DCGM_FI_DEV_FB_TOTAL) is info: enable it in the collectors file. Other GPU exporters' names (nvidia_gpu_*, " +
		"nvidia_smi_*) are not Triton's and are left alone.",
	Severity: Warning,
	File:     perRule(catalogUnknownMetric),
}

// nearMissRest is a name with a misspelt prefix without that prefix, for
// messages: triton_server_foo is foo, sglang_foo is foo.
func nearMissRest(name string) string {
	lower := strings.ToLower(name)
	for _, p := range []string{"triton_server_", "triton_", "sglang_"} {
		if strings.HasPrefix(lower, p) {
			return name[len(p):]
		}
	}
	return name
}

func catalogUnknownMetric(p *Pass, r *Rule, ff *fileFacts) {
	cat := llmCatalog()
	for _, s := range llmSelectors(r, ff) {
		pr := s.VS.PositionRange()
		switch s.Verdict {
		case vNotReal:
			p.ReportSeverity(Error, p.File.ExprRange(r.Expr, int(pr.Start), int(pr.End)),
				"%s was never exported by %s: use %s", s.Name, s.NotReal.Server.Title, s.NotReal.Advice)
		case vNearMiss:
			if s.Fuzzy {
				p.ReportExpr(r, pr, "%s is not a %s metric: %s's names start with %s and none is %s%s; the closest is %s "+
					"(if a collector renamed the series on purpose, silence this with # paged:disable %s)",
					s.Name, s.Server.Title, s.Server.Title, s.AltPrefix, s.AltPrefix, nearMissRest(s.Name), s.AltName, CheckCatalogUnknownMetric)
				continue
			}
			p.ReportExpr(r, pr, "%s does not have %s's prefix %s, so it matches nothing a %s server exports: did you mean %s? "+
				"(if a collector renamed the series on purpose, silence this with # paged:disable %s)",
				s.Name, s.Server.Title, s.AltPrefix, s.Server.Title, s.AltName, CheckCatalogUnknownMetric)
		case vUnknown:
			if s.Server.Key == "dcgm_exporter" && cat.DCGMField(s.Name) {
				p.ReportSeverity(Info, p.File.ExprRange(r.Expr, int(pr.Start), int(pr.End)),
					"%s is a DCGM field that dcgm-exporter does not collect by default (it is not in the exporter's etc/default-counters.csv): "+
						"the rule matches nothing until the exporter's collectors file (-f / --collectors, DCGM_EXPORTER_COLLECTORS) lists it",
					s.Name)
				continue
			}
			if sug := cat.Suggest(s.Name); sug != "" {
				p.ReportExpr(r, pr, "%s is not a %s metric; did you mean %s?", s.Name, s.Server.Title, sug)
			} else if !s.Server.Open {
				p.ReportExpr(r, pr, "%s is not in paged's catalogue of %s metrics: check the server's /metrics output "+
					"(a metric newer than the catalogue can be silenced with # paged:disable %s)", s.Name, s.Server.Title, CheckCatalogUnknownMetric)
			}
		}
	}
}
