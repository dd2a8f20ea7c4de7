package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the daemon's own (reloads); web, the engine and the
// notifier register theirs on the same registry.
type metrics struct {
	lastReloadOK      prometheus.Gauge
	lastReloadSuccess prometheus.Gauge
	reloads           *prometheus.CounterVec
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
	}
	reg.MustRegister(m.lastReloadOK, m.lastReloadSuccess, m.reloads)
	return m
}

func (m *metrics) reloadSuccess(now time.Time) {
	m.lastReloadOK.Set(1)
	m.lastReloadSuccess.Set(float64(now.Unix()))
}
