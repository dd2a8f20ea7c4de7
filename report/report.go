package report

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pagedhq/paged/history"
)

// Defaults of Options.
const (
	DefaultFlappingThreshold = 3
	DefaultTop               = 10
	DefaultDedupWindow       = time.Minute
)

// Source is where the events come from: a *history.Store, or a client
// of a running paged's GET /api/v1/history.
type Source interface {
	Query(ctx context.Context, q history.Query) (history.Page, error)
}

// Scanner is a Source that reads a whole span at once (a
// *history.Store): Build uses it when a source has it. It reads what the
// store keeps for the report (the alerts' firings counted from an index,
// a history.Notice per notification and acknowledgement) instead of
// every event, and gives the same numbers.
type Scanner interface {
	CountTransitions(ctx context.Context, start, end time.Time) ([]history.Transitions, error)
	Notices(ctx context.Context, start, end time.Time, fn func(*history.Notice) error) error
}

// Options say what to count. Build validates them and fills the
// defaults.
type Options struct {
	// From and To bound the events (both required, From before To).
	From, To time.Time
	// Location of the working hours; default UTC.
	Location *time.Location
	// WorkStart and WorkEnd are the working hours as offsets from
	// midnight; both zero: 09:00 to 18:00.
	WorkStart, WorkEnd time.Duration
	// WorkingDays by time.Weekday; none set: Monday to Friday.
	WorkingDays [7]bool
	// FlappingThreshold: an alert that fired and resolved more than this
	// many times is flapping. Default 3.
	FlappingThreshold int
	// Top is the length of the noisiest list. Default 10.
	Top int
	// DedupWindow: the same page (group, receiver, firing alerts)
	// delivered by another integration or another source within it is
	// counted once. Default 1m.
	DedupWindow time.Duration
}

func (o *Options) validate() error {
	var errs []error
	if o.From.IsZero() || o.To.IsZero() {
		errs = append(errs, errors.New("report: from and to are required"))
	} else if !o.From.Before(o.To) {
		errs = append(errs, fmt.Errorf("report: from (%s) must be before to (%s)", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339)))
	}
	if o.WorkStart < 0 || o.WorkEnd > 24*time.Hour || o.WorkStart > o.WorkEnd {
		errs = append(errs, fmt.Errorf("report: working hours %v to %v are not within a day, start first", o.WorkStart, o.WorkEnd))
	}
	if o.FlappingThreshold < 0 || o.Top < 0 || o.DedupWindow < 0 {
		errs = append(errs, errors.New("report: flapping threshold, top and dedup window must not be negative"))
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.WorkStart == 0 && o.WorkEnd == 0 {
		o.WorkStart, o.WorkEnd = 9*time.Hour, 18*time.Hour
	}
	if o.WorkingDays == ([7]bool{}) {
		for d := time.Monday; d <= time.Friday; d++ {
			o.WorkingDays[d] = true
		}
	}
	if o.FlappingThreshold == 0 {
		o.FlappingThreshold = DefaultFlappingThreshold
	}
	if o.Top == 0 {
		o.Top = DefaultTop
	}
	if o.DedupWindow == 0 {
		o.DedupWindow = DefaultDedupWindow
	}
}

// inWorkingHours tells whether t falls in the working hours.
func (o *Options) inWorkingHours(t time.Time) bool {
	l := t.In(o.Location)
	if !o.WorkingDays[l.Weekday()] {
		return false
	}
	midnight := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, o.Location)
	off := l.Sub(midnight)
	return off >= o.WorkStart && off < o.WorkEnd
}

// Report is what Build found. Durations are in seconds in JSON.
type Report struct {
	From         time.Time `json:"from"`
	To           time.Time `json:"to"`
	TimeZone     string    `json:"time_zone"`
	WorkingHours string    `json:"working_hours"`
	WorkingDays  []string  `json:"working_days"`
	// Events is the number of events counted: the alerts' firings and
	// resolutions, notifications, acknowledgements and silences.
	Events int `json:"events"`
	// Pages is the number of pages (each counted once).
	Pages int `json:"pages"`
	// PagesOutsideHours is the number of pages outside working hours.
	PagesOutsideHours int `json:"pages_outside_working_hours"`
	// Alerts are the alert names with pages, firings or flapping, the
	// noisiest (most pages) first.
	Alerts []AlertStats `json:"alerts"`
	// Noisiest is the first Top of Alerts with pages.
	Noisiest []AlertStats `json:"noisiest"`
	// Receivers are the receivers with pages or failures, most pages
	// first.
	Receivers []ReceiverStats `json:"receivers"`
	// Flapping are the alerts (label sets) that fired and resolved more
	// than FlappingThreshold times, most first.
	Flapping          []Flap `json:"flapping"`
	FlappingThreshold int    `json:"flapping_threshold"`
	// Acknowledgement is how pages were acknowledged.
	Acknowledgement AckStats `json:"acknowledgement"`
	// Silences are the silences created, by who, most first.
	Silences []SilenceStats `json:"silences"`
	// Failures are the failed deliveries by receiver and integration,
	// most first.
	Failures []FailureStats `json:"failures"`
}

