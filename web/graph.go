package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"

	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/rules"
)

// /graph charts an expression over a range, as Prometheus's graph page
// does for the same link (/graph?g0.expr=…&g0.range_input=1h): paged
// replays the expression as an alerting rule with the backtest, so the
// chart shows the rule's threshold and its pending and firing periods, and
// draws it with the backtest report's chart. The expression of a loaded
// rule (or g0.rule naming one) gets that rule's for, keep_firing_for and
// interval; any other expression is replayed with for: 0.

const (
	graphDefaultRange = time.Hour
	graphMaxRange     = 32 * 24 * time.Hour
	graphMaxPoints    = 2000 // evaluation steps replayed per chart
	graphTimeout      = 30 * time.Second
)

// graphRequest is /graph's query, checked.
type graphRequest struct {
	Expr, RangeInput, EndInput string
	From, To                   time.Time
	Step                       time.Duration
	Rule                       *promrules.AlertingRule
	RuleName                   string
}

func (h *Handler) parseGraphRequest(q url.Values, now time.Time) (*graphRequest, error) {
	g := &graphRequest{Expr: strings.TrimSpace(q.Get("g0.expr")), RangeInput: q.Get("g0.range_input"), EndInput: q.Get("g0.end_input"), RuleName: q.Get("g0.rule")}
	if g.Expr == "" {
		return g, nil // the empty form
	}
	if _, err := parser.NewParser(parser.Options{}).ParseExpr(g.Expr); err != nil {
		return g, fmt.Errorf("invalid expression: %v", err)
	}
	span := graphDefaultRange
	if g.RangeInput != "" {
		d, err := model.ParseDuration(g.RangeInput)
		if err != nil || d <= 0 {
			return g, fmt.Errorf("invalid range %q: want a duration such as 1h, 30m or 2d", g.RangeInput)
		}
		span = time.Duration(d)
	}
	g.To = now
	if g.EndInput != "" {
		t, err := parseGraphTime(g.EndInput, now)
		if err != nil {
			return g, fmt.Errorf("invalid end %q: %v", g.EndInput, err)
		}
		g.To = t
	}
	g.From = g.To.Add(-span)
	// from and to, as the backtest takes them, win over range and end.
	if v := q.Get("from"); v != "" {
		t, err := backtest.ParseTime(v, now)
		if err != nil {
			return g, fmt.Errorf("invalid from: %v", err)
		}
		g.From = t
	}
	if v := q.Get("to"); v != "" {
		t, err := backtest.ParseTime(v, now)
		if err != nil {
			return g, fmt.Errorf("invalid to: %v", err)
		}
		g.To = t
	}
	if !g.From.Before(g.To) {
		return g, errors.New("the range is empty: from must be before to")
	}
	if g.To.Sub(g.From) > graphMaxRange {
		return g, fmt.Errorf("the range is %s, more than the %s a chart covers", model.Duration(g.To.Sub(g.From)), model.Duration(graphMaxRange))
	}
	g.RangeInput = model.Duration(g.To.Sub(g.From)).String()

	// The rule behind the expression, if one is loaded.
	for _, grp := range h.engine().RuleGroups() {
		for _, r := range grp.AlertingRules() {
			if (g.RuleName != "" && r.Name() == g.RuleName) || (g.RuleName == "" && r.Query().String() == g.Expr) {
				if g.Rule == nil {
					g.Rule, g.Step = r, grp.Interval()
				}
			}
		}
	}
	if g.Rule != nil {
		g.RuleName = g.Rule.Name()
		if g.Rule.Query().String() != g.Expr {
			g.Rule = nil // the name of a rule with another expression
		}
	}
	span = g.To.Sub(g.From)
	if g.Step <= 0 {
		g.Step = max(span/300, time.Second).Round(time.Second)
	}
	if n := span / g.Step; n > graphMaxPoints {
		g.Step = (span / graphMaxPoints).Round(time.Second)
	}
	return g, nil
}

