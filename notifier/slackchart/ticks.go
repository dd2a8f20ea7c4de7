package slackchart

import (
	"math"
	"time"

	"gonum.org/v1/plot"
)

// valueAxis is the y axis: a range that ends on ticks, the ticks, and
// their labels in the chart's unit.
type valueAxis struct {
	min, max float64
	ticks    []plot.Tick
	scale    scale
}

// newValueAxis spans lo..hi (finite, lo <= hi) with about four steps of
// a round size in the unit's scale.
func newValueAxis(lo, hi float64, unit string) valueAxis {
	if lo == hi {
		pad := math.Abs(lo) * 0.1
		if pad == 0 {
			pad = 1
		}
		if lo >= 0 && lo-pad < 0 {
			lo, hi = 0, hi+pad
		} else {
			lo, hi = lo-pad, hi+pad
		}
	}
	s := scaleFor(unit, max(math.Abs(lo), math.Abs(hi)))
	st := axisStep(lo/s.div, hi/s.div)
	dec := decimalsFor(st)
	st *= s.div
	a := valueAxis{min: math.Floor(lo/st+1e-9) * st, max: math.Ceil(hi/st-1e-9) * st, scale: s}
	for i := 0; ; i++ {
		v := a.min + float64(i)*st
		if v > a.max+st*1e-9 {
			break
		}
		a.ticks = append(a.ticks, plot.Tick{Value: v, Label: s.format(v, dec)})
	}
	return a
}

// axisStep is the round step (1, 2, 2.5 or 5 times a power of ten) of
// an axis over lo..hi in two to six steps: the one whose axis ends
// closest to the values, then the one closest to four steps.
func axisStep(lo, hi float64) float64 {
	span := hi - lo
	best, bestWaste, bestN := 0.0, math.Inf(1), 0
	p := math.Pow(10, math.Floor(math.Log10(span/6)))
	for _, m := range []float64{1, 2, 2.5, 5, 10, 20, 25, 50} {
		st := m * p
		n := math.Ceil(hi/st-1e-9) - math.Floor(lo/st+1e-9)
		if n < 2 || n > 6 {
			continue
		}
		waste := (n*st - span) / span
		d, bd := math.Abs(n-4), math.Abs(float64(bestN)-4)
		if best == 0 || waste < bestWaste-0.05 || waste < bestWaste+0.05 && d < bd {
			best, bestWaste, bestN = st, waste, int(n)
		}
	}
	if best == 0 {
		return niceStep(span / 4)
	}
	return best
}

// timeSteps are the spacings of the time axis's ticks.
var timeSteps = []time.Duration{
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour,
}

// timeTicks marks start..end at round UTC times, at most maxTicks of
// them, labelled HH:MM (a date at midnight when the range spans days).
// Values are seconds since start.
func timeTicks(start, end time.Time, maxTicks int) []plot.Tick {
	span := end.Sub(start)
	st := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s <= time.Duration(maxTicks) {
			st = s
			break
		}
	}
	var ticks []plot.Tick
	first := start.UTC().Truncate(st)
	if first.Before(start) {
		first = first.Add(st)
	}
	for t := first; !t.After(end); t = t.Add(st) {
		label := t.Format("15:04")
		if span > 24*time.Hour && t.Hour() == 0 && t.Minute() == 0 {
			label = t.Format("Jan 2")
		}
		ticks = append(ticks, plot.Tick{Value: t.Sub(start).Seconds(), Label: label})
	}
	return ticks
}
