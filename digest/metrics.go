package digest

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of paged_report_digests_total.
const (
	// OutcomeSent: this paged delivered the digest (to every integration
	// that did not have it).
	OutcomeSent = "sent"
	// OutcomeAlreadySent: every integration had it already, from the
	// other member of an HA pair or from this paged before a restart.
	OutcomeAlreadySent = "already_sent"
	// OutcomeFailed: an attempt failed; it is tried again (1m, then
	// twice as long each time, at most 1h) until the next one is due.
	OutcomeFailed = "failed"
	// OutcomeSkipped: a member of an HA pair came to it too late to know
	// whether the other sent it (notifier.ErrDigestTooLate).
	OutcomeSkipped = "skipped"
)

type metrics struct {
	digests *prometheus.CounterVec
	last    prometheus.Gauge
	next    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		digests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_report_digests_total",
			Help: "Weekly digests (report.digest) by outcome: sent, already_sent (by the HA peer, or before a restart), failed (an attempt; retried), skipped (too late to tell whether the HA peer sent it).",
		}, []string{"outcome"}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "paged_report_digest_last_timestamp_seconds",
			Help: "Scheduled time of the last digest delivered (or found delivered), as recorded in storage.path, in Unix seconds; 0: none yet.",
		}),
		next: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "paged_report_digest_next_timestamp_seconds",
			Help: "Scheduled time of the next digest, in Unix seconds; 0: no report.digest.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.digests, m.last, m.next)
	}
	for _, o := range []string{OutcomeSent, OutcomeAlreadySent, OutcomeFailed, OutcomeSkipped} {
		m.digests.WithLabelValues(o)
	}
	return m
}
