package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules/catalog"
)

// CheckCatalogLabel reports label matchers and by/without labels that the
// selected LLM metric does not have.
const CheckCatalogLabel = "catalog/label"

var checkCatalogLabel = &Check{
	Name: CheckCatalogLabel,
	Help: "Label matchers and by/without labels on a known LLM metric use labels that metric has (vllm:* has model_name, not model). " +
		"To keep false positives rare, only labels that some LLM server exposes are checked: target labels added by the scrape " +
		"configuration or relabelling (job, instance, pod, namespace, cluster, ...) are never reported. vLLM's HTTP layer " +
		"(http_request_duration_seconds has method and handler; status is on http_requests_total) is checked in rules about vLLM " +
		"(server label, a name or group naming vLLM, a vllm: metric or a vllm label value in the expression), with code, status_code, path and route.",
	Severity: Warning,
	File:     perRule(catalogLabel),
}

func catalogLabel(p *Pass, r *Rule, ff *fileFacts) {
	sels := llmSelectors(r, ff)
	if len(sels) == 0 {
		return
	}
	cat := llmCatalog()
	v0 := targetsV0(r)
	for _, s := range sels {
		if s.Verdict != vKnown {
			continue
		}
		m := s.Series.Metric
		for _, mt := range s.VS.LabelMatchers {
			if mt == nil || mt.Name == labels.MetricName {
				continue
			}
			if seriesHasLabel(s.Series, mt.Name, v0) {
				checkLabelValue(p, r, s, mt)
				continue
			}
			if !cat.KnownLabel(mt.Name) && !(m.Layer == "http" && httpLabels[mt.Name] != "") {
				continue
			}
			sev := Warning // a negative matcher that does nothing
			switch {
			case !mt.Matches(""):
				sev = Error // the matcher needs a value the label never has
			case mt.Type == labels.MatchEqual || mt.Type == labels.MatchRegexp:
				continue // l="" asserts the label is absent: deliberate
			}
			pr := p.matcherRange(r.Expr, s.VS, mt.Name)
			p.ReportSeverity(sev, p.File.ExprRange(r.Expr, int(pr.Start), int(pr.End)),
				"%s has no label %q%s", s.Name, mt.Name, labelHint(m, s.Series, mt.Name))
		}
	}
	byName := map[*parser.VectorSelector]llmSelector{}
	for _, s := range sels {
		byName[s.VS] = s
	}
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		agg, ok := n.(*parser.AggregateExpr)
		if !ok || agg == nil || len(agg.Grouping) == 0 {
			return
		}
		inner, ok := knownSelectorsUnder(agg.Expr, byName)
		if !ok {
			return
		}
		for _, l := range agg.Grouping {
			if !cat.KnownLabel(l) && !(httpLabels[l] != "" && allHTTP(inner)) {
				continue
			}
			found := false
			for _, s := range inner {
				if seriesHasLabel(s.Series, l, v0) {
					found = true
					break
				}
			}
			if found {
				continue
			}
			kw := "by"
			if agg.Without {
				kw = "without"
			}
			pr := groupingRange(r.Expr, agg, l)
			if len(inner) == 1 {
				p.ReportExpr(r, pr, "%s (%s): %s has no label %q%s", kw, l, inner[0].Name, l, labelHint(inner[0].Series.Metric, inner[0].Series, l))
			} else {
				var names []string
				for _, s := range inner {
					if !slices.Contains(names, s.Name) {
						names = append(names, s.Name)
					}
				}
				p.ReportExpr(r, pr, "%s (%s): none of %s has label %q", kw, l, strings.Join(names, ", "), l)
			}
		}
	})
}

