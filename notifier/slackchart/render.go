package slackchart

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Chart is what Render draws.
type Chart struct {
	// Title heads the image: the alert's name.
	Title string
	// Query is the charted expression, written under the title and in
	// the no-data message.
	Query  string
	Series []Series
	// Threshold, when set, is drawn as a dashed red line labelled with
	// Op and the value.
	Threshold *float64
	Op        string
	// Start and End bound the time axis. When End is not after Start, the
	// samples' times are used.
	Start, End time.Time
	// FiredAt starts the shaded firing period, which ends at ResolvedAt,
	// or at End while the alert still fires (ResolvedAt zero). A zero
	// FiredAt shades nothing.
	FiredAt, ResolvedAt time.Time
	// Unit is a Grafana unit id for the values: "percentunit" (0.973 is
	// 97.3%), "percent", "s" or "seconds", "ms", "bytes", "celsius",
	// "reqps", "ops", "short" or "". Any other unit is written beside the
	// axis.
	Unit string
}

// Width is the image's width in pixels; its height is Height plus
// LegendRowHeight per row of the legend. Both are twice the size the
// image is laid out at, for high-density screens.
const (
	Width           = 2 * width
	Height          = 2 * (headerH + plotH + bottomPad)
	LegendRowHeight = 2 * legendRowH
)

// Layout, in pixels of a 96-dpi screen; the image is drawn at twice that.
const (
	dpi          = 2 * 96
	width        = 800
	margin       = 16
	headerH      = 60
	plotH        = 250
	legendRowH   = 20
	legendTopPad = 6
	bottomPad    = 10
	legendCols   = 2
)

var (
	background   = color.RGBA{0xff, 0xff, 0xff, 0xff}
	textColour   = color.RGBA{0x21, 0x25, 0x29, 0xff}
	mutedColour  = color.RGBA{0x5f, 0x66, 0x70, 0xff}
	gridColour   = color.RGBA{0xe9, 0xec, 0xef, 0xff}
	frameColour  = color.RGBA{0xce, 0xd4, 0xda, 0xff}
	thresholdRed = color.RGBA{0xe0, 0x31, 0x31, 0xff}
	// firingShade is thresholdRed at 12% over white: the firing period.
	firingShade = color.NRGBA{0xe0, 0x31, 0x31, 0x1f}
	resolvedFG  = color.RGBA{0x2f, 0x9e, 0x44, 0xff}
	// palette follows the backtest report's series colours, without its
	// red-looking ones, which would read as the threshold.
	palette = []color.RGBA{
		{0x1c, 0x7e, 0xd6, 0xff}, {0x2f, 0x9e, 0x44, 0xff}, {0x0c, 0x85, 0x99, 0xff}, {0x5f, 0x3d, 0xc4, 0xff},
		{0xe8, 0x59, 0x0c, 0xff}, {0x49, 0x50, 0x57, 0xff}, {0x86, 0x2e, 0x9c, 0xff}, {0x66, 0xa8, 0x0f, 0xff},
	}
)

// px is a length in layout pixels.
func px(n float64) vg.Length { return vg.Length(n) * vg.Inch / 96 }

// Render draws c as a PNG image. A chart without a finite sample draws
// the message "no data for <query>" instead of the plot. The same chart
// gives the same bytes: the fonts are the Liberation fonts built into
// gonum/plot, never the system's.
func Render(w io.Writer, c Chart) error {
	img, err := drawChart(c)
	if err != nil {
		return err
	}
	rgba, ok := img.Image().(*image.RGBA)
	if !ok {
		return fmt.Errorf("render chart: canvas is a %T", img.Image())
	}
	if err := writePNG(w, rgba); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}

// style is the fonts and text handler of one rendering.
type style struct {
	hdlr text.Handler
}

func (s style) text(size float64, variant font.Variant, weight xfont.Weight, clr color.Color) text.Style {
	return text.Style{
		Color:   clr,
		Font:    font.Font{Typeface: "Liberation", Variant: variant, Weight: weight, Size: px(size)},
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: s.hdlr,
	}
}

