package rules

import (
	"context"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// Alert is what the engine hands to the notifier: one alert instance in the
// shape Alertmanager's API takes. It lives here, in the package both sides
// import, so that the engine never imports the notifier.
//
// An alert whose EndsAt is in the past is resolved. The engine re-sends
// active alerts before EndsAt passes; an alert it stops sending resolves
// when EndsAt passes, as in Alertmanager.
type Alert struct {
	Labels       labels.Labels // identity: alertname, rule labels, series labels, external labels
	Annotations  labels.Labels // rendered summary, description, runbook_url...
	StartsAt     time.Time     // when it started firing (ActiveAt + for)
	EndsAt       time.Time     // resolve time, or the time until which it is valid
	GeneratorURL string        // link to the expression's graph
	// Stale is set while the datasource fails: the alert keeps its last
	// state instead of resolving. It is a flag, not a label, so the alert's
	// identity does not change.
	Stale bool
}

// Resolved reports whether the alert is resolved at now.
func (a *Alert) Resolved(now time.Time) bool {
	return !a.EndsAt.IsZero() && !a.EndsAt.After(now)
}

// NotifyFunc delivers alerts. The engine calls it after each evaluation
// with the alerts that are due to be sent (new, re-sent, or resolved).
type NotifyFunc func(ctx context.Context, alerts []*Alert)
