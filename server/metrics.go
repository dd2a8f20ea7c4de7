package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's own; the engine and the notifier register
// theirs on the same registry.
type metrics struct {
	lastReloadOK      prometheus.Gauge
	lastReloadSuccess prometheus.Gauge
	reloads           *prometheus.CounterVec
	rejected          *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		lastReloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "paged_config_last_reload_successful",
			Help: "Whether the last configuration reload succeeded (1) or failed and the previous configuration is still running (0).",
		}),
		lastReloadSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "paged_config_last_reload_success_timestamp_seconds",
			Help: "Timestamp of the last successful configuration load.",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_config_reloads_total",
			Help: "Configuration reloads by result (success or failure).",
		}, []string{"result"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_http_requests_rejected_total",
			Help: "HTTP requests refused by reason: body_too_large (web.max_request_body_bytes), too_many_alerts (web.max_alerts_per_request), body_not_allowed (a body on GET, HEAD, DELETE or OPTIONS), bytes_in_flight (web.max_request_bytes_in_flight), body_timeout (web.read_timeout), body_unreadable, labels (web.max_labels_per_alert, web.max_label_name_bytes, web.max_label_value_bytes), regexp (web.max_regexp_size) and regexp_timeout (web.regexp_query_timeout).",
		}, []string{"reason"}),
	}
	for _, r := range []string{"body_too_large", "too_many_alerts", "body_not_allowed", "bytes_in_flight", "body_timeout", "body_unreadable", "labels", "regexp", "regexp_timeout"} {
		m.rejected.WithLabelValues(r)
	}
	reg.MustRegister(m.lastReloadOK, m.lastReloadSuccess, m.reloads, m.rejected)
	return m
}

func (m *metrics) reloadSuccess(now time.Time) {
	m.lastReloadOK.Set(1)
	m.lastReloadSuccess.Set(float64(now.Unix()))
}