// AlertStats are the numbers of one alert name.
type AlertStats struct {
	Alertname         string `json:"alertname"`
	Pages             int    `json:"pages"`
	PagesOutsideHours int    `json:"pages_outside_working_hours"`
	Acknowledged      int    `json:"pages_acknowledged"`
	Fired             int    `json:"fired"`
	Resolved          int    `json:"resolved"`
	// Flapping is the number of its label sets that flapped.
	Flapping int `json:"flapping"`
}

// ReceiverStats are the numbers of one receiver.
type ReceiverStats struct {
	Receiver          string `json:"receiver"`
	Pages             int    `json:"pages"`
	PagesOutsideHours int    `json:"pages_outside_working_hours"`
	Failures          int    `json:"failures"`
}

// Flap is an alert that fired and resolved again and again.
type Flap struct {
	Alertname   string            `json:"alertname"`
	Fingerprint string            `json:"fingerprint"`
	Labels      map[string]string `json:"labels"`
	Fired       int               `json:"fired"`
	Resolved    int               `json:"resolved"`
}

// AckStats are the acknowledgements of the pages.
type AckStats struct {
	Pages        int `json:"pages"`
	Acknowledged int `json:"acknowledged"`
	// Never is the number of pages no acknowledgement followed before
	// their group resolved (or the report ends).
	Never  int      `json:"never_acknowledged"`
	Median Duration `json:"median"`
	P90    Duration `json:"p90"`
	// NeverAlerts are the alert names paged and never acknowledged.
	NeverAlerts []string `json:"alerts_never_acknowledged"`
}

// SilenceStats are the silences one person created.
type SilenceStats struct {
	User    string   `json:"user"`
	Created int      `json:"created"`
	Total   Duration `json:"total"`
	Longest Duration `json:"longest"`
	Expired int      `json:"expired_early"`
}

// FailureStats are the failed deliveries of one integration of a
// receiver.
type FailureStats struct {
	Receiver    string    `json:"receiver"`
	Integration string    `json:"integration"`
	Failures    int       `json:"failures"`
	Last        time.Time `json:"last"`
	LastError   string    `json:"last_error"`
}

// Duration is a time.Duration written as seconds in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).Seconds())
}

func (d Duration) String() string {
	if d == 0 {
		return "-"
	}
	return time.Duration(d).Round(time.Second).String()
}

// Build reads the events of the sources between opts.From and opts.To
// and counts them. Several sources are the members of an HA pair: a
// page both recorded counts once.
func Build(ctx context.Context, opts Options, sources ...Source) (*Report, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	b := newBuilder(opts)
	for i, src := range sources {
		b.source = i
		if err := b.read(ctx, src); err != nil {
			return nil, fmt.Errorf("report: reading the history: %w", err)
		}
	}
	r := b.report()
	// The labels of the flapping alerts, from one of their events.
	for i := range r.Flapping {
		f := &r.Flapping[i]
		for _, src := range sources {
			if f.Labels != nil {
				break
			}
			p, err := src.Query(ctx, history.Query{Fingerprint: f.Fingerprint, Types: []string{history.TypeFiring}, Start: opts.From, End: opts.To, Limit: 1})
			if err != nil {
				return nil, fmt.Errorf("report: reading the history: %w", err)
			}
			if len(p.Events) > 0 {
				f.Labels = p.Events[0].Labels
			}
		}
	}
	return r, nil
}

