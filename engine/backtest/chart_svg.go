package backtest

import (
	"html/template"
	"time"
)

// LegendItem is one series of a chart: its colour (a CSS declaration) and
// its labels.
type LegendItem struct {
	Colour template.CSS
	Text   string
}

// ChartSVG draws a rule's chart as the HTML report does: the series, the
// threshold as a dashed line, pending and firing periods shaded, and the
// state strip under the plot, over [from, to]. paged's /graph draws with
// it.
func ChartSVG(r *RuleReport, from, to time.Time) (template.HTML, []LegendItem) {
	svg, items := chartSVG(r, from, to)
	out := make([]LegendItem, len(items))
	for i, it := range items {
		out[i] = LegendItem{Colour: it.Colour, Text: it.Text}
	}
	return svg, out
}