func drawChart(c Chart) (img *vgimg.Canvas, err error) {
	defer func() {
		// gonum/plot panics on what it cannot draw; the page must not.
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("render chart: %v", r)
		}
	}()
	st := style{hdlr: text.Plain{Fonts: font.NewCache(liberation.Collection())}}
	kept, more := pick(c.Series, c.Op, maxSeries)
	lo, hi, hasData := extentAll(kept)
	names := legendNames(kept)
	legend := hasData && !(len(kept) == 1 && names[0] == "")
	rows := 0
	if legend {
		rows = (len(kept) + legendCols - 1) / legendCols
		if more > 0 {
			rows++
		}
	}
	h := headerH + plotH + bottomPad
	if rows > 0 {
		h += legendTopPad + rows*legendRowH
	}
	cv := vgimg.NewWith(vgimg.UseWH(px(width), px(float64(h))), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(background))
	dc := draw.New(cv)

	start, end := timeRange(c, kept)
	drawHeader(dc, st, c, start, end)
	area := draw.Crop(dc, px(margin), -px(margin), dc.Max.Y-px(float64(headerH+plotH)), -px(headerH))
	if !hasData {
		drawNoData(area, st, c)
		return cv, nil
	}
	if c.Threshold != nil && finite(*c.Threshold) {
		lo, hi = min(lo, *c.Threshold), max(hi, *c.Threshold)
	}
	lo, hi = pad(lo, hi, c.Unit)
	p := newPlot(st, c, kept, start, end, lo, hi)
	p.Draw(area)
	if legend {
		la := draw.Crop(dc, px(margin), -px(margin), px(bottomPad), -px(float64(headerH+plotH+legendTopPad)))
		drawLegend(la, st, kept, names, more, c.Op)
	}
	return cv, nil
}

// extentAll is the smallest and largest finite value of ss.
func extentAll(ss []Series) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		if l, h, k := extent(s.Points); k {
			lo, hi, ok = min(lo, l), max(hi, h), true
		}
	}
	return lo, hi, ok
}

// pad leaves 5% above and below the values, without crossing zero or,
// for ratios, 100% when the values do not.
func pad(lo, hi float64, unit string) (float64, float64) {
	d := (hi - lo) * 0.05
	l, h := lo-d, hi+d
	if lo >= 0 && l < 0 {
		l = 0
	}
	if unit == "percentunit" && hi <= 1 && h > 1 {
		h = 1
	}
	if unit == "percent" && hi <= 100 && h > 100 {
		h = 100
	}
	return l, h
}

// timeRange is the chart's Start and End, or the samples' first and last
// times when End is not after Start, or the hour before End.
func timeRange(c Chart, ss []Series) (time.Time, time.Time) {
	if c.End.After(c.Start) {
		return c.Start, c.End
	}
	var first, last time.Time
	for _, s := range ss {
		for _, p := range s.Points {
			if first.IsZero() || p.T.Before(first) {
				first = p.T
			}
			if p.T.After(last) {
				last = p.T
			}
		}
	}
	if last.After(first) {
		return first, last
	}
	end := c.End
	if end.IsZero() {
		end = last
	}
	return end.Add(-time.Hour), end
}

func drawHeader(dc draw.Canvas, st style, c Chart, start, end time.Time) {
	top := dc.Max.Y - px(12)
	left, right := dc.Min.X+px(margin), dc.Max.X-px(margin)

	status, sc := headerStatus(c, start, end)
	ss := st.text(10.5, "Sans", xfont.WeightNormal, sc)
	ss.XAlign, ss.YAlign = draw.XRight, draw.YTop
	sw := ss.Width(status)
	dc.FillText(ss, vg.Point{X: right, Y: top}, status)

	ts := st.text(15, "Sans", xfont.WeightBold, textColour)
	ts.YAlign = draw.YTop
	dc.FillText(ts, vg.Point{X: left, Y: top - px(1)}, fit(ts, c.Title, right-left-sw-px(12)))

	if c.Query != "" {
		qs := st.text(11, "Mono", xfont.WeightNormal, mutedColour)
		qs.YAlign = draw.YTop
		dc.FillText(qs, vg.Point{X: left, Y: top - px(24)}, fit(qs, c.Query, right-left))
	}
}

