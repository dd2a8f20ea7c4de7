package slackchart

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"gonum.org/v1/plot/vg"
)

var t0 = time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)

func ptr(v float64) *float64 { return &v }

func TestFromMatrix(t *testing.T) {
	m := promql.Matrix{
		{Metric: labels.FromStrings("__name__", "up", "job", "vllm"), Floats: []promql.FPoint{{T: 1000, F: 1}, {T: 16000, F: math.NaN()}}},
		{Metric: labels.FromStrings("job", "tgi")},
	}
	got := FromMatrix(m)
	if len(got) != 2 || got[0].Labels["__name__"] != "up" || got[0].Labels["job"] != "vllm" || got[1].Labels["job"] != "tgi" {
		t.Fatalf("FromMatrix labels: %+v", got)
	}
	if p := got[0].Points; len(p) != 2 || !p[0].T.Equal(time.Unix(1, 0)) || p[0].V != 1 || !p[1].T.Equal(time.Unix(16, 0)) || !math.IsNaN(p[1].V) {
		t.Errorf("FromMatrix points: %+v", p)
	}
	if len(got[1].Points) != 0 {
		t.Errorf("a series without samples has points %+v", got[1].Points)
	}
	if FromMatrix(nil) == nil || len(FromMatrix(nil)) != 0 {
		t.Errorf("FromMatrix(nil) = %#v, want empty", FromMatrix(nil))
	}
}

func series(name string, vs ...float64) Series {
	s := Series{Labels: map[string]string{"instance": name}}
	for i, v := range vs {
		s.Points = append(s.Points, Point{T: t0.Add(time.Duration(i) * time.Minute), V: v})
	}
	return s
}

func names(ss []Series) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Labels["instance"])
	}
	return strings.Join(out, " ")
}

func TestPick(t *testing.T) {
	ss := []Series{
		series("a", 1, 5, 2),
		series("b", 9, 0.5),
		series("c", math.NaN()),
		series("d", 3, -2),
		series("e"),
		series("f", 5, 4),
	}
	for _, tc := range []struct {
		op    string
		limit int
		want  string
		more  int
	}{
		{">", 3, "b a f", 3}, // a and f tie at 5: by labels
		{">=", 10, "b a f d c e", 0},
		{"", 2, "b a", 4},
		{"==", 2, "b a", 4},
		{"<", 3, "d b a", 3},
		{"<=", 6, "d b a f c e", 0},
	} {
		kept, more := pick(ss, tc.op, tc.limit)
		if got := names(kept); got != tc.want || more != tc.more {
			t.Errorf("pick(%q, %d) = %q +%d, want %q +%d", tc.op, tc.limit, got, more, tc.want, tc.more)
		}
	}
	// The input's order does not matter.
	rev := slices.Clone(ss)
	slices.Reverse(rev)
	a, _ := pick(ss, ">", 6)
	b, _ := pick(rev, ">", 6)
	if names(a) != names(b) {
		t.Errorf("pick depends on the input order: %q, %q", names(a), names(b))
	}
	if kept, more := pick(nil, ">", 8); len(kept) != 0 || more != 0 {
		t.Errorf("pick(nil) = %v +%d", kept, more)
	}
}

