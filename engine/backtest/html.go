package backtest

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"
)

// Colours of the HTML report; the tests look for FiringColour in a
// screenshot.
const (
	FiringColour    = "#e03131"
	PendingColour   = "#f59f00"
	ThresholdColour = "#7048e8"
)

var palette = []string{"#1c7ed6", "#2f9e44", "#0c8599", "#5f3dc4", "#e8590c", "#495057", "#a61e4d", "#66a80f"}

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and SVG, no script, no external resource.
func WriteHTML(w io.Writer, rep *Report) error {
	type ruleView struct {
		*RuleReport
		ID     string
		SVG    template.HTML
		Legend []legendItem
		Rows   []Interval
		More   int
	}
	var views []ruleView
	for i, r := range rep.Rules {
		v := ruleView{RuleReport: r, ID: fmt.Sprintf("rule-%d", i)}
		v.SVG, v.Legend = chartSVG(r, rep.From, rep.To)
		v.Rows = r.Firing
		if len(v.Rows) > 100 {
			v.More = len(v.Rows) - 100
			v.Rows = v.Rows[:100]
		}
		views = append(views, v)
	}
	return reportTemplate.Execute(w, map[string]any{
		"R": rep, "Rules": views, "Span": shortDur(rep.To.Sub(rep.From)),
		"Firing": FiringColour, "Pending": PendingColour, "Threshold": ThresholdColour,
	})
}

type legendItem struct {
	Colour template.CSS
	Text   string
}

const (
	svgW, svgH     = 1100, 270
	plotL, plotR   = 70, 1085
	plotT, plotB   = 12, 200
	stripT, stripH = 208, 14
	axisY          = 240
)

