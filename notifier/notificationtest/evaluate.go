package notificationtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/dispatch"
	"github.com/prometheus/alertmanager/eventrecorder"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/alertmanager/labelset"
	"github.com/prometheus/alertmanager/marker"
	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/alertmanager/provider/mem"
	"github.com/prometheus/alertmanager/silence"
	"github.com/prometheus/alertmanager/silence/silencepb"
	"github.com/prometheus/alertmanager/timeinterval"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pagedhq/paged/notifier"
)

// group is one aggregation group the alerts under test form: a route and
// the values of its group_by labels.
type group struct {
	route  *dispatch.Route
	labels model.LabelSet
	key    string // the dispatcher's group key
	alerts []*alert.Alert
}

// outcome is what the notifier does with the alerts under test.
type outcome struct {
	tree       *dispatch.Route
	order      map[*dispatch.Route]int // depth-first index in the tree
	routes     []*dispatch.Route       // every route the alerts reach, in tree order
	groups     []*group                // in route order, then by group key
	inhibitors map[model.Fingerprint][]*alert.Alert
	silencedBy map[model.Fingerprint][]string // silence comments
	muted      map[*dispatch.Route]string     // why the route's notifications are muted
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// evaluate routes the alerts under test, and finds which are inhibited
// (by any alert present), silenced and muted, with Alertmanager's code.
func evaluate(ctx context.Context, conf *notifier.Config, at time.Time, under, also []*alert.Alert, silences []Silence) (*outcome, error) {
	am := conf.Alertmanager()
	o := &outcome{
		tree:       dispatch.NewRoute(am.Route, nil),
		order:      map[*dispatch.Route]int{},
		inhibitors: map[model.Fingerprint][]*alert.Alert{},
		silencedBy: map[model.Fingerprint][]string{},
		muted:      map[*dispatch.Route]string{},
	}
	o.tree.Walk(func(r *dispatch.Route) { o.order[r] = len(o.order) })

	// Routing and grouping, as the dispatcher does it.
	reached := map[*dispatch.Route]bool{}
	byKey := map[string]*group{}
	for _, a := range under {
		for _, r := range o.tree.Match(a.Labels) {
			reached[r] = true
			gl := groupLabels(a, r)
			key := fmt.Sprintf("%s:%s", r.Key(), gl)
			g := byKey[key]
			if g == nil {
				g = &group{route: r, labels: gl, key: key}
				byKey[key] = g
				o.groups = append(o.groups, g)
			}
			g.alerts = append(g.alerts, a)
		}
	}
	for r := range reached {
		o.routes = append(o.routes, r)
	}
	slices.SortFunc(o.routes, func(a, b *dispatch.Route) int { return o.order[a] - o.order[b] })
	sort.SliceStable(o.groups, func(i, j int) bool {
		gi, gj := o.groups[i], o.groups[j]
		if o.order[gi.route] != o.order[gj.route] {
			return o.order[gi.route] < o.order[gj.route]
		}
		return gi.key < gj.key
	})
	for _, g := range o.groups {
		sort.Stable(alert.AlertSlice(g.alerts))
	}

	// Inhibition: every alert present is a possible source.
	if len(am.InhibitRules) > 0 {
		store, err := mem.NewAlerts(ctx, time.Hour, 0, nil, discard(), eventrecorder.Recorder{}, prometheus.NewRegistry(), nil)
		if err != nil {
			return nil, err
		}
		defer store.Close()
		all := append(slices.Clone(also), under...)
		byFP := map[string]*alert.Alert{}
		for _, a := range all {
			byFP[a.Fingerprint().String()] = a
		}
		if err := store.Put(ctx, all...); err != nil {
			return nil, fmt.Errorf("alerts: %w", err)
		}
		ih := inhibit.NewInhibitor(store, am.InhibitRules, discard(), eventrecorder.Recorder{})
		done := make(chan struct{})
		go func() { defer close(done); ih.Run() }()
		ih.WaitForLoading()
		m := marker.NewAlertMarker()
		mctx := marker.WithContext(ctx, m)
		for _, a := range under {
			fp := a.Fingerprint()
			if ih.Mutes(mctx, labelset.FromModel(a.Labels)) {
				for _, id := range m.Status(fp).InhibitedBy {
					if src := byFP[id]; src != nil {
						o.inhibitors[fp] = append(o.inhibitors[fp], src)
					}
				}
			}
		}
		ih.Stop()
		<-done
	}

	// Silences, in force from now for an hour (Alertmanager's silences
	// run on the wall clock).
	if len(silences) > 0 {
		sils, err := silence.New(silence.Options{Retention: time.Hour, Logger: discard(), Metrics: prometheus.NewRegistry()})
		if err != nil {
			return nil, err
		}
		now := time.Now()
		comments := map[string]string{}
		for i, s := range silences {
			pb := &silencepb.Silence{
				StartsAt: timestamppb.New(now.Add(-time.Minute)), EndsAt: timestamppb.New(now.Add(time.Hour)),
				Comment: s.Comment, CreatedBy: "paged test",
			}
			if s.CreatedBy != "" {
				pb.CreatedBy = s.CreatedBy
			}
			if pb.Comment == "" {
				pb.Comment = fmt.Sprintf("silences[%d]", i)
			}
			for _, text := range s.Matchers {
				ms, err := amlabels.ParseMatchers(text)
				if err != nil {
					return nil, fmt.Errorf("%s: silence matcher %q: %w", s.Pos, text, err)
				}
				for _, m := range ms {
					pb.Matchers = append(pb.Matchers, &silencepb.Matcher{Type: matchType(m.Type), Name: m.Name, Pattern: m.Value})
				}
			}
			if err := sils.Set(ctx, pb); err != nil {
				return nil, fmt.Errorf("%s: silence: %w", s.Pos, err)
			}
			comments[pb.Id] = pb.Comment
		}
		m := marker.NewAlertMarker()
		mctx := marker.WithContext(ctx, m)
		silencer := silence.NewSilencer(sils, discard(), eventrecorder.Recorder{})
		for _, a := range under {
			fp := a.Fingerprint()
			if silencer.Mutes(mctx, labelset.FromModel(a.Labels)) {
				for _, id := range m.Status(fp).SilencedBy {
					o.silencedBy[fp] = append(o.silencedBy[fp], comments[id])
				}
				slices.Sort(o.silencedBy[fp])
			}
		}
	}

	// Time intervals at `at`, as the time-active and time-mute stages.
	if !at.IsZero() {
		intervals := map[string][]timeinterval.TimeInterval{}
		for _, ti := range am.MuteTimeIntervals {
			intervals[ti.Name] = ti.TimeIntervals
		}
		for _, ti := range am.TimeIntervals {
			intervals[ti.Name] = ti.TimeIntervals
		}
		iv := timeinterval.NewIntervener(intervals)
		for _, r := range o.routes {
			if active := r.RouteOpts.ActiveTimeIntervals; len(active) > 0 {
				in, _, err := iv.Mutes(active, at)
				if err != nil {
					return nil, err
				}
				if !in {
					o.muted[r] = "outside active_time_intervals " + strings.Join(active, ", ")
					continue
				}
			}
			muted, names, err := iv.Mutes(r.RouteOpts.MuteTimeIntervals, at)
			if err != nil {
				return nil, err
			}
			if muted {
				o.muted[r] = strings.Join(names, ", ")
			}
		}
	}
	return o, nil
}

// groupLabels are the alert's values of the route's group_by labels (the
// dispatcher's getGroupLabels).
func groupLabels(a *alert.Alert, r *dispatch.Route) model.LabelSet {
	gl := model.LabelSet{}
	for ln, lv := range a.Labels {
		if _, ok := r.RouteOpts.GroupBy[ln]; ok || r.RouteOpts.GroupByAll {
			gl[ln] = lv
		}
	}
	return gl
}

func matchType(t amlabels.MatchType) silencepb.Matcher_Type {
	switch t {
	case amlabels.MatchNotEqual:
		return silencepb.Matcher_NOT_EQUAL
	case amlabels.MatchRegexp:
		return silencepb.Matcher_REGEXP
	case amlabels.MatchNotRegexp:
		return silencepb.Matcher_NOT_REGEXP
	}
	return silencepb.Matcher_EQUAL
}

// Receivers returns the receivers an alert with the labels ls reaches, in
// route order (a receiver twice when two routes name it): what
// exp_receivers compares, and what `amtool config routes test` prints.
func Receivers(ctx context.Context, conf *notifier.Config, ls model.LabelSet) ([]string, error) {
	a := alert.New(model.Alert{Labels: ls, StartsAt: time.Unix(0, 0)}, time.Unix(0, 0), false)
	o, err := evaluate(ctx, conf, time.Time{}, []*alert.Alert{a}, nil, nil)
	if err != nil {
		return nil, err
	}
	return recvs(o), nil
}
