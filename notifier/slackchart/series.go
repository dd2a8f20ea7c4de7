package slackchart

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/prometheus/promql"
)

// Series is one series of a range query's result.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is one sample. NaN and ±Inf are kept here and never drawn.
type Point struct {
	T time.Time
	V float64
}

// FromMatrix converts a range query's result. Native histogram samples
// are left out: the chart draws float values only.
func FromMatrix(m promql.Matrix) []Series {
	out := make([]Series, 0, len(m))
	for _, s := range m {
		ps := make([]Point, len(s.Floats))
		for i, p := range s.Floats {
			ps[i] = Point{T: time.UnixMilli(p.T).UTC(), V: p.F}
		}
		out = append(out, Series{Labels: s.Metric.Map(), Points: ps})
	}
	return out
}

// maxSeries is how many series a chart draws; the rest are counted
// under the legend.
const maxSeries = 8

// pick keeps the limit series that matter for the comparison: the
// highest maxima for > and >= (and without a threshold), the lowest
// minima for < and <=. Series without a finite value come last; ties
// keep the order of the labels, so the choice does not depend on the
// order of the input.
func pick(ss []Series, op string, limit int) (kept []Series, more int) {
	low := op == "<" || op == "<="
	type ranked struct {
		s   Series
		key float64 // smaller ranks first
		id  string
	}
	rs := make([]ranked, len(ss))
	for i, s := range ss {
		lo, hi, ok := extent(s.Points)
		key := math.Inf(1)
		switch {
		case ok && low:
			key = lo
		case ok:
			key = -hi
		}
		rs[i] = ranked{s: s, key: key, id: labelKey(s.Labels)}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	if len(rs) > limit {
		more = len(rs) - limit
		rs = rs[:limit]
	}
	kept = make([]Series, len(rs))
	for i, r := range rs {
		kept[i] = r.s
	}
	return kept, more
}

// extent is the smallest and largest finite value of ps.
func extent(ps []Point) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		if finite(p.V) {
			lo, hi, ok = min(lo, p.V), max(hi, p.V), true
		}
	}
	return lo, hi, ok
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func labelKey(ls map[string]string) string {
	keys := sortedKeys(ls)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(ls[k])
		b.WriteByte(0)
	}
	return b.String()
}

func sortedKeys(ls map[string]string) []string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maxValueRunes bounds one label value in a legend entry; longer values
// lose their middle, where names of models and hosts differ least.
const maxValueRunes = 48

// legendNames names each series by the labels whose values differ
// between the series: `instance=10.0.0.7:8000, model_name=llama-3`. A
// lone series is named by all its labels but the metric name; a series
// named by nothing gets "".
func legendNames(ss []Series) []string {
	names := make([]string, len(ss))
	var keys []string
	if len(ss) == 1 {
		for _, k := range sortedKeys(ss[0].Labels) {
			if k != "__name__" {
				keys = append(keys, k)
			}
		}
	} else {
		all := map[string]bool{}
		for _, s := range ss {
			for k := range s.Labels {
				all[k] = true
			}
		}
		for k := range all {
			v, first := ss[0].Labels[k]
			for _, s := range ss[1:] {
				if w, ok := s.Labels[k]; ok != first || w != v {
					keys = append(keys, k)
					break
				}
			}
		}
		slices.Sort(keys)
	}
	for i, s := range ss {
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			v, ok := s.Labels[k]
			switch {
			case !ok:
				continue
			case k == "__name__":
				parts = append(parts, shorten(v, maxValueRunes))
			default:
				parts = append(parts, k+"="+shorten(v, maxValueRunes))
			}
		}
		names[i] = strings.Join(parts, ", ")
	}
	return names
}

// shorten cuts s to n runes by replacing its middle with an ellipsis.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n || n < 3 {
		return s
	}
	r := []rune(s)
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