// read counts the events of one source.
func (b *builder) read(ctx context.Context, src Source) error {
	o := b.opts
	q := history.Query{Start: o.From, End: o.To, Limit: history.MaxLimit, NoLabels: true}
	if sc, ok := src.(Scanner); ok {
		ts, err := sc.CountTransitions(ctx, o.From, o.To)
		if err != nil {
			return err
		}
		for _, t := range ts {
			b.addTransitions(t)
		}
		if err := sc.Notices(ctx, o.From, o.To, func(n *history.Notice) error { b.addNotice(n); return nil }); err != nil {
			return err
		}
		// Only the silences are read as events: they are few.
		q.Types = []string{history.TypeSilence}
	}
	// From a source without a store, every event of the span, in time
	// order: the types the report counts are most of them.
	for {
		p, err := src.Query(ctx, q)
		if err != nil {
			return err
		}
		for i := range p.Events {
			b.add(&p.Events[i])
		}
		if p.Next == "" {
			return nil
		}
		q.Cursor = p.Next
	}
}

// page is one delivery of a firing notification.
type page struct {
	at       time.Time
	id       int64 // the event's, in its source
	key      pageKey
	delivery delivery
	group    string
	receiver string
	alerts   []string // the alert names of its firing alerts, each once
}

// pageKey is what makes deliveries the same page.
type pageKey struct {
	group, receiver string
	alerts          uint64 // history.Notice.Alerts
}

// delivery is who delivered a page: a source and its integration.
type delivery struct {
	source      int
	integration string
}

type ack struct {
	at    time.Time
	group string
}

type fpStats struct {
	alertname      string
	labels         map[string]string
	fired, resolve int
}

type silence struct {
	user         string
	start, end   time.Time
	expiredEarly bool
}

type builder struct {
	opts       Options
	source     int // index of the source being read
	events     int
	pages      []page
	acks       []ack
	resolvedAt map[string][]time.Time // group: notifications with no firing alert
	alerts     map[string]*fpStats    // fingerprint
	silences   map[string]*silence    // silence id
	failures   map[[2]string]*FailureStats
}

func newBuilder(opts Options) *builder {
	return &builder{opts: opts, resolvedAt: map[string][]time.Time{}, alerts: map[string]*fpStats{},
		silences: map[string]*silence{}, failures: map[[2]string]*FailureStats{}}
}

// silenceDetails is Alertmanager's event recorder's silence event.
type silenceDetails struct {
	Created *struct {
		Silence silenceDetail `json:"silence"`
	} `json:"silenceCreated"`
	Updated *struct {
		Silence silenceDetail `json:"silence"`
	} `json:"silenceUpdated"`
}