// headerStatus is the firing period, or the time range, in UTC.
func headerStatus(c Chart, start, end time.Time) (string, color.Color) {
	switch {
	case c.FiredAt.IsZero():
		return start.UTC().Format("15:04") + "–" + end.UTC().Format("15:04 UTC"), mutedColour
	case c.ResolvedAt.IsZero():
		return "firing since " + c.FiredAt.UTC().Format("15:04 UTC"), thresholdRed
	}
	return "fired " + c.FiredAt.UTC().Format("15:04") + ", resolved " + c.ResolvedAt.UTC().Format("15:04 UTC"), resolvedFG
}

func drawNoData(area draw.Canvas, st style, c Chart) {
	area.SetLineStyle(draw.LineStyle{Color: frameColour, Width: px(1)})
	area.Stroke(area.Rectangle.Path())
	msg := "no data for " + c.Query
	if c.Query == "" {
		msg = "no data"
	}
	ms := st.text(13, "Sans", xfont.WeightNormal, mutedColour)
	ms.XAlign, ms.YAlign = draw.XCenter, draw.YCenter
	lines := wrap(ms, msg, area.Max.X-area.Min.X-px(40), 4)
	lh := ms.Height("X") * 1.3
	y := area.Center().Y + lh*vg.Length(len(lines)-1)/2
	for _, l := range lines {
		area.FillText(ms, vg.Point{X: area.Center().X, Y: y}, l)
		y -= lh
	}
}

func newPlot(st style, c Chart, kept []Series, start, end time.Time, lo, hi float64) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	p.Legend = plot.NewLegend()
	p.Legend.TextStyle = st.text(10, "Sans", xfont.WeightNormal, textColour)

	span := end.Sub(start).Seconds()
	p.X.Min, p.X.Max = 0, span
	tt := timeTicks(start, end, 8)
	p.X.Tick.Marker = plot.ConstantTicks(tt)
	ya := newValueAxis(lo, hi, c.Unit)
	p.Y.Min, p.Y.Max = ya.min, ya.max
	p.Y.Tick.Marker = plot.ConstantTicks(ya.ticks)

	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Padding = 0
		a.LineStyle = draw.LineStyle{Color: frameColour, Width: px(1)}
		a.Tick.LineStyle = draw.LineStyle{Color: frameColour, Width: px(1)}
		a.Tick.Length = px(4)
		a.Label.TextStyle = st.text(11, "Sans", xfont.WeightNormal, mutedColour)
		a.Label.Padding = px(4)
	}
	p.X.Tick.Label = st.text(12, "Sans", xfont.WeightNormal, mutedColour)
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
	p.Y.Tick.Label = st.text(12, "Sans", xfont.WeightNormal, mutedColour)
	p.Y.Tick.Label.XAlign, p.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	if !knownUnit(c.Unit) {
		p.Y.Label.Text = c.Unit
	}

	p.Add(plotFunc(func(dc draw.Canvas, p *plot.Plot) { drawFiring(dc, p, c, start) }))
	p.Add(plotFunc(func(dc draw.Canvas, p *plot.Plot) { drawGrid(dc, p, tt, ya.ticks) }))
	p.Add(plotFunc(func(dc draw.Canvas, p *plot.Plot) { drawSeries(dc, p, kept, start) }))
	if c.Threshold != nil && finite(*c.Threshold) {
		th := *c.Threshold
		label := humanize(th, c.Unit)
		if c.Op != "" {
			label = c.Op + " " + label
		}
		if !knownUnit(c.Unit) {
			label += " " + c.Unit
		}
		p.Add(plotFunc(func(dc draw.Canvas, p *plot.Plot) { drawThreshold(dc, p, st, th, label) }))
	}
	p.Add(plotFunc(drawFrame))
	return p
}

