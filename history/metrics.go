package history

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	events        prometheus.Counter
	commits       prometheus.Counter
	dropped       prometheus.Counter
	writeFailures prometheus.Counter
	corruptions   prometheus.Counter
	pruned        *prometheus.CounterVec
	size          func() float64
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paged_history_events_total",
			Help: "Events committed to the history.",
		}),
		commits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paged_history_commits_total",
			Help: "Transactions committed to the history; events recorded together share one.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paged_history_events_dropped_total",
			Help: "Events dropped, oldest first, because the queue of events waiting for a commit was full (the history could not be written).",
		}),
		writeFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paged_history_write_failures_total",
			Help: "Commits to the history that failed; their events are kept in memory and written again.",
		}),
		corruptions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paged_history_corruptions_total",
			Help: "History files found damaged and moved aside.",
		}),
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_history_pruned_events_total",
			Help: "Events deleted from the history, oldest first, by reason: retention (storage.history.retention) or size (storage.history.max_bytes).",
		}, []string{"reason"}),
		size: func() float64 { return 0 },
	}
	m.pruned.WithLabelValues("retention")
	m.pruned.WithLabelValues("size")
	if reg != nil {
		reg.MustRegister(m.events, m.commits, m.dropped, m.writeFailures, m.corruptions, m.pruned,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "paged_history_size_bytes",
				Help: "Size of the history file with its write-ahead log.",
			}, func() float64 { return m.size() }))
	}
	return m
}
