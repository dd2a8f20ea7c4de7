package simulator

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	commonmodel "github.com/prometheus/common/model"
)

// testStart is a fixed start so outputs are reproducible.
var testStart = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is the injectable clock: tests move it, nothing sleeps.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestSim(t *testing.T, opts Options) (*Simulator, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: testStart}
	opts.Now = clk.now
	opts.Start = testStart
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	return s, clk
}

// scrapeText returns the exposition at the clock's now.
func scrapeText(t *testing.T, s *Simulator) string {
	t.Helper()
	var buf bytes.Buffer
	if err := s.WriteMetrics(&buf); err != nil {
		t.Fatalf("WriteMetrics: %v", err)
	}
	return buf.String()
}

// parseText parses an exposition with the Prometheus text parser.
func parseText(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	if !strings.HasSuffix(text, "\n") {
		text += "\n" // the vLLM captures end without a newline
	}
	p := expfmt.NewTextParser(commonmodel.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	return mfs
}

func scrape(t *testing.T, s *Simulator) map[string]*dto.MetricFamily {
	t.Helper()
	return parseText(t, scrapeText(t, s))
}

// value sums the samples of a counter or gauge family whose labels match.
func value(mfs map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	mf := mfs[name]
	if mf == nil {
		return math.NaN()
	}
	var sum float64
	for _, m := range mf.GetMetric() {
		if !labelsMatch(m, match) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

func labelsMatch(m *dto.Metric, match map[string]string) bool {
	for k, v := range match {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == k && lp.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// hist is one histogram series: finite bounds and cumulative counts, with
// +Inf as the last count.
type hist struct {
	bounds []float64
	cum    []float64
}

func histogram(t *testing.T, mfs map[string]*dto.MetricFamily, name string) hist {
	t.Helper()
	mf := mfs[name]
	if mf == nil || len(mf.GetMetric()) == 0 {
		t.Fatalf("no histogram %s", name)
	}
	h := mf.GetMetric()[0].GetHistogram()
	var out hist
	for _, b := range h.GetBucket() {
		if math.IsInf(b.GetUpperBound(), 1) {
			continue
		}
		out.bounds = append(out.bounds, b.GetUpperBound())
		out.cum = append(out.cum, float64(b.GetCumulativeCount()))
	}
	out.cum = append(out.cum, float64(h.GetSampleCount()))
	return out
}

// minus is the increase between two scrapes of the same histogram.
func (h hist) minus(o hist) hist {
	d := hist{bounds: h.bounds, cum: make([]float64, len(h.cum))}
	for i := range h.cum {
		d.cum[i] = h.cum[i] - o.cum[i]
	}
	return d
}

// quantile is histogram_quantile: linear interpolation inside the bucket.
func (h hist) quantile(q float64) float64 {
	total := h.cum[len(h.cum)-1]
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	i := sort.Search(len(h.cum), func(i int) bool { return h.cum[i] >= rank })
	if i >= len(h.bounds) {
		return h.bounds[len(h.bounds)-1]
	}
	lo, below := 0.0, 0.0
	if i > 0 {
		lo, below = h.bounds[i-1], h.cum[i-1]
	}
	in := h.cum[i] - below
	if in == 0 {
		return h.bounds[i]
	}
	return lo + (h.bounds[i]-lo)*(rank-below)/in
}

func formatBounds(b []float64) string {
	var s []string
	for _, v := range b {
		s = append(s, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return "[" + strings.Join(s, " ") + "]"
}