// strokeChunk is the most points stroked at once.
const strokeChunk = 32

// plotFunc draws on the plot's data area.
type plotFunc func(draw.Canvas, *plot.Plot)

func (f plotFunc) Plot(c draw.Canvas, p *plot.Plot) { f(c, p) }

func drawFrame(dc draw.Canvas, _ *plot.Plot) {
	dc.SetLineStyle(draw.LineStyle{Color: frameColour, Width: px(1)})
	dc.Stroke(dc.Rectangle.Path())
}

func drawGrid(dc draw.Canvas, p *plot.Plot, xs, ys []plot.Tick) {
	tx, ty := p.Transforms(&dc)
	ls := draw.LineStyle{Color: gridColour, Width: px(1)}
	for _, t := range xs {
		x := tx(t.Value)
		dc.StrokeLine2(ls, x, dc.Min.Y, x, dc.Max.Y)
	}
	for _, t := range ys {
		y := ty(t.Value)
		dc.StrokeLine2(ls, dc.Min.X, y, dc.Max.X, y)
	}
}

func drawFiring(dc draw.Canvas, p *plot.Plot, c Chart, start time.Time) {
	if c.FiredAt.IsZero() {
		return
	}
	tx, _ := p.Transforms(&dc)
	x0 := max(dc.Min.X, tx(c.FiredAt.Sub(start).Seconds()))
	x1 := dc.Max.X
	if !c.ResolvedAt.IsZero() {
		x1 = min(x1, tx(c.ResolvedAt.Sub(start).Seconds()))
	}
	if x1 <= x0 {
		return
	}
	x1 = max(x1, x0+px(1.5)) // a moment's firing stays visible
	dc.FillPolygon(firingShade, []vg.Point{{X: x0, Y: dc.Min.Y}, {X: x1, Y: dc.Min.Y}, {X: x1, Y: dc.Max.Y}, {X: x0, Y: dc.Max.Y}})
}

func drawSeries(dc draw.Canvas, p *plot.Plot, ss []Series, start time.Time) {
	tx, ty := p.Transforms(&dc)
	colW := px(1) // two pixels of the image
	gap := typicalInterval(ss) * 3 / 2
	for i, s := range ss {
		clr := palette[i%len(palette)]
		ls := draw.LineStyle{Color: clr, Width: px(2)}
		for _, run := range runs(s.Points, gap) {
			pts := make([]vg.Point, len(run))
			for j, q := range run {
				pts[j] = vg.Point{X: tx(q.T.Sub(start).Seconds()), Y: ty(q.V)}
			}
			pts = decimate(pts, colW)
			if len(pts) == 1 {
				if dc.Contains(pts[0]) {
					dc.DrawGlyph(draw.GlyphStyle{Color: clr, Radius: px(2), Shape: draw.CircleGlyph{}}, pts[0])
				}
				continue
			}
			for _, l := range dc.ClipLinesXY(pts) {
				// The rasterizer looks cells up along a scanline one by
				// one: a long jagged line costs it quadratic time, pieces
				// of it linear time. They overlap by a segment, so the
				// line has no notch where they meet.
				for len(l) > strokeChunk {
					dc.StrokeLines(ls, l[:strokeChunk])
					l = l[strokeChunk-1:]
				}
				dc.StrokeLines(ls, l)
			}
		}
	}
}

func drawThreshold(dc draw.Canvas, p *plot.Plot, st style, v float64, label string) {
	_, ty := p.Transforms(&dc)
	y := ty(v)
	ls := draw.LineStyle{Color: thresholdRed, Width: px(2), Dashes: []vg.Length{px(8), px(5)}}
	dc.StrokeLine2(ls, dc.Min.X, y, dc.Max.X, y)

	ts := st.text(12, "Sans", xfont.WeightBold, thresholdRed)
	ts.XAlign = draw.XRight
	at := vg.Point{X: dc.Max.X - px(6), Y: y + px(4)}
	if y+px(4)+ts.Height(label) > dc.Max.Y {
		ts.YAlign = draw.YTop // no room above the line: below it
		at.Y = y - px(4)
	}
	r := ts.Rectangle(label).Add(at)
	dc.FillPolygon(background, []vg.Point{
		{X: r.Min.X - px(3), Y: r.Min.Y}, {X: r.Max.X + px(3), Y: r.Min.Y},
		{X: r.Max.X + px(3), Y: r.Max.Y}, {X: r.Min.X - px(3), Y: r.Max.Y},
	})
	dc.FillText(ts, at, label)
}

