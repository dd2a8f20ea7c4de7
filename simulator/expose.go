package simulator

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// style is how one client library lays out the text exposition format.
type style int

const (
	// stylePython is prometheus_client's generate_latest: sorted labels
	// (le and quantile included), buckets then _count then _sum, and, when
	// created series are on, a "<family>_created" gauge after each counter,
	// histogram and summary.
	stylePython style = iota
	// stylePythonMultiprocess is prometheus_client's MultiProcessCollector
	// output (SGLang): _sum first, then buckets, then _count; no _created.
	stylePythonMultiprocess
	// styleRust is metrics-exporter-prometheus (TGI): labels in declared
	// order with le last, _sum then _count, no HELP for undescribed
	// metrics, a blank line after each family, and no family until it has a
	// series.
	styleRust
	// styleCpp is prometheus-cpp (Triton): sorted labels with le last,
	// _count then _sum then buckets.
	styleCpp
	// styleDCGM is dcgm-exporter's text template: labels in the template's
	// order, every family written (each has a series per GPU), no blank
	// lines, INT64 fields with %d and DOUBLE fields with %f.
	styleDCGM
	// styleGo is client_golang (the inference gateway's EPP): sorted
	// labels with le last, buckets then _sum then _count, no _created.
	styleGo
)

// exposition renders gathered families in the declared order.
type exposition struct {
	style   style
	created bool // prometheus_client created series (vLLM V1)
	format  formatFunc
}

func (x exposition) write(w io.Writer, families []*family, gathered []*dto.MetricFamily) error {
	byName := make(map[string]*dto.MetricFamily, len(gathered))
	for _, mf := range gathered {
		byName[mf.GetName()] = mf
	}
	bw := bufio.NewWriter(w)
	for _, f := range families {
		mf := byName[f.name]
		if mf == nil && (x.style == styleRust) {
			continue
		}
		x.writeFamily(bw, f, mf)
	}
	return bw.Flush()
}

func (x exposition) writeFamily(w *bufio.Writer, f *family, mf *dto.MetricFamily) {
	if f.help != "" || x.style != styleRust {
		fmt.Fprintf(w, "# HELP %s %s\n", f.name, escapeHelp(f.help))
	}
	fmt.Fprintf(w, "# TYPE %s %s\n", f.name, f.kind)
	var metrics []*dto.Metric
	if mf != nil {
		metrics = mf.GetMetric()
	}
	for _, m := range metrics {
		x.writeMetric(w, f, m)
	}
	if x.created && !f.noCreated && f.kind != kindGauge && len(metrics) > 0 {
		base := strings.TrimSuffix(f.name, "_total")
		fmt.Fprintf(w, "# HELP %s_created %s\n", base, escapeHelp(f.help))
		fmt.Fprintf(w, "# TYPE %s_created gauge\n", base)
		for _, m := range metrics {
			var ts float64
			switch f.kind {
			case kindCounter:
				ts = timestampSeconds(m.GetCounter().GetCreatedTimestamp().AsTime().UnixNano())
			case kindHistogram:
				ts = timestampSeconds(m.GetHistogram().GetCreatedTimestamp().AsTime().UnixNano())
			case kindSummary:
				ts = timestampSeconds(m.GetSummary().GetCreatedTimestamp().AsTime().UnixNano())
			}
			x.sample(w, base+"_created", f, m, "", "", ts)
		}
	}
	if x.style == styleRust {
		w.WriteString("\n")
	}
}

func timestampSeconds(ns int64) float64 { return float64(ns) / 1e9 }

func (x exposition) writeMetric(w *bufio.Writer, f *family, m *dto.Metric) {
	switch f.kind {
	case kindCounter:
		x.sample(w, f.name, f, m, "", "", m.GetCounter().GetValue())
	case kindGauge:
		x.sample(w, f.name, f, m, "", "", m.GetGauge().GetValue())
	case kindHistogram:
		h := m.GetHistogram()
		buckets := func() {
			for _, b := range h.GetBucket() {
				x.sample(w, f.name+"_bucket", f, m, "le", x.format(b.GetUpperBound()), float64(b.GetCumulativeCount()))
			}
			x.sample(w, f.name+"_bucket", f, m, "le", "+Inf", float64(h.GetSampleCount()))
		}
		count := func() { x.sample(w, f.name+"_count", f, m, "", "", float64(h.GetSampleCount())) }
		sum := func() { x.sample(w, f.name+"_sum", f, m, "", "", h.GetSampleSum()) }
		switch x.style {
		case stylePythonMultiprocess:
			sum()
			buckets()
			count()
		case styleRust, styleGo:
			buckets()
			sum()
			count()
		case styleCpp:
			count()
			sum()
			buckets()
		default:
			buckets()
			count()
			sum()
		}
	case kindSummary:
		s := m.GetSummary()
		qs := s.GetQuantile()
		sort.Slice(qs, func(i, j int) bool { return qs[i].GetQuantile() < qs[j].GetQuantile() })
		for _, q := range qs {
			x.sample(w, f.name, f, m, "quantile", x.format(q.GetQuantile()), q.GetValue())
		}
		if x.style == styleRust {
			x.sample(w, f.name+"_sum", f, m, "", "", s.GetSampleSum())
			x.sample(w, f.name+"_count", f, m, "", "", float64(s.GetSampleCount()))
		} else {
			x.sample(w, f.name+"_count", f, m, "", "", float64(s.GetSampleCount()))
			x.sample(w, f.name+"_sum", f, m, "", "", s.GetSampleSum())
		}
	}
}

// sample writes one line. extraName/extraValue is the le or quantile label.
func (x exposition) sample(w *bufio.Writer, name string, f *family, m *dto.Metric, extraName, extraValue string, v float64) {
	type pair struct{ name, value string }
	pairs := make([]pair, 0, len(f.labels)+1)
	if x.style == styleRust || x.style == styleDCGM {
		// Declared order, as the Rust exporter and dcgm-exporter's template keep them.
		got := make(map[string]string, len(m.GetLabel()))
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		for _, l := range f.labels {
			pairs = append(pairs, pair{l, got[l]})
		}
	} else {
		for _, lp := range m.GetLabel() {
			pairs = append(pairs, pair{lp.GetName(), lp.GetValue()})
		}
	}
	if extraName != "" {
		pairs = append(pairs, pair{extraName, extraValue})
		if x.style == stylePython || x.style == stylePythonMultiprocess {
			sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].name < pairs[j].name })
		}
	}
	w.WriteString(name)
	if len(pairs) > 0 {
		w.WriteByte('{')
		for i, p := range pairs {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(p.name)
			w.WriteString(`="`)
			w.WriteString(escapeLabelValue(p.value))
			w.WriteByte('"')
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		w.WriteString(formatPython(v))
	case f.fixed:
		w.WriteString(strconv.FormatFloat(v, 'f', 6, 64))
	default:
		w.WriteString(x.format(v))
	}
	w.WriteByte('\n')
}

func escapeHelp(s string) string {
	if !strings.ContainsAny(s, "\\\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func escapeLabelValue(s string) string {
	if !strings.ContainsAny(s, "\\\n\"") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}