// chartSVG draws the rule's chart: series lines, threshold line, shaded
// pending and firing periods, and a state strip under the plot.
func chartSVG(r *RuleReport, from, to time.Time) (template.HTML, []legendItem) {
	var b strings.Builder
	span := float64(to.Sub(from).Milliseconds())
	if span <= 0 {
		span = 1
	}
	x := func(ms int64) float64 {
		return plotL + (float64(ms-from.UnixMilli())/span)*(plotR-plotL)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	if r.Chart != nil {
		for _, s := range r.Chart.Series {
			for _, v := range s.V {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if r.Threshold != nil {
		lo, hi = math.Min(lo, r.Threshold.Value), math.Max(hi, r.Threshold.Value)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	if hi == lo {
		hi, lo = hi+1, lo-1
	}
	pad := (hi - lo) * 0.05
	lo, hi = lo-pad, hi+pad
	y := func(v float64) float64 { return plotB - (v-lo)/(hi-lo)*(plotB-plotT) }

	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		svgW, svgH, svgW, svgH, template.HTMLEscapeString(r.Name))
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#ffffff" stroke="#ced4da"/>`, plotL, plotT, plotR-plotL, plotB-plotT)
	band := func(ivs []Interval, colour string, opacity float64, top, height int) {
		for _, iv := range ivs {
			x0, x1 := x(iv.Start.UnixMilli()), x(iv.End.UnixMilli())
			w := math.Max(x1-x0, 1.5)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="%.2f"><title>%s %s</title></rect>`,
				x0, top, w, height, colour, opacity, template.HTMLEscapeString(labelString(iv.Labels)), shortDur(time.Duration(iv.Duration)))
		}
	}
	band(r.Pending, PendingColour, 0.18, plotT, plotB-plotT)
	band(r.Firing, FiringColour, 0.18, plotT, plotB-plotT)
	// The state strip: opaque, so the colours read exactly.
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f1f3f5"/>`, plotL, stripT, plotR-plotL, stripH)
	band(r.Pending, PendingColour, 1, stripT, stripH)
	band(r.Firing, FiringColour, 1, stripT, stripH)

	// Grid and y labels at round values.
	step := niceStep((hi - lo) / 4)
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		yy := y(v)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e9ecef"/>`, plotL, plotR, yy, yy)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="ax" text-anchor="end">%s</text>`, plotL-6, yy+4, template.HTMLEscapeString(fmtAxis(v)))
	}
	// Time labels.
	for i := 0; i <= 6; i++ {
		ms := from.UnixMilli() + int64(float64(i)/6*span)
		t := time.UnixMilli(ms).UTC()
		layout := "01-02 15:04"
		if to.Sub(from) <= 24*time.Hour {
			layout = "15:04:05"
		}
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 6:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="ax" text-anchor="%s">%s</text>`, x(ms), axisY, anchor, t.Format(layout))
	}
	var legend []legendItem
	if r.Chart != nil {
		for i, s := range r.Chart.Series {
			c := palette[i%len(palette)]
			var pts strings.Builder
			for j := range s.T {
				fmt.Fprintf(&pts, "%.1f,%.1f ", x(s.T[j]), y(s.V[j]))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"><title>%s</title></polyline>`,
				c, strings.TrimSpace(pts.String()), template.HTMLEscapeString(s.Labels))
			legend = append(legend, legendItem{Colour: template.CSS("background:" + c), Text: s.Labels})
		}
	}
	if r.Threshold != nil {
		ty := y(r.Threshold.Value)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"/>`, plotL, plotR, ty, ty, ThresholdColour)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="ax" text-anchor="end" fill="%s">%s %s</text>`, plotR-4, ty-4, ThresholdColour,
			template.HTMLEscapeString(r.Threshold.Op), template.HTMLEscapeString(fmtFloat(r.Threshold.Value)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), legend
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func fmtAxis(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e6 || a < 1e-3:
		return fmt.Sprintf("%.2g", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"time":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
	"dur":    func(d Duration) string { return shortDur(time.Duration(d)) },
	"labels": labelString,
	"num":    fmtFloat,
	"css":    func(s string) template.CSS { return template.CSS(s) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>paged backtest {{time .R.From}} .. {{time .R.To}}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#212529;margin:24px;background:#f8f9fa}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:0 0 6px}
.meta{color:#495057;margin-bottom:16px}
table{border-collapse:collapse;background:#fff;margin:8px 0 16px}
th,td{border:1px solid #dee2e6;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f1f3f5;padding:1px 4px;border-radius:3px;white-space:pre-wrap}
section{background:#fff;border:1px solid #dee2e6;border-radius:6px;padding:12px 16px;margin:0 0 20px}
.chart text.ax,.chart .ax{font:11px system-ui,sans-serif;fill:#495057}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px;border-radius:2px}
.err{color:#c92a2a}.firing{color:{{css .Firing}}}.muted{color:#868e96}
</style>
</head>
<body>
<h1>paged backtest</h1>
<div class="meta">{{time .R.From}} .. {{time .R.To}} UTC ({{.Span}}) · {{len .R.Rules}} rules · {{.R.Evaluations}} evaluations · {{.R.Queries}} queries ·
notifications counted as Alertmanager would send them: group_by [alertname], group_wait {{dur .R.Grouping.GroupWait}}, group_interval {{dur .R.Grouping.GroupInterval}}, repeat_interval {{dur .R.Grouping.RepeatInterval}}{{if .R.Grouping.SendResolved}}, resolved notifications on{{end}}.</div>
<table class="summary">
<tr><th>Rule</th><th>Threshold</th><th>Fired</th><th>Resolved</th><th>Notifications</th><th>Time firing</th><th>Longest</th><th>Flaps</th></tr>
{{range .Rules}}<tr><td><a href="#{{.ID}}">{{.Name}}</a></td><td>{{with .Threshold}}{{.Op}} {{num .Value}}{{if .Overridden}} <span class="muted">(was {{num .Original}})</span>{{end}}{{else}}-{{end}}</td>
<td class="n">{{.Fired}}</td><td class="n">{{.Resolved}}</td><td class="n">{{.Notifications}}</td><td class="n">{{dur .TimeFiring}}</td><td class="n">{{dur .Longest}}</td><td class="n">{{.Flaps}}</td></tr>
{{end}}</table>
<div class="legend"><span><i style="background:{{css .Firing}}"></i>firing</span><span><i style="background:{{css .Pending}}"></i>pending</span><span><i style="background:{{css .Threshold}}"></i>threshold</span></div>
{{range .Rules}}<section id="{{.ID}}">
<h2>{{.Name}} <span class="muted">· group {{.Group}} · every {{dur .Interval}} · for {{dur .For}}{{if .KeepFiringFor}} · keep_firing_for {{dur .KeepFiringFor}}{{end}}</span></h2>
<div><code>{{.Expr}}</code></div>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
{{if .Chart}}<p class="muted">Chart: <code>{{.Chart.Expr}}</code>{{if .Chart.Omitted}} ({{.Chart.Omitted}} lower series not drawn){{end}}</p>{{end}}
{{.SVG}}
<div class="legend">{{range .Legend}}<span><i style="{{.Colour}}"></i>{{.Text}}</span>{{end}}</div>
{{if .Rows}}<table><tr><th>Firing from</th><th>to</th><th>Duration</th><th>Labels</th></tr>
{{range .Rows}}<tr><td>{{time .Start}}</td><td>{{if .Open}}still firing{{else}}{{time .End}}{{end}}</td><td class="n">{{dur .Duration}}</td><td><code>{{labels .Labels}}</code></td></tr>
{{end}}</table>{{if .More}}<p class="muted">+{{.More}} more firing periods (see --json)</p>{{end}}{{else}}<p class="muted">Never fired.</p>{{end}}
</section>
{{end}}
</body>
</html>
`))
