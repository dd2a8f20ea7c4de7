package notifier

import (
	"context"
	"log/slog"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are paged's own counters, next to Alertmanager's
// alertmanager_notifications_* which the embedded pipeline also exports.
type metrics struct {
	notifications *prometheus.CounterVec // receiver, integration, outcome
	retries       *prometheus.CounterVec // receiver, integration
	dropped       *prometheus.CounterVec // reason
	slackErrors   *prometheus.CounterVec // error (Slack's ok:false code)
	forwarded     *prometheus.CounterVec // alertmanager, outcome
	flushes       *prometheus.CounterVec // receiver

	idleCollections prometheus.Counter
}

// Outcomes of one delivery attempt.
const (
	outcomeSuccess   = "success"
	outcomeRetry     = "retry"     // failed, will be retried
	outcomePermanent = "permanent" // failed, not retried (ok:false, 4xx, bad template)
)

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_notifier_notifications_total",
			Help: "Delivery attempts by receiver, integration and outcome (success, retry, permanent).",
		}, []string{"receiver", "integration", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_notifier_retries_total",
			Help: "Delivery attempts that failed and will be retried.",
		}, []string{"receiver", "integration"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_notifier_dropped_total",
			Help: "Alerts or notifications dropped, by reason.",
		}, []string{"reason"}),
		slackErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_notifier_slack_errors_total",
			Help: "Slack API responses with ok:false, by error code.",
		}, []string{"error"}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_notifier_forwarded_alerts_total",
			Help: "Alerts sent to external Alertmanagers, by outcome.",
		}, []string{"alertmanager", "outcome"}),
		flushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_notifier_group_flushes_total",
			Help: "Alert group flushes that went through the notification pipeline, whether they sent, were already sent (here or by an HA peer) or were muted.",
		}, []string{"receiver"}),
		idleCollections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paged_notifier_idle_gc_total",
			Help: "Garbage collections the notifier ran in the quiet after a burst of flushes, so that the next burst does not pay for one (docs/scaling.md).",
		}),
	}
	for _, c := range []prometheus.Collector{m.notifications, m.retries, m.dropped, m.slackErrors, m.forwarded, m.flushes, m.idleCollections} {
		// A second Notifier on the same registry keeps counting in its own
		// collectors; only the first one is exported.
		_ = reg.Register(c)
	}
	for _, r := range []string{"invalid", "store", "forward_queue_full", "permanent_failure"} {
		m.dropped.WithLabelValues(r)
	}
	return m
}

// instrumented counts the verdicts of an integration, in counters looked
// up once (a delivery in a storm does not hash its labels again).
type instrumented struct {
	next                        notify.Notifier
	success, retry, permanent   prometheus.Counter
	retries, droppedPermanently prometheus.Counter
}

func (m *metrics) wrap(next notify.Notifier, receiver, integration string) notify.Notifier {
	return &instrumented{
		next:               next,
		success:            m.notifications.WithLabelValues(receiver, integration, outcomeSuccess),
		retry:              m.notifications.WithLabelValues(receiver, integration, outcomeRetry),
		permanent:          m.notifications.WithLabelValues(receiver, integration, outcomePermanent),
		retries:            m.retries.WithLabelValues(receiver, integration),
		droppedPermanently: m.dropped.WithLabelValues("permanent_failure"),
	}
}

// Notify implements notify.Notifier.
func (i *instrumented) Notify(ctx context.Context, alerts ...*alert.Alert) notify.NotifyVerdict {
	v := i.next.Notify(ctx, alerts...)
	switch {
	case v.Err() == nil:
		i.success.Inc()
	case v.ShouldRetry():
		i.retry.Inc()
		i.retries.Inc()
	default:
		i.permanent.Inc()
		i.droppedPermanently.Inc()
	}
	return v
}

// countFlushes runs the pipeline on pool's goroutines, counts every pass
// of an alert group through it, and tells the idle collector when flushes
// run.
type countFlushes struct {
	next notify.Stage
	m    *metrics
	pool *stackPool
	idle *idleCollector
}

func (c countFlushes) Exec(ctx context.Context, l *slog.Logger, alerts ...*alert.Alert) (context.Context, []*alert.Alert, error) {
	var (
		out []*alert.Alert
		err error
	)
	c.idle.begin()
	defer c.idle.end() // runtime.Goexit in a stage ends this goroutine too
	c.pool.run(func() { ctx, out, err = c.next.Exec(ctx, l, alerts...) })
	if r, ok := notify.ReceiverName(ctx); ok {
		c.m.flushes.WithLabelValues(r).Inc()
	}
	return ctx, out, err
}
