package web

import "github.com/prometheus/client_golang/prometheus"

// metrics are web's own; the daemon, the engine and the notifier
// register theirs on the same registry.
type metrics struct {
	rejected *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, inFlight func() float64) *metrics {
	rejected := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paged_http_requests_rejected_total",
		Help: "HTTP requests refused by reason: body_too_large (web.max_request_body_bytes), too_many_alerts (web.max_alerts_per_request), body_not_allowed (a body on GET, HEAD, DELETE or OPTIONS), bytes_in_flight (web.max_request_bytes_in_flight), body_timeout (web.read_timeout), body_unreadable, labels (web.max_labels_per_alert, web.max_label_name_bytes, web.max_label_value_bytes), regexp (web.max_regexp_size) and regexp_timeout (web.regexp_query_timeout).",
	}, []string{"reason"})
	for _, r := range []string{"body_too_large", "too_many_alerts", "body_not_allowed", "bytes_in_flight", "body_timeout", "body_unreadable", "labels", "regexp", "regexp_timeout"} {
		rejected.WithLabelValues(r)
	}
	reg.MustRegister(rejected, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "paged_http_request_bytes_in_flight",
		Help: "Bytes of request bodies held in memory now, bounded by web.max_request_bytes_in_flight.",
	}, inFlight))
	return &metrics{rejected: rejected}
}