func drawLegend(la draw.Canvas, st style, kept []Series, names []string, more int, op string) {
	ts := st.text(12, "Sans", xfont.WeightNormal, textColour)
	ts.YAlign = draw.YCenter
	colW := (la.Max.X - la.Min.X) / legendCols
	thumb := px(18)
	for i, name := range names {
		if name == "" {
			name = "{}"
		}
		col, row := i%legendCols, i/legendCols
		x := la.Min.X + colW*vg.Length(col)
		y := la.Max.Y - px(legendRowH)*vg.Length(row) - px(legendRowH)/2
		la.StrokeLine2(draw.LineStyle{Color: palette[i%len(palette)], Width: px(3)}, x, y, x+thumb, y)
		la.FillText(ts, vg.Point{X: x + thumb + px(6), Y: y}, fitMiddle(ts, name, colW-thumb-px(14)))
	}
	if more > 0 {
		rows := (len(names) + legendCols - 1) / legendCols
		y := la.Max.Y - px(legendRowH)*vg.Length(rows) - px(legendRowH)/2
		why := "highest"
		if op == "<" || op == "<=" {
			why = "lowest"
		}
		ms := ts
		ms.Color = mutedColour
		la.FillText(ms, vg.Point{X: la.Min.X, Y: y}, fmt.Sprintf("+%d more series (the %d drawn have the %s values)", more, len(names), why))
	}
}

// fit cuts s to width w, ending it with an ellipsis.
func fit(ts text.Style, s string, w vg.Length) string {
	if w <= 0 {
		return ""
	}
	if ts.Width(s) <= w {
		return s
	}
	r := []rune(s)
	lo, hi := 0, len(r) // r[:lo]+"…" fits; r[:hi]+"…" does not
	for lo+1 < hi {
		m := (lo + hi) / 2
		if ts.Width(string(r[:m])+"…") <= w {
			lo = m
		} else {
			hi = m
		}
	}
	return string(r[:lo]) + "…"
}

// fitMiddle cuts s to width w by replacing its middle with an ellipsis:
// names of hosts and models differ at their ends.
func fitMiddle(ts text.Style, s string, w vg.Length) string {
	if ts.Width(s) <= w {
		return s
	}
	r := []rune(s)
	cut := func(n int) string { return string(r[:(n+1)/2]) + "…" + string(r[len(r)-n/2:]) }
	lo, hi := 0, len(r) // cut(lo) fits, cut(hi) does not
	for lo+1 < hi {
		m := (lo + hi) / 2
		if ts.Width(cut(m)) <= w {
			lo = m
		} else {
			hi = m
		}
	}
	return cut(lo)
}

// wrap breaks s into lines of width w, at most n of them, the last
// ending in an ellipsis when s does not fit.
func wrap(ts text.Style, s string, w vg.Length, n int) []string {
	var lines []string
	r := []rune(s)
	for len(r) > 0 && len(lines) < n {
		if len(lines) == n-1 || ts.Width(string(r)) <= w {
			lines = append(lines, fit(ts, string(r), w))
			break
		}
		k := 1
		for k < len(r) && ts.Width(string(r[:k+1])) <= w {
			k++
		}
		// Prefer a break after a space, comma or parenthesis.
		for j := k; j > k/2; j-- {
			if c := r[j-1]; c == ' ' || c == ',' || c == '(' || c == ')' {
				k = j
				break
			}
		}
		lines = append(lines, string(r[:k]))
		r = r[k:]
	}
	return lines
}
