package notifier

import (
	"context"
	"slices"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/dispatch"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/alertmanager/marker"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// HeldAlert is one alert the notifier holds, whatever sent it (paged's
// rules, its built-in alerts, a Prometheus or amtool posting to
// /api/v2/alerts), with what the routing tree, the silences and the
// inhibition rules make of it now.
type HeldAlert struct {
	Fingerprint string
	Labels      labels.Labels
	// Annotations are the alert's, as stored: read them, do not change
	// them.
	Annotations  model.LabelSet
	StartsAt     time.Time
	EndsAt       time.Time
	UpdatedAt    time.Time
	GeneratorURL string
	// Receivers are the receivers of the routes the alert matches, in
	// route order.
	Receivers []string
	// GroupBy is the group_by of the first route the alert matches, and
	// GroupLabels the alert's values of it: the group it is notified in.
	GroupBy     []string
	GroupLabels labels.Labels
	SilencedBy  []string
	InhibitedBy []string
	// Stale: paged's engine last sent it with the datasource failing.
	Stale bool
}

// HeldAlerts returns the unresolved alerts the notifier holds, in no
// particular order, with their silenced and inhibited state computed as
// Alertmanager's API computes it (the silencer and the inhibitor, asked
// now).
func (n *Notifier) HeldAlerts(ctx context.Context) []HeldAlert {
	n.mu.Lock()
	conf, inhib := n.conf, n.inhib
	n.mu.Unlock()
	var route *dispatch.Route
	if conf != nil && conf.am != nil && conf.am.Route != nil {
		route = dispatch.NewRoute(conf.am.Route, nil)
	}
	now := time.Now()
	it := n.alerts.GetPending()
	defer it.Close()
	var out []HeldAlert
	for pa := range it.Next() {
		if pa == nil || pa.Data == nil {
			continue
		}
		a := pa.Data
		if a.ResolvedAt(now) {
			continue
		}
		out = append(out, n.held(ctx, a, route, inhib))
	}
	return out
}

func (n *Notifier) held(ctx context.Context, a *alert.Alert, route *dispatch.Route, inhib *inhibit.Inhibitor) HeldAlert {
	fp := a.Fingerprint()
	h := HeldAlert{
		Fingerprint:  fp.String(),
		Labels:       fromLabelSet(a.Labels),
		Annotations:  a.Annotations,
		StartsAt:     a.StartsAt,
		EndsAt:       a.EndsAt,
		UpdatedAt:    a.UpdatedAt,
		GeneratorURL: a.GeneratorURL,
		Stale:        n.stale.get(fp),
	}
	if route != nil {
		for i, r := range route.Match(a.Labels) {
			h.Receivers = append(h.Receivers, r.RouteOpts.Receiver)
			if i > 0 {
				continue
			}
			b := labels.NewScratchBuilder(len(r.RouteOpts.GroupBy))
			for name := range r.RouteOpts.GroupBy {
				h.GroupBy = append(h.GroupBy, string(name))
				if v, ok := a.Labels[name]; ok {
					b.Add(string(name), string(v))
				}
			}
			if r.RouteOpts.GroupByAll {
				h.GroupBy = []string{"..."}
				h.GroupLabels = h.Labels
			} else {
				slices.Sort(h.GroupBy)
				b.Sort()
				h.GroupLabels = b.Labels()
			}
		}
	}
	var c collector
	mctx := marker.WithContext(ctx, &c)
	if inhib != nil {
		inhib.Mutes(mctx, a.LabelSet())
	}
	n.silencer.Mutes(mctx, a.LabelSet())
	h.SilencedBy, h.InhibitedBy = c.silencedBy, c.inhibitedBy
	return h
}

func fromLabelSet(ls model.LabelSet) labels.Labels {
	b := labels.NewScratchBuilder(len(ls))
	for k, v := range ls {
		b.Add(string(k), string(v))
	}
	b.Sort()
	return b.Labels()
}

// collector is the marker the silencer and the inhibitor report an
// alert's muting IDs to (what Alertmanager's API does to predict a status).
type collector struct {
	silencedBy, inhibitedBy []string
}

func (c *collector) SetSilenced(_ model.Fingerprint, ids []string)  { c.silencedBy = ids }
func (c *collector) SetInhibited(_ model.Fingerprint, ids []string) { c.inhibitedBy = ids }
func (c *collector) Status(model.Fingerprint) alert.AlertStatus {
	return alert.AlertStatus{SilencedBy: c.silencedBy, InhibitedBy: c.inhibitedBy}
}
func (c *collector) Delete(...model.Fingerprint) {}
