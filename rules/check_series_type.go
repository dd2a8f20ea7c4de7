package rules

import (
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// With a live server, the types the catalogue does not know come from the
// server's metadata (the # TYPE lines it scraped): a counter used raw and
// rate() of a gauge are then reported for any exporter's metrics, not
// only the LLM servers'.
var checkSeriesType = &Check{
	Name: "series/type",
	Help: "With --prometheus URL: for metrics the catalogue does not know, the type from the server's metadata: a counter is used " +
		"through rate()/increase()/irate(), and rate()/increase()/irate() is not applied to a gauge.",
	Severity: Warning,
	Online:   true,
	File:     perRule(lintSeriesType),
}

func lintSeriesType(p *Pass, r *Rule, ff *fileFacts) {
	if !ruleExprOK(r) || p.liveDown() || p.live().missing["/api/v1/metadata"] {
		return
	}
	api, ok := p.Config.Prometheus.(LiveAPI)
	if !ok {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, path []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || p.liveDown() || p.live().missing["/api/v1/metadata"] {
			return
		}
		name, ok := selectorName(vs)
		if !ok || ff.isRecorded(name) {
			return
		}
		if _, fromCatalog := seriesType(name, r, ff); fromCatalog {
			return // the catalogue's checks have it
		}
		t, ok := metadataType(p, r, api, name)
		if !ok {
			return
		}
		switch {
		case t == "counter" && rawCounterUse(vs, name, path, r.IsAlert()):
			p.ReportExpr(r, vs.PositionRange(), "%s is a counter (the server's metadata says so): its raw value is a running total "+
				"since the process started; use rate(), irate() or increase() on it", name)
		case t == "gauge":
			if fn := rateOver(path); fn != "" {
				p.ReportExpr(r, vs.PositionRange(), "%s() on %s, a gauge by the server's metadata: %s assumes a counter and reads "+
					"every drop as a reset; use deriv() or delta()", fn, name, fn)
			}
		}
	})
}

// metadataType asks the server for the type of the family a series name
// belongs to, trying the name and the name without its counter or
// histogram suffix. Answers are kept for the run.
func metadataType(p *Pass, r *Rule, api LiveAPI, name string) (string, bool) {
	st := p.live()
	if t, ok := st.types[name]; ok {
		return t, t != ""
	}
	cands := []string{name}
	for _, suf := range []string{"_total", "_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			cands = append(cands, base)
		}
	}
	t := ""
	for _, c := range cands {
		got, err := api.MetricType(c)
		if err != nil {
			p.liveError(r, "/api/v1/metadata", err)
			return "", false
		}
		if got != "" && got != "unknown" {
			t = got
			if c != name && (got == "histogram" || got == "summary") {
				t = "counter" // _bucket, _count and _sum series of a histogram count
			}
			break
		}
	}
	st.types[name] = t
	return t, t != ""
}

// rateOver names the counter function a selector is the range argument of.
func rateOver(path []parser.Node) string {
	if len(path) < 2 {
		return ""
	}
	if _, ok := path[len(path)-1].(*parser.MatrixSelector); !ok {
		return ""
	}
	for i := len(path) - 2; i >= 0; i-- {
		switch n := path[i].(type) {
		case *parser.ParenExpr:
			continue
		case *parser.Call:
			switch fn := callName(n); fn {
			case "rate", "irate", "increase":
				return fn
			}
		}
		return ""
	}
	return ""
}
