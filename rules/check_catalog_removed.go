package rules

import (
	"strings"

	"github.com/pagedhq/paged/rules/catalog"
)

// CheckCatalogRemovedMetric reports metrics that their server removed or
// renamed, with the version and the replacement.
const CheckCatalogRemovedMetric = "catalog/removed-metric"

var checkCatalogRemovedMetric = &Check{
	Name: CheckCatalogRemovedMetric,
	Help: "A metric that the server removed or renamed matches nothing on current releases; the finding names the version and the replacement. " +
		"Rules for vLLM's legacy V0 engine carry the label server: vllm-v0 (on the rule or its group): there V0 names are accepted and V1-only names are reported instead.",
	Severity: Error,
	File:     perRule(catalogRemovedMetric),
}

func catalogRemovedMetric(p *Pass, r *Rule, ff *fileFacts) {
	for _, s := range llmSelectors(r, ff) {
		pr := s.VS.PositionRange()
		switch s.Verdict {
		case vRemoved:
			p.ReportExpr(r, pr, "%s", removedText(s, true))
		case vEngine:
			p.ReportSeverity(Warning, p.File.ExprRange(r.Expr, int(pr.Start), int(pr.End)),
				"%s exists only in vLLM's V1 engine, but this rule is labelled server: vllm-v0", s.Name)
		}
	}
}

// removedText says when the metric was removed and what replaces it;
// v0Advice adds how to mark a rule written for vLLM's V0 engine.
func removedText(s llmSelector, v0Advice bool) string {
	m := s.Series.Metric
	var b strings.Builder
	b.WriteString(s.Name)
	b.WriteString(" was removed from ")
	b.WriteString(s.Server.Title)
	if u := strings.TrimSpace(m.Until); u != "" {
		if c := u[0]; c >= '0' && c <= '9' || c == '~' {
			b.WriteString(" in ")
			b.WriteString(u)
		} else if rest, ok := strings.CutPrefix(u, "removed "); ok {
			b.WriteString(" " + rest)
		} else {
			b.WriteString(" (" + u + ")")
		}
	}
	if m.ReplacedBy != "" {
		b.WriteString(": use ")
		b.WriteString(replacement(m.ReplacedBy, s.Series.Suffix))
	} else {
		b.WriteString(": there is no replacement")
		if n := lowerFirst(firstSentence(m.Note)); n != "" {
			b.WriteString(" (" + n + ")")
		}
	}
	if v0Advice && s.Server.Key == "vllm" && m.HasEngine("v0") {
		b.WriteString("; if this rule is for a V0 deployment, label it server: vllm-v0")
	}
	return b.String()
}

// replacement carries a histogram suffix over to a replacement that is a
// plain metric name (vllm:time_per_output_token_seconds_bucket →
// vllm:inter_token_latency_seconds_bucket).
func replacement(repl, suffix string) string {
	if suffix == "" || strings.ContainsAny(repl, " ()/") {
		return repl
	}
	if m := llmCatalog().Metric(repl); m != nil && m.Type != catalog.Histogram && m.Type != catalog.Summary {
		return repl
	}
	return repl + suffix
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i]
	}
	return strings.TrimSuffix(s, ".")
}

func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}
