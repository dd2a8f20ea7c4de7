package web

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/rules"
)

// The alerts an on-call sees: every alert the notifier holds, whatever
// sent it, joined with the pending and firing alerts of paged's own rules
// (values, pending ones the notifier never sees) and the built-in alerts.

// Where an alert came from.
const (
	sourceRule    = "rule"     // one of paged's rules (packs or rule files)
	sourceBuiltin = "built-in" // PagedDatasourceDown and the other built-ins
	sourceAPI     = "api"      // posted to /api/v2/alerts
)

// The states of the alerts page: pending and firing as in Prometheus,
// silenced and inhibited as in Alertmanager (firing, but muted). Stale is
// a flag beside them, and a filter value.
var alertStates = []string{"firing", "pending", "silenced", "inhibited", "stale"}

// heldLister is implemented by notifiers that list the alerts they hold
// (paged's notifier does).
type heldLister interface {
	HeldAlerts(ctx context.Context) []notifier.HeldAlert
}

// viewAlert is one row of the alerts page.
type viewAlert struct {
	Name, Severity, Server string
	State                  string // firing, pending, silenced, inhibited
	Stale                  bool
	Source                 string
	Labels                 labels.Labels // all of them
	Annotations            labels.Labels
	rawAnnotations         model.LabelSet // the notifier's, when Annotations is empty
	ActiveAt               time.Time
	Value                  string // "" when unknown (alerts from elsewhere)
	Receivers              []string
	receiver               string        // of the notification group
	groupLabels            labels.Labels // of the notification group
	GeneratorURL           string
	SilencedBy             []string
	InhibitedBy            []string
	Ack                    *notifier.Acknowledgement // from Slack; nil if none
}

// ackedBy names who acknowledged the alert's group: the Slack user's
// name and id.
func (v *viewAlert) ackedBy() string {
	if v.Ack == nil {
		return ""
	}
	if v.Ack.UserName == "" {
		return v.Ack.UserID
	}
	return v.Ack.UserName + " (" + v.Ack.UserID + ")"
}

// collectAlerts returns every alert, sorted firing first, then by
// severity, name and labels.
func (h *Handler) collectAlerts(ctx context.Context) []*viewAlert {
	ext := h.Config().Global.ExternalLabels
	byKey := map[uint64][]*viewAlert{}
	var out []*viewAlert
	add := func(v *viewAlert) {
		key := v.Labels.Hash()
		byKey[key] = append(byKey[key], v)
		out = append(out, v)
	}
	find := func(ls labels.Labels) *viewAlert {
		for _, v := range byKey[ls.Hash()] {
			if labels.Equal(v.Labels, ls) {
				return v
			}
		}
		return nil
	}
	for _, g := range h.engine().RuleGroups() {
		for _, rule := range g.AlertingRules() {
			for _, a := range h.apiAlerts(ctx, g, rule) {
				v := &viewAlert{
					State:        a.State,
					Stale:        a.Stale,
					Source:       sourceRule,
					Labels:       withExternal(a.Labels, ext),
					Annotations:  a.Annotations,
					Value:        uiValue(a.Value),
					GeneratorURL: h.graphLink(rule),
				}
				if a.ActiveAt != nil {
					v.ActiveAt = *a.ActiveAt
				}
				add(v)
			}
		}
	}
	if b, ok := h.engine().(builtinLister); ok {
		for _, a := range b.BuiltinAlerts() {
			lbls := withExternal(a.Labels, ext)
			if find(lbls) != nil {
				continue
			}
			add(&viewAlert{
				State: "firing", Stale: a.Stale, Source: sourceBuiltin, Labels: lbls,
				Annotations: a.Annotations, ActiveAt: a.StartsAt, GeneratorURL: a.GeneratorURL,
			})
		}
	}
	if hl, ok := h.notifier.(heldLister); ok && h.notifier != nil {
		for _, held := range hl.HeldAlerts(ctx) {
			v := find(held.Labels)
			if v == nil {
				src := sourceAPI
				if strings.HasPrefix(held.Labels.Get(labels.AlertName), "Paged") && held.GeneratorURL == h.Config().Global.ExternalURL.String() {
					src = sourceBuiltin // sent by the engine, since resolved there
				}
				v = &viewAlert{
					State: "firing", Stale: held.Stale, Source: src, Labels: held.Labels,
					rawAnnotations: held.Annotations, ActiveAt: held.StartsAt, GeneratorURL: held.GeneratorURL,
				}
				add(v)
			}
			v.Receivers = held.Receivers
			v.SilencedBy, v.InhibitedBy, v.Ack = held.SilencedBy, held.InhibitedBy, held.Ack
			if v.State != "pending" {
				switch {
				case len(held.SilencedBy) > 0:
					v.State = "silenced"
				case len(held.InhibitedBy) > 0:
					v.State = "inhibited"
				}
			}
			if len(held.Receivers) > 0 {
				v.receiver, v.groupLabels = held.Receivers[0], held.GroupLabels
			}
		}
	}
	for _, v := range out {
		v.Name = v.Labels.Get(labels.AlertName)
		v.Severity = v.Labels.Get("severity")
		v.Server = v.Labels.Get("server")
	}
	slices.SortFunc(out, compareViewAlerts)
	return out
}

// group names the notification group: the receiver and the group labels.
func (v *viewAlert) group() string {
	if v.receiver == "" {
		return ""
	}
	return v.receiver + " " + v.groupLabels.String()
}

// annotation returns an annotation's value.
func (v *viewAlert) annotation(name string) string {
	if v.rawAnnotations != nil {
		return string(v.rawAnnotations[model.LabelName(name)])
	}
	return v.Annotations.Get(name)
}

