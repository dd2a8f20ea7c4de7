package simulator

import (
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// kind is the Prometheus type of a family.
type kind int

const (
	kindCounter kind = iota
	kindGauge
	kindHistogram
	kindSummary
)

func (k kind) String() string {
	return [...]string{"counter", "gauge", "histogram", "summary"}[k]
}

// family is one metric family as a server exposes it. name is the exposed
// name: for prometheus_client counters it already ends in _total. Series are
// created on first use, as the real libraries do, unless a server pre-creates
// them.
type family struct {
	name      string
	help      string
	kind      kind
	labels    []string
	buckets   []float64 // histograms: finite upper bounds, ascending
	quantiles []float64 // summaries: quantiles exposed (their value is constant 0)
	noCreated bool      // never has a _created series (prometheus_client's GC and process collectors)
	fixed     bool      // dcgm-exporter DOUBLE field: written with %f

	desc   *prometheus.Desc
	series map[string]*series
}

// series is one label combination of a family. Histogram bucket counts are
// per bucket (not cumulative); the last slot is +Inf.
type series struct {
	values  []string
	value   float64
	counts  []uint64
	sum     float64
	count   uint64
	created time.Time
}

func newFamily(name, help string, k kind, labels []string, buckets []float64) *family {
	return &family{
		name:    name,
		help:    help,
		kind:    k,
		labels:  labels,
		buckets: buckets,
		desc:    prometheus.NewDesc(name, help, labels, nil),
		series:  make(map[string]*series),
	}
}

// with returns the series for the label values, creating it at created.
func (f *family) with(created time.Time, values ...string) *series {
	if len(values) != len(f.labels) {
		panic("simulator: family " + f.name + ": wrong number of label values")
	}
	key := strings.Join(values, "\xff")
	s, ok := f.series[key]
	if !ok {
		s = &series{values: append([]string(nil), values...), created: created}
		if f.kind == kindHistogram {
			s.counts = make([]uint64, len(f.buckets)+1)
		}
		f.series[key] = s
	}
	return s
}

// observe adds n observations of v to a histogram or summary series.
func (f *family) observe(s *series, v float64, n uint64) {
	if n == 0 {
		return
	}
	if f.kind == kindHistogram {
		i := sort.SearchFloat64s(f.buckets, v) // first bound >= v; len(buckets) is +Inf
		s.counts[i] += n
	}
	s.sum += v * float64(n)
	s.count += n
}

// metricSet is the collector registered in a simulator's own registry. It
// turns the families into const metrics with created timestamps, so the
// registry can check them and the writers can render them.
type metricSet struct {
	families []*family // exposition order
}

func (m *metricSet) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range m.families {
		ch <- f.desc
	}
}

func (m *metricSet) Collect(ch chan<- prometheus.Metric) {
	for _, f := range m.families {
		for _, s := range f.series {
			ch <- f.constMetric(s)
		}
	}
}

func (f *family) constMetric(s *series) prometheus.Metric {
	switch f.kind {
	case kindCounter:
		return prometheus.MustNewConstMetricWithCreatedTimestamp(f.desc, prometheus.CounterValue, s.value, s.created, s.values...)
	case kindGauge:
		return prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, s.value, s.values...)
	case kindHistogram:
		buckets := make(map[float64]uint64, len(f.buckets))
		var cum uint64
		for i, b := range f.buckets {
			cum += s.counts[i]
			buckets[b] = cum
		}
		return prometheus.MustNewConstHistogramWithCreatedTimestamp(f.desc, s.count, s.sum, buckets, s.created, s.values...)
	default:
		q := make(map[float64]float64, len(f.quantiles))
		for _, x := range f.quantiles {
			q[x] = 0
		}
		return prometheus.MustNewConstSummaryWithCreatedTimestamp(f.desc, s.count, s.sum, q, s.created, s.values...)
	}
}