type silenceDetail struct {
	ID        string    `json:"id"`
	StartsAt  time.Time `json:"startsAt"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
}

// add counts an event read as such: the firings and resolutions of
// alerts, notifications, acknowledgements and silences, as the store
// counts them.
func (b *builder) add(e *history.Event) {
	switch e.Type {
	case history.TypeFiring, history.TypeResolved:
		t := history.Transitions{Fingerprint: e.Fingerprint, Alertname: e.Alertname, Labels: e.Labels}
		if e.Type == history.TypeFiring {
			t.Fired = 1
		} else {
			t.Resolved = 1
		}
		b.addTransitions(t)
	case history.TypeNotification, history.TypeAck:
		if n, ok := history.NoticeOf(e); ok {
			b.addNotice(&n)
		}
	case history.TypeSilence:
		b.events++
		b.addSilence(e)
	}
}

// addTransitions counts an alert's firings and resolutions.
func (b *builder) addTransitions(t history.Transitions) {
	if t.Fingerprint == "" {
		return
	}
	s := b.alerts[t.Fingerprint]
	if s == nil {
		s = &fpStats{alertname: t.Alertname}
		b.alerts[t.Fingerprint] = s
	}
	if s.labels == nil {
		s.labels = t.Labels
	}
	s.fired += t.Fired
	s.resolve += t.Resolved
	b.events += t.Fired + t.Resolved
}

// addNotice counts a notification or an acknowledgement.
func (b *builder) addNotice(n *history.Notice) {
	b.events++
	switch n.Kind {
	case history.NoticeFailed:
		k := [2]string{n.Receiver, n.Integration}
		f := b.failures[k]
		if f == nil {
			f = &FailureStats{Receiver: n.Receiver, Integration: n.Integration}
			b.failures[k] = f
		}
		f.Failures++
		if !n.Time.Before(f.Last) {
			f.Last, f.LastError = n.Time, n.Error
		}
	case history.NoticeResolved:
		b.resolvedAt[n.GroupKey] = append(b.resolvedAt[n.GroupKey], n.Time)
	case history.NoticeAck:
		b.acks = append(b.acks, ack{at: n.Time, group: n.GroupKey})
	case history.NoticePage:
		b.pages = append(b.pages, page{at: n.Time, id: n.ID, group: n.GroupKey, receiver: n.Receiver, alerts: n.Alertnames,
			key:      pageKey{group: n.GroupKey, receiver: n.Receiver, alerts: n.Alerts},
			delivery: delivery{source: b.source, integration: n.Integration}})
	}
}

func (b *builder) addSilence(e *history.Event) {
	var d silenceDetails
	if json.Unmarshal(e.Details, &d) != nil {
		return
	}
	switch {
	case e.Outcome == history.OutcomeCreated && d.Created != nil:
		s := d.Created.Silence
		user := cmp.Or(e.User, s.CreatedBy, "(unknown)")
		b.silences[s.ID] = &silence{user: user, start: s.StartsAt, end: s.EndsAt}
	case e.Outcome == history.OutcomeExpired && d.Updated != nil:
		if s := b.silences[d.Updated.Silence.ID]; s != nil {
			s.expiredEarly = true
			s.end = d.Updated.Silence.EndsAt
		}
	case e.Outcome == history.OutcomeUpdated && d.Updated != nil:
		if s := b.silences[d.Updated.Silence.ID]; s != nil {
			s.end = d.Updated.Silence.EndsAt
		}
	}
}

func (b *builder) report() *Report {
	o := b.opts
	r := &Report{
		From: o.From.UTC(), To: o.To.UTC(), TimeZone: o.Location.String(),
		WorkingHours:      fmt.Sprintf("%s-%s", clock(o.WorkStart), clock(o.WorkEnd)),
		Events:            b.events,
		FlappingThreshold: o.FlappingThreshold,
	}
	for d, on := range o.WorkingDays {
		if on {
			r.WorkingDays = append(r.WorkingDays, strings.ToLower(time.Weekday(d).String()[:3]))
		}
	}
	// Pages, each once: a delivery of the same alerts of a group to the
	// same receiver by another integration or another member within the
	// window is the same page; the same integration of the same member
	// delivering it again is a new one (the group fired again, or repeated).
	// In the order they were delivered: by time, then source and id.
	slices.SortFunc(b.pages, func(x, y page) int {
		return cmp.Or(x.at.Compare(y.at), cmp.Compare(x.delivery.source, y.delivery.source), cmp.Compare(x.id, y.id))
	})
	type current struct {
		at         time.Time
		deliveries []delivery // few: the integrations of a receiver, on each member
	}
	last := map[pageKey]*current{}
	pages := b.pages[:0]
	for _, p := range b.pages {
		c := last[p.key]
		if c != nil && p.at.Sub(c.at) <= o.DedupWindow && !slices.Contains(c.deliveries, p.delivery) {
			c.deliveries = append(c.deliveries, p.delivery)
			continue
		}
		if c == nil {
			c = &current{}
			last[p.key] = c
		}
		c.at, c.deliveries = p.at, append(c.deliveries[:0], p.delivery)
		pages = append(pages, p)
	}
	alerts := map[string]*AlertStats{}
	alert := func(name string) *AlertStats {
		a := alerts[name]
		if a == nil {
			a = &AlertStats{Alertname: name}
			alerts[name] = a
		}
		return a
	}
	receivers := map[string]*ReceiverStats{}
	receiver := func(name string) *ReceiverStats {
		rs := receivers[name]
		if rs == nil {
			rs = &ReceiverStats{Receiver: name}
			receivers[name] = rs
		}
		return rs
	}
	// Acknowledgements: a page is acknowledged by its group's first
	// acknowledgement after it, unless the group resolved in between.
	acks := map[string][]time.Time{}
	for _, a := range b.acks {
		acks[a.group] = append(acks[a.group], a.at)
	}
	for g := range acks {
		slices.SortFunc(acks[g], time.Time.Compare)
	}
	for g := range b.resolvedAt {
		slices.SortFunc(b.resolvedAt[g], time.Time.Compare)
	}
	var waits []time.Duration
	never := map[string]bool{}
	for _, p := range pages {
		r.Pages++
		outside := !o.inWorkingHours(p.at)
		rs := receiver(p.receiver)
		rs.Pages++
		if outside {
			r.PagesOutsideHours++
			rs.PagesOutsideHours++
		}
		wait, acked := ackAfter(p.at, acks[p.group], b.resolvedAt[p.group])
		if acked {
			waits = append(waits, wait)
		} else {
			r.Acknowledgement.Never++
		}
		for _, name := range p.alerts {
			a := alert(name)
			a.Pages++
			if outside {
				a.PagesOutsideHours++
			}
			if acked {
				a.Acknowledged++
			}
		}
	}
	r.Acknowledgement.Pages = r.Pages
	r.Acknowledgement.Acknowledged = len(waits)
	slices.Sort(waits)
	if len(waits) > 0 {
		r.Acknowledgement.Median = Duration(quantile(waits, 0.5))
		r.Acknowledgement.P90 = Duration(quantile(waits, 0.9))
	}
	// Firings and flapping.
	for fp, s := range b.alerts {
		a := alert(s.alertname)
		a.Fired += s.fired
		a.Resolved += s.resolve
		if min(s.fired, s.resolve) > o.FlappingThreshold {
			a.Flapping++
			r.Flapping = append(r.Flapping, Flap{Alertname: s.alertname, Fingerprint: fp, Labels: s.labels, Fired: s.fired, Resolved: s.resolve})
		}
	}
	slices.SortFunc(r.Flapping, func(x, y Flap) int {
		return cmp.Or(cmp.Compare(min(y.Fired, y.Resolved), min(x.Fired, x.Resolved)), cmp.Compare(x.Alertname, y.Alertname), cmp.Compare(x.Fingerprint, y.Fingerprint))
	})
	for _, a := range alerts {
		r.Alerts = append(r.Alerts, *a)
		if a.Pages > 0 && a.Acknowledged == 0 {
			never[a.Alertname] = true
		}
	}
	slices.SortFunc(r.Alerts, func(x, y AlertStats) int {
		return cmp.Or(cmp.Compare(y.Pages, x.Pages), cmp.Compare(y.Fired, x.Fired), cmp.Compare(x.Alertname, y.Alertname))
	})
	for _, a := range r.Alerts {
		if a.Pages > 0 && len(r.Noisiest) < o.Top {
			r.Noisiest = append(r.Noisiest, a)
		}
	}
	for name := range never {
		r.Acknowledgement.NeverAlerts = append(r.Acknowledgement.NeverAlerts, name)
	}
	sort.Strings(r.Acknowledgement.NeverAlerts)
	// Failures.
	for _, f := range b.failures {
		r.Failures = append(r.Failures, *f)
		receiver(f.Receiver).Failures += f.Failures
	}
	slices.SortFunc(r.Failures, func(x, y FailureStats) int {
		return cmp.Or(cmp.Compare(y.Failures, x.Failures), cmp.Compare(x.Receiver, y.Receiver), cmp.Compare(x.Integration, y.Integration))
	})
	for _, rs := range receivers {
		r.Receivers = append(r.Receivers, *rs)
	}
	slices.SortFunc(r.Receivers, func(x, y ReceiverStats) int {
		return cmp.Or(cmp.Compare(y.Pages, x.Pages), cmp.Compare(y.Failures, x.Failures), cmp.Compare(x.Receiver, y.Receiver))
	})
	// Silences by who.
	users := map[string]*SilenceStats{}
	for _, s := range b.silences {
		u := users[s.user]
		if u == nil {
			u = &SilenceStats{User: s.user}
			users[s.user] = u
		}
		u.Created++
		d := Duration(max(s.end.Sub(s.start), 0))
		u.Total += d
		u.Longest = max(u.Longest, d)
		if s.expiredEarly {
			u.Expired++
		}
	}
	for _, u := range users {
		r.Silences = append(r.Silences, *u)
	}
	slices.SortFunc(r.Silences, func(x, y SilenceStats) int {
		return cmp.Or(cmp.Compare(y.Created, x.Created), cmp.Compare(y.Total, x.Total), cmp.Compare(x.User, y.User))
	})
	return r
}

// ackAfter finds the first acknowledgement at or after t, unless the
// group resolved between t and it.
func ackAfter(t time.Time, acks, resolved []time.Time) (time.Duration, bool) {
	i, _ := slices.BinarySearchFunc(acks, t, time.Time.Compare)
	if i == len(acks) {
		return 0, false
	}
	a := acks[i]
	j, _ := slices.BinarySearchFunc(resolved, t, time.Time.Compare)
	if j < len(resolved) && resolved[j].After(t) && resolved[j].Before(a) {
		return 0, false
	}
	return a.Sub(t), true
}

// quantile of sorted durations, nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(float64(len(sorted))*q+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func clock(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