// knownSelectorsUnder returns the catalogued selectors under an
// expression, or false when something under it can add labels the
// catalogue cannot see (another metric, label_replace, info, ...).
func knownSelectorsUnder(e parser.Expr, byVS map[*parser.VectorSelector]llmSelector) ([]llmSelector, bool) {
	var out []llmSelector
	ok := true
	walkAST(e, func(n parser.Node, _ []parser.Node) {
		switch n := n.(type) {
		case *parser.VectorSelector:
			s, known := byVS[n]
			if !known || s.Verdict != vKnown || s.Series.Metric.Labels == nil {
				ok = false
				return
			}
			out = append(out, s)
		case *parser.Call:
			if n != nil && n.Func != nil {
				switch n.Func.Name {
				case "label_replace", "label_join", "info":
					ok = false
				}
			}
		}
	})
	return out, ok && len(out) > 0
}

// seriesHasLabel: the metric's labels, plus le on _bucket series and
// quantile on the quantile series of a summary. vLLM's V0 engine had no
// engine label.
func seriesHasLabel(s catalog.Series, l string, v0 bool) bool {
	m := s.Metric
	switch {
	case l == "engine" && v0 && m.Server != nil && m.Server.Key == "vllm":
		return false
	case l == "le":
		return s.Suffix == "_bucket" || m.Labels == nil
	case l == "quantile":
		return s.Suffix == "" && m.Type == catalog.Summary || m.Labels == nil
	}
	return m.HasLabel(l)
}

func labelHint(m *catalog.Metric, s catalog.Series, l string) string {
	have := slices.DeleteFunc(slices.Clone(m.Labels), func(x string) bool { return l == "engine" && x == "engine" })
	if s.Suffix == "_bucket" {
		have = append(have, "le")
	}
	if s.Suffix == "" && m.Type == catalog.Summary {
		have = append(have, "quantile")
	}
	if len(have) == 0 {
		return fmt.Sprintf(" (%s puts no labels on it besides the target labels)", m.Server.Title)
	}
	hint := " (its labels: " + strings.Join(have, ", ") + ")"
	if c := catalog.Closest(l, have); c != "" {
		hint += "; did you mean " + c + "?"
	}
	if m.Layer != "" {
		want := l
		if syn := httpLabels[l]; syn != "" && syn != l {
			want = syn
			hint += "; " + m.Server.Title + "'s HTTP layer calls it " + syn
		}
		if others := llmCatalog().WithLabel(m.Server, m.Layer, want, m.Name); len(others) > 0 {
			hint += "; " + want + " is a label of " + strings.Join(others, " and ")
		}
	}
	return hint
}

// httpLabels are the labels HTTP instrumentation libraries put on their
// metrics (client_golang's promhttp: code, handler, method; others:
// status_code, path, route), none of them a target label: on a metric of
// vLLM's HTTP layer (prometheus-fastapi-instrumentator), whose labels the
// catalogue lists, a missing one is reported like a missing server label.
// The value is what the instrumentator calls the same thing.
var httpLabels = map[string]string{
	"code": "status", "status_code": "status", "status": "status",
	"path": "handler", "route": "handler", "handler": "handler", "method": "method",
}

// allHTTP reports whether every selector is a metric of an HTTP layer.
func allHTTP(sels []llmSelector) bool {
	for _, s := range sels {
		if s.Series.Metric == nil || s.Series.Metric.Layer != "http" {
			return false
		}
	}
	return len(sels) > 0
}

// checkLabelValue reports an exact matcher on a value the server never
// writes, for labels whose values the catalogue lists.
func checkLabelValue(p *Pass, r *Rule, s llmSelector, mt *labels.Matcher) {
	vals := s.Series.Metric.LabelValues[mt.Name]
	if len(vals) == 0 || mt.Type != labels.MatchEqual || mt.Value == "" || slices.Contains(vals, mt.Value) {
		return
	}
	pr := p.matcherRange(r.Expr, s.VS, mt.Name)
	p.ReportExpr(r, pr, "%s{%s=%q} matches no series: %s writes %s as one of %s", s.Name, mt.Name, mt.Value,
		s.Server.Title, mt.Name, strings.Join(vals, ", "))
}
