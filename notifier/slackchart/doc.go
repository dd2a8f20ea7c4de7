// Package slackchart draws the small chart that goes with an alert's
// first Slack message and its resolve: the rule's expression from an hour
// before the alert fired to now, with the threshold and the firing period.
// It prepares the query (Split, Step), converts its result (FromMatrix)
// and renders a PNG (Render); fetching the data and uploading the image
// belong to the caller. It imports nothing of paged.
//
// # Why gonum/plot
//
// The chart is drawn in process, in Go, so that a page never waits for a
// browser or an image-rendering service (Grafana's renderer needs one).
// gonum.org/v1/plot is the maintained Go plotting library; it draws axes
// and ticks, and rasterizes through vg/vgimg with the Liberation fonts it
// embeds, so the image does not depend on the system's fonts and the same
// chart gives the same bytes. The PNG is written by this package: Go's
// encoder tries five filters on every row, which cost more than drawing
// the chart.
//
// # How the threshold is found
//
// Split parses the rule's expression with the Prometheus parser paged
// uses everywhere (default options). When its top level, through
// parentheses, is a comparison without bool between an expression and a
// number literal (in parentheses or with a sign, -(1) included), the
// chart draws the expression and the number as a dashed red line,
// labelled with the comparison as read with the expression first
// (`0.9 < x` is `> 0.9`). Under and, or and unless the left operand is
// followed: `a > 0.9 and b > 1` draws a against 0.9. Anything else,
// `x > y` or `vector(1) < x` included, is drawn whole without a line:
// only a number in the rule itself is a threshold.
//
// # What is drawn, and what never is
//
// The image is laid out 800 pixels wide and 320 high, plus a row of 20
// per two series in the legend, and drawn at twice that density for
// phones (1600 pixels wide), on a white background: the title and the
// charted query, the firing period shaded in light red (to the resolve,
// or to the end while firing), the series, the threshold, a time axis in
// UTC (HH:MM) and a value axis in the rule's unit (97.3%, 350 ms, 1.2k).
// A legend under the plot names each series by the labels that differ
// between the series, long values shortened in the middle.
//
// At most eight series are drawn: those with the highest maxima, or for
// `<` and `<=` the lowest minima; the legend counts the others. NaN and
// infinite values are never drawn, nor joined across: the line stops
// there, and at any gap longer than one and a half times the usual
// interval between samples (a series gone stale), rather than falling to
// zero. Native histogram samples are left out. Points outside the time
// range are clipped, and a series of thousands of points is reduced to
// its first, lowest, highest and last point per column of two pixels
// before it is drawn. A chart without one finite sample says "no data
// for <query>" instead of failing.
package slackchart