func TestLegendNames(t *testing.T) {
	ls := func(kv ...string) Series {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return Series{Labels: m}
	}
	for _, tc := range []struct {
		ss   []Series
		want []string
	}{
		{[]Series{ls("job", "vllm", "instance", "a:1"), ls("job", "vllm", "instance", "b:1")}, []string{"instance=a:1", "instance=b:1"}},
		{[]Series{ls("__name__", "up", "job", "x"), ls("__name__", "down", "job", "x")}, []string{"up", "down"}},
		{[]Series{ls("a", "1", "b", "2"), ls("a", "1"), ls("a", "2", "b", "2")}, []string{"a=1, b=2", "a=1", "a=2, b=2"}},
		// A lone series: all its labels but the name.
		{[]Series{ls("__name__", "up", "job", "vllm", "instance", "a:1")}, []string{"instance=a:1, job=vllm"}},
		{[]Series{ls()}, []string{""}},
		{[]Series{ls("job", "x"), ls("job", "x")}, []string{"", ""}},
		{nil, []string{}},
		// Long values lose their middle.
		{[]Series{ls("model", "meta-llama/Llama-3.1-70B-Instruct-FP8-dynamic-and-then-some"), ls("model", "meta-llama/Llama-3.1-8B-Instruct")},
			[]string{"model=meta-llama/Llama-3.1-70…P8-dynamic-and-then-some", "model=meta-llama/Llama-3.1-8B-Instruct"}},
	} {
		if got := legendNames(tc.ss); !slices.Equal(got, tc.want) {
			t.Errorf("legendNames(%v) = %q, want %q", tc.ss, got, tc.want)
		}
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 5, "ab…ef"},
		{"abcdefg", 6, "ab…efg"},
		{"ääääääää", 4, "ä…ää"},
		{"abcdef", 2, "abcdef"},
	} {
		if got := shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestRuns(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	at := func(min int, v float64) Point { return Point{T: t0.Add(time.Duration(min) * time.Minute), V: v} }
	for _, tc := range []struct {
		ps   []Point
		gap  time.Duration
		want string
	}{
		{nil, 0, ""},
		{[]Point{at(0, 1), at(1, 2), at(2, 3)}, 0, "[0 1 2]"},
		{[]Point{at(0, 1), at(1, nan), at(2, 3)}, 0, "[0] [2]"},
		{[]Point{at(0, nan), at(1, inf), at(2, -inf)}, 0, ""},
		{[]Point{at(0, nan), at(1, 1), at(2, 2), at(3, nan)}, 0, "[1 2]"},
		{[]Point{at(0, 1), at(1, 2), at(5, 3), at(6, 4)}, 90 * time.Second, "[0 1] [5 6]"},
		{[]Point{at(0, 1), at(1, 2), at(5, 3), at(6, 4)}, 0, "[0 1 5 6]"},
		{[]Point{at(0, 1), at(3, nan), at(5, 3)}, 10 * time.Minute, "[0] [5]"},
	} {
		var parts []string
		for _, r := range runs(tc.ps, tc.gap) {
			var ms []string
			for _, p := range r {
				ms = append(ms, fmt.Sprint(int(p.T.Sub(t0).Minutes())))
			}
			parts = append(parts, "["+strings.Join(ms, " ")+"]")
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("runs(%v, %s) = %s, want %s", tc.ps, tc.gap, got, tc.want)
		}
	}
}

func TestTypicalInterval(t *testing.T) {
	s := series("a", 1, 2, 3, 4)
	s.Points = append(s.Points, Point{T: t0.Add(time.Hour), V: 5})
	if got := typicalInterval([]Series{s, series("b", 1)}); got != time.Minute {
		t.Errorf("typicalInterval = %s, want 1m", got)
	}
	if got := typicalInterval([]Series{series("b", 1)}); got != 0 {
		t.Errorf("typicalInterval of one point = %s, want 0", got)
	}
}

func TestDecimate(t *testing.T) {
	var pts []vg.Point
	for i := range 1000 {
		pts = append(pts, vg.Point{X: vg.Length(i) / 100, Y: vg.Length(math.Sin(float64(i)))})
	}
	got := decimate(slices.Clone(pts), 1)
	if len(got) > 10*4 || len(got) < 10*2 {
		t.Errorf("1000 points over 10 columns: %d kept, want 2 to 4 a column", len(got))
	}
	lo, hi := vg.Length(2), vg.Length(-2)
	for _, p := range got {
		lo, hi = min(lo, p.Y), max(hi, p.Y)
	}
	if lo > -0.99 || hi < 0.99 || got[0] != pts[0] || got[len(got)-1] != pts[len(pts)-1] {
		t.Errorf("decimate lost the extremes or the ends: %v .. %v, first %v, last %v", lo, hi, got[0], got[len(got)-1])
	}
	for i := 1; i < len(got); i++ {
		if got[i].X < got[i-1].X {
			t.Fatalf("decimate reorders: %v before %v", got[i-1], got[i])
		}
	}
	sparse := []vg.Point{{X: 0}, {X: 5}, {X: 10}, {X: 15}, {X: 20}, {X: 25}}
	if got := decimate(slices.Clone(sparse), 1); !slices.Equal(got, sparse) {
		t.Errorf("one point a column: %v, want them all", got)
	}
}

func TestStep(t *testing.T) {
	for _, tc := range []struct {
		span time.Duration
		want time.Duration
	}{
		{time.Hour, 12 * time.Second},
		{90 * time.Minute, 18 * time.Second},
		{2*time.Hour + 7*time.Minute, 25 * time.Second}, // 25.4 s
		{24 * time.Hour, 288 * time.Second},
		{time.Minute, time.Second},
		{0, time.Second},
		{-time.Hour, time.Second},
	} {
		if got := Step(t0, t0.Add(tc.span)); got != tc.want {
			t.Errorf("Step over %s = %s, want %s", tc.span, got, tc.want)
		}
		if n := tc.span / Step(t0, t0.Add(tc.span)); tc.span >= 10*time.Minute && (n < 290 || n > 310) {
			t.Errorf("Step over %s gives %d points", tc.span, n)
		}
	}
}
