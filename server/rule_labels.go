package server

import (
	"context"
	"fmt"
	"hash/fnv"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/rules"
)

// limitRuleLabels hands the engine's alerts to notify with every label
// value longer than web.max_label_value_bytes cut to that length: its
// start, "…", and a hash of the whole value, so that alerts whose values
// differ only past the cut stay apart. The engine keeps the whole value
// (/api/v1/alerts shows it); the notifier, its API, its filters and the
// notifications get the cut one. Each value cut is counted in
// paged_alert_label_values_cut_total. Label count and label name size
// are not enforced on rules' alerts: they come from the operator's own
// rules and series, and dropping a label could merge alerts or lose a
// page.
func (s *Server) limitRuleLabels(notify rules.NotifyFunc, reg prometheus.Registerer) rules.NotifyFunc {
	cut := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "paged_alert_label_values_cut_total",
		Help: "Label values of rules' alerts cut to web.max_label_value_bytes before they reached the notifier.",
	})
	reg.MustRegister(cut)
	return func(ctx context.Context, alerts []*rules.Alert) {
		limit := int(s.Config().Web.MaxLabelValueBytes)
		var out []*rules.Alert
		for i, a := range alerts {
			long := false
			a.Labels.Range(func(l labels.Label) { long = long || len(l.Value) > limit })
			if !long {
				if out != nil {
					out = append(out, a)
				}
				continue
			}
			if out == nil {
				out = append(make([]*rules.Alert, 0, len(alerts)), alerts[:i]...)
			}
			b := labels.NewBuilder(a.Labels)
			a.Labels.Range(func(l labels.Label) {
				if len(l.Value) > limit {
					b.Set(l.Name, cutValue(l.Value, limit))
					cut.Inc()
				}
			})
			c := *a
			c.Labels = b.Labels()
			out = append(out, &c)
		}
		if out == nil {
			out = alerts
		}
		notify(ctx, out)
	}
}

// cutValue cuts v to at most limit bytes, on a character boundary, ending
// in "…" and 16 hex digits of v's FNV-1a hash.
func cutValue(v string, limit int) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(v))
	sum := fmt.Sprintf("%016x", h.Sum64())
	tail := "…" + sum
	if limit <= len(tail) {
		return sum[:min(limit, len(sum))]
	}
	keep := limit - len(tail)
	for keep > 0 && !utf8.RuneStart(v[keep]) {
		keep--
	}
	return v[:keep] + tail
}
