package rules

import (
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules/catalog"
)

// CheckPromQLLeBucket reports exact le="..." matchers that are not a
// bucket boundary of the histogram, or are not written the way
// Prometheus stores the boundary.
//
// Every finding is an error, as listed: each is a matcher that selects no
// series on Prometheus 3 (le="120" where Prometheus 3 stores "120.0",
// le="inf" where every version stores "+Inf", a value that is no
// boundary), so the rule never fires there. Prometheus 3 is the release
// paged judges by (the current major line; its LTS releases replaced
// 2.53's); where the short spelling of a Rust or C++ server's boundary
// still matches on Prometheus 2, the message gives a matcher for both.
const CheckPromQLLeBucket = "promql/le-bucket"

var checkPromQLLeBucket = &Check{
	Name: CheckPromQLLeBucket,
	Help: "An exact le=\"...\" matcher on a catalogued histogram must be one of its bucket boundaries, written as stored: " +
		"Prometheus 3 normalises le to the float form (le=\"120.0\", le=\"0.5\"), Prometheus 2 keeps the server's text " +
		"(Python prometheus_client writes \"120.0\" too). le=\"120\" matches nothing on either for vLLM. Every finding is an error: " +
		"each matcher selects no series on Prometheus 3.",
	Severity: Error,
	File:     perRule(promqlLeBucket),
}

func promqlLeBucket(p *Pass, r *Rule, ff *fileFacts) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs == nil {
			return
		}
		name, ok := selectorName(vs)
		if !ok || ff.isRecorded(name) {
			return
		}
		s, ok := resolveFor(name, r)
		if !ok || s.Suffix != "_bucket" || s.Metric.Type != catalog.Histogram || len(s.Metric.Buckets) == 0 {
			return
		}
		for _, mt := range vs.LabelMatchers {
			if mt == nil || mt.Name != "le" || mt.Type != labels.MatchEqual {
				continue
			}
			checkLe(p, r, vs, s.Metric, mt.Value)
		}
	})
}

func checkLe(p *Pass, r *Rule, vs *parser.VectorSelector, m *catalog.Metric, val string) {
	pr := p.matcherRange(r.Expr, vs, "le")
	f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil {
		p.ReportExpr(r, pr, "le=%q is not a number, so it matches no bucket of %s", val, m.Name)
		return
	}
	if math.IsInf(f, 1) {
		if val != "+Inf" {
			p.ReportExpr(r, pr, "le=%q matches nothing: the last bucket is stored as le=\"+Inf\"", val)
		}
		return
	}
	if !isBoundary(m, f) {
		lo, hi := neighbours(m.Buckets[0], f)
		p.ReportExpr(r, pr, "le=%q is not a bucket boundary of %s, so it matches no series; the nearest boundaries are %s and %s",
			val, m.Name, lo, hi)
		return
	}
	stored := labels.FormatOpenMetricsFloat(f)
	if val == stored {
		return
	}
	how := "Prometheus 2 keeps the text the server wrote; match both with le=~\"" + strings.ReplaceAll(regexpFloat(val, stored), `\`, `\\`) + "\""
	if m.Server != nil && m.Server.CounterTotal {
		how = m.Server.Title + "'s prometheus_client writes le=\"" + stored + "\" too, so Prometheus 2 stores the same: use le=\"" + stored + "\""
	}
	p.ReportExpr(r, pr, "le=%q matches nothing on Prometheus 3, which stores this bucket boundary as le=%q; %s", val, stored, how)
}

func isBoundary(m *catalog.Metric, f float64) bool {
	for _, set := range m.Buckets {
		for _, b := range set {
			if b == f || math.Abs(b-f) <= 1e-9*math.Max(1, math.Abs(b)) {
				return true
			}
		}
	}
	return false
}

func neighbours(set []float64, f float64) (string, string) {
	lo, hi := "none", "+Inf"
	for _, b := range set {
		if b < f {
			lo = labels.FormatOpenMetricsFloat(b)
		} else if b > f {
			hi = labels.FormatOpenMetricsFloat(b)
			break
		}
	}
	return lo, hi
}

// regexpFloat is a regular expression matching both spellings.
func regexpFloat(a, b string) string {
	short, long := a, b
	if len(short) > len(long) {
		short, long = long, short
	}
	if rest, ok := strings.CutPrefix(long, short); ok && rest != "" {
		return strings.ReplaceAll(short, ".", `\.`) + "(" + strings.ReplaceAll(rest, ".", `\.`) + ")?"
	}
	return strings.ReplaceAll(a, ".", `\.`) + "|" + strings.ReplaceAll(b, ".", `\.`)
}