// parseGraphTime reads g0.end_input as Prometheus writes it
// ("2006-01-02 15:04:05", UTC) or as the backtest's --to.
func parseGraphTime(s string, now time.Time) (time.Time, error) {
	if t, err := time.ParseInLocation("2006-01-02 15:04:05", strings.TrimSpace(s), time.UTC); err == nil {
		return t, nil
	}
	return backtest.ParseTime(s, now)
}

// graphRule is the rule file the backtest replays.
func graphRule(g *graphRequest) (*rules.File, error) {
	name := "expression"
	var hold, keep time.Duration
	if g.Rule != nil {
		name, hold, keep = g.Rule.Name(), g.Rule.HoldDuration(), g.Rule.KeepFiringFor()
	}
	r := map[string]any{"alert": name, "expr": g.Expr}
	if hold > 0 {
		r["for"] = model.Duration(hold).String()
	}
	if keep > 0 {
		r["keep_firing_for"] = model.Duration(keep).String()
	}
	doc := map[string]any{"groups": []any{map[string]any{
		"name": "graph", "interval": model.Duration(g.Step).String(), "rules": []any{r},
	}}}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	f := rules.ParseFile("graph", b, rules.ParseOptions{})
	if errs := f.Errors(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
}

type graphView struct {
	Req          *graphRequest
	Error        string
	SVG          template.HTML
	Legend       []backtest.LegendItem
	Omitted      int
	Rule         *backtest.RuleReport
	Ranges       []string
	From, To     string
	RuleFor      string
	ChartExpr    string
	HasThreshold bool
	// HistoryRange is the chart's span for the rule's timeline.
	HistoryRange string
}

func (h *Handler) handleGraph(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	g, err := h.parseGraphRequest(r.URL.Query(), now)
	v := graphView{Req: g, Ranges: []string{"15m", "1h", "3h", "6h", "12h", "1d", "2d", "7d"}}
	code := http.StatusOK
	switch {
	case err != nil:
		v.Error, code = err.Error(), http.StatusBadRequest
	case g.Expr != "":
		if e := h.chartGraph(r.Context(), g, &v); e != nil {
			v.Error, code = e.Error(), http.StatusBadGateway
			var bad *badQueryError
			if errors.As(e, &bad) {
				code = http.StatusUnprocessableEntity
			}
		}
	}
	h.writePage(w, graphPage, v, code)
}

// badQueryError: the datasource answered, and refused the query.
type badQueryError struct{ err error }

func (e *badQueryError) Error() string { return e.err.Error() }

func (h *Handler) chartGraph(ctx context.Context, g *graphRequest, v *graphView) error {
	rq, ok := h.engine().(rangeQuerier)
	if !ok || rq.RangeSource() == nil {
		return errors.New("this engine answers no range queries")
	}
	f, err := graphRule(g)
	if err != nil {
		return &badQueryError{err}
	}
	ctx, cancel := context.WithTimeout(ctx, graphTimeout)
	defer cancel()
	rep, err := backtest.Run(ctx, backtest.Options{
		Source: rq.RangeSource(), Files: []*rules.File{f}, From: g.From, To: g.To,
		EvaluationInterval: g.Step, Charts: true, ChartPoints: 600, ChartSeries: 8, Parallel: 2,
		ExternalLabels: h.Config().Global.ExternalLabels, ExternalURL: h.Config().Global.ExternalURL.String(),
	})
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if len(rep.Rules) != 1 {
		return errors.New("the expression gave no chart")
	}
	rr := rep.Rules[0]
	if rr.Error != "" {
		return &badQueryError{errors.New(rr.Error)}
	}
	v.Rule = rr
	v.SVG, v.Legend = backtest.ChartSVG(rr, rep.From, rep.To)
	if rr.Chart != nil {
		v.Omitted = rr.Chart.Omitted
		v.ChartExpr = rr.Chart.Expr
	}
	v.HasThreshold = rr.Threshold != nil
	v.From, v.To = rep.From.UTC().Format(time.RFC3339), rep.To.UTC().Format(time.RFC3339)
	v.HistoryRange = model.Duration(min(max(rep.To.Sub(rep.From), time.Minute), historyPageMaxRange).Round(time.Second)).String()
	if g.Rule != nil {
		v.RuleFor = model.Duration(g.Rule.HoldDuration()).String()
	}
	return nil
}

var graphPage = template.Must(template.New("graph").Funcs(template.FuncMap{
	"ts": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{if .Req.RuleName}}{{.Req.RuleName}}{{else}}Graph{{end}} · paged</title>
<link rel="icon" href="data:,">
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1f23;margin:0}
header{display:flex;gap:1.25rem;align-items:baseline;padding:.6rem 1.25rem;border-bottom:1px solid #dde1e6;background:#f5f6f8}
header a{color:#1d1f23}main{padding:0 1.25rem 2rem;max-width:80rem}
form{margin:1rem 0;display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}
textarea{font:13px ui-monospace,Menlo,Consolas,monospace;width:100%;min-height:3.2rem;box-sizing:border-box}
.grow{flex:1 1 100%}label{font-size:.85rem;color:#5f6670;display:block}
svg.chart{max-width:100%;height:auto;display:block}.ax{font:11px system-ui,sans-serif;fill:#5f6670}
.legend{list-style:none;padding:0;margin:.5rem 0}.legend li{font:12px ui-monospace,Menlo,monospace;margin:.15rem 0;word-break:break-all}
.sw{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.4rem;vertical-align:middle}
.err{color:#c62828}.muted{color:#5f6670}code{font-family:ui-monospace,Menlo,monospace}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{color:#5f6670}
</style></head>
<body id="paged-graph">
` + pageHeader + `
<main>
<form method="get" action="graph">
<div class="grow"><label for="expr">Expression</label><textarea id="expr" name="g0.expr">{{.Req.Expr}}</textarea></div>
<div><label for="range">Range</label><input id="range" name="g0.range_input" value="{{if .Req.RangeInput}}{{.Req.RangeInput}}{{else}}1h{{end}}" list="ranges" size="6">
<datalist id="ranges">{{range .Ranges}}<option value="{{.}}">{{end}}</datalist></div>
<div><label for="end">End (UTC, empty: now)</label><input id="end" name="g0.end_input" value="{{.Req.EndInput}}" placeholder="2006-01-02 15:04:05" size="19"></div>
{{if .Req.RuleName}}<input type="hidden" name="g0.rule" value="{{.Req.RuleName}}">{{end}}
<div><button type="submit">Graph</button></div>
</form>
{{- if .Error}}<p class="err" id="graph-error" role="alert">{{.Error}}</p>{{end}}
{{- if .Rule}}
<section id="graph">
<h2>{{if .Req.Rule}}{{.Req.RuleName}}{{else}}Expression{{end}} <span class="muted">— {{.From}} to {{.To}}, every {{.Req.Step}}</span>{{if .Req.Rule}} <a id="rule-history" href="history?alertname={{.Req.RuleName}}&amp;end={{.To}}&amp;range={{.HistoryRange}}">history</a>{{end}}</h2>
{{.SVG}}
<dl>
{{- if .HasThreshold}}<dt>Threshold</dt><dd><code>{{.Rule.Threshold.Op}} {{.Rule.Threshold.Value}}</code> <span class="muted">(dashed line)</span></dd>{{end}}
{{- if .Req.Rule}}<dt>For</dt><dd>{{.RuleFor}} <span class="muted">(pending, shaded amber, until it fires, shaded red)</span></dd>{{end}}
<dt>Charted</dt><dd><code>{{.ChartExpr}}</code></dd>
<dt>Fired</dt><dd id="fired">{{.Rule.Fired}} time(s), {{len .Rule.Pending}} pending period(s)</dd>
</dl>
<h3>Series</h3>
{{- if .Legend}}
<ul class="legend" id="series">{{range .Legend}}<li><span class="sw" style="{{.Colour}}"></span>{{.Text}}</li>{{end}}</ul>
{{- if .Omitted}}<p class="muted">+{{.Omitted}} more series not drawn (lower maxima)</p>{{end}}
{{- else}}
<p class="muted" id="no-data">The expression returned no data over this range.</p>
{{- end}}
</section>
{{- else if not .Req.Expr}}
<p class="muted">Enter a PromQL expression: paged charts it over the range, with the rule's threshold and its pending and firing periods.</p>
{{- end}}
</main>
</body></html>
`))
