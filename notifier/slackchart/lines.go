package slackchart

import (
	"slices"
	"time"

	"gonum.org/v1/plot/vg"
)

// typicalInterval is the median time between consecutive samples of ss:
// a range query's step, or the scrape interval of raw samples.
func typicalInterval(ss []Series) time.Duration {
	var ds []time.Duration
	for _, s := range ss {
		for i := 1; i < len(s.Points); i++ {
			if d := s.Points[i].T.Sub(s.Points[i-1].T); d > 0 {
				ds = append(ds, d)
			}
		}
	}
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// runs cuts ps, in time order, into the stretches drawn as one line: a
// NaN or infinite value ends a stretch, and so does a gap longer than
// gap (a series gone stale, then back) when gap is positive. The line
// is broken there, never drawn through zero.
func runs(ps []Point, gap time.Duration) [][]Point {
	var out [][]Point
	start := -1
	for i, p := range ps {
		switch {
		case !finite(p.V):
			if start >= 0 {
				out = append(out, ps[start:i])
			}
			start = -1
		case start < 0:
			start = i
		case gap > 0 && p.T.Sub(ps[i-1].T) > gap:
			out = append(out, ps[start:i])
			start = i
		}
	}
	if start >= 0 {
		out = append(out, ps[start:])
	}
	return out
}

// decimate keeps, of the points falling in one column of width w, the
// first, the lowest, the highest and the last, in their order: the
// line drawn looks the same, and a series of thousands of samples costs
// no more to draw than the image is wide.
func decimate(pts []vg.Point, w vg.Length) []vg.Point {
	if len(pts) < 5 || w <= 0 {
		return pts
	}
	out := pts[:0:0]
	col := func(p vg.Point) int64 { return int64(p.X / w) }
	for i := 0; i < len(pts); {
		j, c := i, col(pts[i])
		lo, hi := i, i
		for j < len(pts) && col(pts[j]) == c {
			if pts[j].Y < pts[lo].Y {
				lo = j
			}
			if pts[j].Y > pts[hi].Y {
				hi = j
			}
			j++
		}
		last := j - 1
		idx := [4]int{i, lo, hi, last}
		slices.Sort(idx[:])
		prev := -1
		for _, k := range idx {
			if k != prev {
				out = append(out, pts[k])
				prev = k
			}
		}
		i = j
	}
	return out
}
