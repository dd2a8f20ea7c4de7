package notifier

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/dispatch"
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
	// Ack is the Slack acknowledgement of the alert's group, nil without
	// one.
	Ack *Acknowledgement
}

// HeldAlerts returns the unresolved alerts the notifier holds, in no
// particular order, with their silenced and inhibited state computed as
// Alertmanager's API computes it (the silencer and the inhibitor, asked
// now).
func (n *Notifier) HeldAlerts(ctx context.Context) []HeldAlert {
	n.mu.Lock()
	conf, inhib := n.conf, n.inhib
	n.mu.Unlock()
	now := time.Now()
	it := n.alerts.GetPending()
	defer it.Close()

	n.heldMu.Lock()
	defer n.heldMu.Unlock()
	prev := n.heldCache
	if conf != n.heldConf { // a reload: other routes
		prev, n.heldConf = nil, conf
		n.heldRoute = nil
		if conf != nil && conf.am != nil && conf.am.Route != nil {
			n.heldRoute = dispatch.NewRoute(conf.am.Route, nil)
		}
	}
	n.heldCache = make(map[model.Fingerprint]*heldStatic, len(prev))
	var out []HeldAlert
	for pa := range it.Next() {
		if pa == nil || pa.Data == nil {
			continue
		}
		a := pa.Data
		if a.ResolvedAt(now) {
			continue
		}
		// An alert's labels are its identity (the fingerprint is their
		// hash), and its route depends on them only: work them out once,
		// not at every request.
		fp := a.Fingerprint()
		st, ok := prev[fp]
		if !ok {
			st = newHeldStatic(a, n.heldRoute)
		}
		n.heldCache[fp] = st
		h := HeldAlert{
			Fingerprint: st.fingerprint, Labels: st.labels, Annotations: a.Annotations,
			StartsAt: a.StartsAt, EndsAt: a.EndsAt, UpdatedAt: a.UpdatedAt, GeneratorURL: a.GeneratorURL,
			Receivers: st.receivers, GroupBy: st.groupBy, GroupLabels: st.groupLabels,
			Stale: n.stale.get(fp),
		}
		if len(st.receivers) > 0 && conf != nil && conf.SlackInteractivity != nil {
			h.Ack = n.acknowledgement(conf, st.receivers[0], st.groupKey)
		}
		var c collector
		mctx := marker.WithContext(ctx, &c)
		if inhib != nil {
			inhib.Mutes(mctx, a.LabelSet())
		}
		n.silencer.Mutes(mctx, a.LabelSet())
		h.SilencedBy, h.InhibitedBy = c.silencedBy, c.inhibitedBy
		out = append(out, h)
	}
	return out
}

// heldStatic is what does not change while an alert is held: its labels
// and where the routing tree sends it.
type heldStatic struct {
	fingerprint string
	labels      labels.Labels
	receivers   []string
	groupBy     []string
	groupLabels labels.Labels
	groupKey    string // of the first route's group
}

func newHeldStatic(a *alert.Alert, route *dispatch.Route) *heldStatic {
	st := &heldStatic{fingerprint: a.Fingerprint().String(), labels: fromLabelSet(a.Labels)}
	if route == nil {
		return st
	}
	for i, r := range route.Match(a.Labels) {
		st.receivers = append(st.receivers, r.RouteOpts.Receiver)
		if i > 0 {
			continue
		}
		if r.RouteOpts.GroupByAll {
			st.groupBy, st.groupLabels = []string{"..."}, st.labels
			st.groupKey = fmt.Sprintf("%s:%s", r.Key(), a.Labels)
			continue
		}
		b := labels.NewScratchBuilder(len(r.RouteOpts.GroupBy))
		gl := model.LabelSet{}
		for name := range r.RouteOpts.GroupBy {
			st.groupBy = append(st.groupBy, string(name))
			if v, ok := a.Labels[name]; ok {
				b.Add(string(name), string(v))
				gl[name] = v
			}
		}
		// As the dispatcher keys its groups.
		st.groupKey = fmt.Sprintf("%s:%s", r.Key(), gl)
		slices.Sort(st.groupBy)
		b.Sort()
		st.groupLabels = b.Labels()
	}
	return st
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