// withExternal adds the external labels an alert is sent with (its own
// labels win), so that a rule's alert and the notifier's copy match.
func withExternal(ls, ext labels.Labels) labels.Labels {
	if ext.IsEmpty() {
		return ls
	}
	b := labels.NewBuilder(ls)
	ext.Range(func(l labels.Label) {
		if !ls.Has(l.Name) {
			b.Set(l.Name, l.Value)
		}
	})
	return b.Labels()
}

func stateRank(st string) int {
	switch st {
	case "firing":
		return 0
	case "pending":
		return 1
	case "inhibited":
		return 2
	case "silenced":
		return 3
	}
	return 4
}

func severityRank(sev string) int {
	switch sev {
	case "critical":
		return 0
	case "warning":
		return 1
	case "info":
		return 2
	}
	return 3
}

func compareViewAlerts(a, b *viewAlert) int {
	return cmp.Or(
		cmp.Compare(stateRank(a.State), stateRank(b.State)),
		cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)),
		strings.Compare(a.Name, b.Name),
		labels.Compare(a.Labels, b.Labels),
	)
}

// alertFilter is the alerts page's filter, from its query string: state,
// severity and server (each repeatable), and filter, Alertmanager's
// matcher syntax ({a="b",c=~"d.*"} or a="b",c!="d").
type alertFilter struct {
	States, Severities, Servers []string
	Filter                      string
	matchers                    []*amlabels.Matcher
	// Offset and Limit page the list (offset, limit): an on-call reads
	// the first few hundred, sorted worst first; the counts cover all.
	Offset, Limit int
}

// Alerts per page, by default and at most.
const (
	defaultAlertsPerPage = 500
	maxAlertsPerPage     = 5000
)

func parseAlertFilter(q url.Values) (*alertFilter, error) {
	f := &alertFilter{Filter: strings.TrimSpace(q.Get("filter")), Limit: defaultAlertsPerPage}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > maxAlertsPerPage {
			return f, fmt.Errorf("invalid limit %q: want 1 to %d alerts per page", v, maxAlertsPerPage)
		}
		f.Limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, fmt.Errorf("invalid offset %q: want a number of alerts to skip", v)
		}
		f.Offset = n
	}
	for _, v := range q["state"] {
		if v == "" {
			continue
		}
		if !slices.Contains(alertStates, v) {
			return f, fmt.Errorf("invalid state %q: want one of %s", v, strings.Join(alertStates, ", "))
		}
		f.States = append(f.States, v)
	}
	for _, v := range q["severity"] {
		if v != "" {
			f.Severities = append(f.Severities, v)
		}
	}
	for _, v := range q["server"] {
		if v != "" {
			f.Servers = append(f.Servers, v)
		}
	}
	if f.Filter != "" {
		ms, err := amlabels.ParseMatchers(f.Filter)
		if err != nil {
			return f, fmt.Errorf("invalid filter %s: %v", strconv.Quote(f.Filter), err)
		}
		f.matchers = ms
	}
	return f, nil
}

// Active reports whether the filter selects anything less than all.
func (f *alertFilter) Active() bool {
	return len(f.States)+len(f.Severities)+len(f.Servers)+len(f.matchers) > 0
}

// Has reports whether the filter lists value under key (for the form).
func (f *alertFilter) Has(key, value string) bool {
	switch key {
	case "state":
		return slices.Contains(f.States, value)
	case "severity":
		return slices.Contains(f.Severities, value)
	case "server":
		return slices.Contains(f.Servers, value)
	}
	return false
}

func (f *alertFilter) match(v *viewAlert) bool {
	if len(f.States) > 0 && !slices.Contains(f.States, v.State) && !(v.Stale && slices.Contains(f.States, "stale")) {
		return false
	}
	if len(f.Severities) > 0 && !slices.Contains(f.Severities, v.Severity) {
		return false
	}
	if len(f.Servers) > 0 && !slices.Contains(f.Servers, v.Server) {
		return false
	}
	for _, m := range f.matchers {
		if !m.Matches(v.Labels.Get(m.Name)) {
			return false
		}
	}
	return true
}

// setPages links the previous and next pages of the list, keeping the
// filter.
func (d *uiData) setPages(q url.Values) {
	f := d.Filter
	link := func(offset int) string {
		q := maps.Clone(q)
		q.Set("offset", strconv.Itoa(offset))
		return "?" + q.Encode()
	}
	if f.Offset > 0 {
		d.PrevHref = link(max(0, f.Offset-f.Limit))
	}
	if f.Offset+f.Limit < d.Matching {
		d.NextHref = link(f.Offset + f.Limit)
	}
}

// graphLink is the link to a rule's graph: paged's own /graph, relative
// to the page (it works in both modes, against the datasource in use).
func (h *Handler) graphLink(rule *promrules.AlertingRule) string {
	return "graph?g0.expr=" + url.QueryEscape(rule.Query().String()) + "&g0.rule=" + url.QueryEscape(rule.Name())
}

// builtinAPIAlerts are the built-in alerts in /api/v1/alerts' shape.
func (h *Handler) builtinAPIAlerts() []*apiAlert {
	b, ok := h.engine().(builtinLister)
	if !ok {
		return nil
	}
	var out []*apiAlert
	for _, a := range b.BuiltinAlerts() {
		out = append(out, builtinAPIAlert(a))
	}
	return out
}

func builtinAPIAlert(a *rules.Alert) *apiAlert {
	at := a.StartsAt
	return &apiAlert{
		Labels: a.Labels, Annotations: a.Annotations, State: "firing",
		ActiveAt: &at, Value: "1e+00", Stale: a.Stale,
	}
}
