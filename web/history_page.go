package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/history"
)

// /history is the timeline of one alert (alertname, and fingerprint for
// one label set) or of one notification group (group, its key): the
// alerts' states as bands over time, every notification with its
// receiver and outcome, acknowledgements and silences with who, and the
// events in a table below. The alerts page, /graph and the Slack message
// link to it.

const (
	historyPageDefaultRange = 24 * time.Hour
	// historyPageMinPad is the least time the default timeline shows
	// before its first event.
	historyPageMinPad    = 5 * time.Minute
	historyPageMaxRange  = 32 * 24 * time.Hour
	historyPageMaxGroups = 20 // groups whose acknowledgements an alert's timeline reads
)

var fingerprintRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// historyPageRequest is /history's query, checked.
type historyPageRequest struct {
	Alertname, Fingerprint, Group string
	RangeInput, EndInput          string
	From, To                      time.Time
}

func (h *Handler) parseHistoryPageRequest(q url.Values, now time.Time) (*historyPageRequest, error) {
	r := &historyPageRequest{Alertname: q.Get("alertname"), Fingerprint: q.Get("fingerprint"), Group: q.Get("group"),
		RangeInput: q.Get("range"), EndInput: q.Get("end")}
	for k, vs := range q {
		switch k {
		case "alertname", "fingerprint", "group", "range", "end":
			if len(vs) > 1 {
				return r, fmt.Errorf("%s is given %d times: give it once", k, len(vs))
			}
		default:
			return r, fmt.Errorf("unknown parameter %q (known: alertname, fingerprint, group, range, end)", clip(k))
		}
	}
	web := h.Config().Web
	switch {
	case r.Alertname == "" && r.Group == "":
		return r, errors.New("give an alertname (and a fingerprint for one of its alerts), or a group")
	case r.Alertname != "" && r.Group != "":
		return r, errors.New("give an alertname or a group, not both")
	}
	if r.Alertname != "" {
		if msg := checkLabel(labels.AlertName, r.Alertname, web); msg != "" {
			return r, fmt.Errorf("invalid alertname: %s", msg)
		}
	}
	if r.Fingerprint != "" && !fingerprintRE.MatchString(r.Fingerprint) {
		return r, fmt.Errorf("invalid fingerprint %s: 16 lowercase hex digits, as the history writes them", clip(r.Fingerprint))
	}
	if r.Group != "" && int64(len(r.Group)) > web.MaxLabelValueBytes {
		return r, fmt.Errorf("group key of %d bytes is longer than web.max_label_value_bytes (%d)", len(r.Group), web.MaxLabelValueBytes)
	}
	span := historyPageDefaultRange
	if r.RangeInput != "" {
		d, err := model.ParseDuration(r.RangeInput)
		if err != nil || d <= 0 || time.Duration(d) > historyPageMaxRange {
			return r, fmt.Errorf("invalid range %s: a duration such as 1h, 1d or 7d, at most 32d", clip(r.RangeInput))
		}
		span = time.Duration(d)
	}
	r.To = now
	if r.EndInput != "" {
		t, err := parseAPITime(r.EndInput)
		if err != nil {
			return r, fmt.Errorf("invalid end: %w", err)
		}
		r.To = t
	}
	r.From = r.To.Add(-span)
	return r, nil
}

// historyView is what the page shows.
type historyView struct {
	Req    *historyPageRequest
	Error  string
	Title  string
	Ranges []string
	From   time.Time
	To     time.Time
	Ticks  []historyTick
	Rows   []historyRow
	Marks  []historyMark
	Events []historyEventRow
	Groups []historyGroupLink
	// Truncated: more events than one query returns.
	Truncated bool
}

type historyTick struct {
	Style template.CSS
	Label string
}

// historyRow is one alert (label set) with its state bands.
type historyRow struct {
	Fingerprint string
	Labels      string
	Bands       []historyBand
}

type historyBand struct {
	State string // pending, firing, stale
	Style template.CSS
	Title string
}

// historyMark is a notification, an acknowledgement or a silence on the
// time axis.
type historyMark struct {
	Kind    string // notification, ack, silence
	Outcome string
	Style   template.CSS
	Title   string
}

type historyEventRow struct {
	Time                            time.Time
	Type, Outcome, Receiver, User   string
	Labels, Detail, GroupHref, Kind string
}

type historyGroupLink struct {
	Key, Href string
}

var stateTypes = []string{history.TypePending, history.TypeFiring, history.TypeResolved, history.TypeInactive, history.TypeStale, history.TypeFresh}

func (h *Handler) handleHistoryPage(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	req, err := h.parseHistoryPageRequest(r.URL.Query(), now)
	v := historyView{Req: req, Ranges: []string{"1h", "6h", "1d", "7d", "30d"}}
	code := http.StatusOK
	switch {
	case err != nil:
		v.Error, code = err.Error(), http.StatusBadRequest
	case h.opts.History == nil:
		v.Error, code = "there is no event history: it is turned off (storage.history.enabled: false), or it could not be opened at start (paged's log says why)", http.StatusServiceUnavailable
	default:
		if err := h.historyTimeline(r.Context(), req, &v); err != nil {
			h.logger.Error("history query failed", "err", err)
			v.Error, code = "the history could not be read; paged's log says why", http.StatusInternalServerError
		}
	}
	h.writePage(w, historyPage, v, code)
}

// historyTimeline reads the events of the request and lays them out.
func (h *Handler) historyTimeline(ctx context.Context, req *historyPageRequest, v *historyView) error {
	v.From, v.To = req.From, req.To
	var evs []history.Event
	query := func(q history.Query) error {
		q.Start, q.End, q.Limit = req.From, req.To, history.MaxLimit
		p, err := h.opts.History.Query(ctx, q)
		if err != nil {
			return err
		}
		v.Truncated = v.Truncated || p.Next != ""
		evs = append(evs, p.Events...)
		return nil
	}
	groups := map[string]bool{}
	if req.Alertname != "" {
		v.Title = req.Alertname
		if err := query(history.Query{Alertname: req.Alertname}); err != nil {
			return err
		}
		if req.Fingerprint != "" {
			evs = slices.DeleteFunc(evs, func(e history.Event) bool { return !concerns(e, req.Fingerprint) })
		}
		for _, e := range evs {
			if e.Type == history.TypeNotification && e.GroupKey != "" && len(groups) < historyPageMaxGroups {
				groups[e.GroupKey] = true
			}
		}
		for _, g := range sortedKeys(groups) {
			if err := query(history.Query{GroupKey: g, Types: []string{history.TypeAck}}); err != nil {
				return err
			}
		}
	} else {
		v.Title = "group " + req.Group
		groups[req.Group] = true
		if err := query(history.Query{GroupKey: req.Group}); err != nil {
			return err
		}
		// The states of the alerts its notifications carried.
		fps, names := map[string]bool{}, map[string]bool{}
		for _, e := range evs {
			for _, a := range notificationAlerts(e) {
				fps[a.Fingerprint], names[a.Alertname] = true, true
			}
		}
		for i, name := range sortedKeys(names) {
			if i == historyPageMaxGroups {
				break
			}
			n := len(evs)
			if err := query(history.Query{Alertname: name, Types: append(slices.Clone(stateTypes), history.TypeSilence)}); err != nil {
				return err
			}
			evs = append(evs[:n], slices.DeleteFunc(evs[n:], func(e history.Event) bool {
				return e.Type != history.TypeSilence && !fps[e.Fingerprint]
			})...)
		}
	}
	slices.SortStableFunc(evs, func(a, b history.Event) int { return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.ID, b.ID)) })
	evs = slices.CompactFunc(evs, func(a, b history.Event) bool { return a.ID == b.ID && a.ID != 0 })
	if req.RangeInput == "" && req.EndInput == "" && len(evs) > 0 {
		// No range asked for: the timeline starts a little before the
		// first event of the default day, so that an alert of the last
		// minutes is drawn as bands, not as a line at the right edge.
		first := evs[0].Time
		if from := first.Add(-max(historyPageMinPad, req.To.Sub(first)/10)); from.After(req.From) {
			req.From, v.From = from, from
		}
	}
	for g := range groups {
		v.Groups = append(v.Groups, historyGroupLink{Key: g, Href: "history?group=" + url.QueryEscape(g) + rangeParams(req)})
	}
	sort.Slice(v.Groups, func(i, j int) bool { return v.Groups[i].Key < v.Groups[j].Key })
	layoutTimeline(evs, req, v)
	return nil
}

// historyLink is the relative link to an alert's timeline: its name and
// the fingerprint the history gives it (with the external labels it
// lacks, as the engine records them).
func historyLink(name string, ls, external labels.Labels) string {
	m := ls.Map()
	external.Range(func(l labels.Label) {
		if _, ok := m[l.Name]; !ok {
			m[l.Name] = l.Value
		}
	})
	return "history?alertname=" + url.QueryEscape(name) + "&fingerprint=" + history.Fingerprint(m)
}

func rangeParams(req *historyPageRequest) string {
	s := ""
	if req.RangeInput != "" {
		s += "&range=" + url.QueryEscape(req.RangeInput)
	}
	if req.EndInput != "" {
		s += "&end=" + url.QueryEscape(req.EndInput)
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type notifiedAlert struct {
	Fingerprint string `json:"fingerprint"`
	Alertname   string `json:"alertname"`
	Status      string `json:"status"`
}

// notificationAlerts are the alerts a notification event lists.
func notificationAlerts(e history.Event) []notifiedAlert {
	if e.Type != history.TypeNotification || len(e.Details) == 0 {
		return nil
	}
	var d struct {
		Alerts []notifiedAlert `json:"alerts"`
	}
	_ = json.Unmarshal(e.Details, &d)
	return d.Alerts
}

// concerns tells whether an event of the alert name concerns the alert
// with fingerprint fp: its own state changes, the notifications that
// carried it, and what is about no one alert (silences).
func concerns(e history.Event, fp string) bool {
	switch e.Type {
	case history.TypeNotification:
		if e.Fingerprint == fp {
			return true
		}
		as := notificationAlerts(e)
		return len(as) == 0 || slices.ContainsFunc(as, func(a notifiedAlert) bool { return a.Fingerprint == fp })
	case history.TypeSilence, history.TypeAck:
		return true
	default:
		return e.Fingerprint == fp
	}
}

// layoutTimeline turns the events into bands, marks and table rows.
func layoutTimeline(evs []history.Event, req *historyPageRequest, v *historyView) {
	span := req.To.Sub(req.From)
	pos := func(t time.Time) float64 {
		f := float64(t.Sub(req.From)) / float64(span) * 100
		return min(max(f, 0), 100)
	}
	for i := 0; i <= 4; i++ {
		t := req.From.Add(span * time.Duration(i) / 4)
		style := fmt.Sprintf("left:%.2f%%", pos(t))
		if i == 4 {
			style += ";transform:translateX(-100%)" // the last label ends at the edge, not past it
		}
		v.Ticks = append(v.Ticks, historyTick{Style: template.CSS(style), Label: t.UTC().Format("01-02 15:04")})
	}
	type open struct {
		state string
		since time.Time
	}
	rows := map[string]*historyRow{}
	cur := map[string]*open{}
	var order []string
	band := func(fp string, state string, from, to time.Time) {
		if !to.After(from) {
			to = from.Add(span / 1000) // an instant still shows
		}
		l, r := pos(from), pos(to)
		rows[fp].Bands = append(rows[fp].Bands, historyBand{State: state,
			Style: template.CSS(fmt.Sprintf("left:%.3f%%;width:%.3f%%", l, max(r-l, 0.2))),
			Title: fmt.Sprintf("%s from %s to %s", state, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))})
	}
	for _, e := range evs {
		row := historyEventRow{Time: e.Time, Type: e.Type, Outcome: e.Outcome, User: e.User, Kind: e.Type,
			Receiver: strings.Trim(e.Receiver+"/"+e.Integration, "/"), Labels: labelString(e.Labels)}
		switch e.Type {
		case history.TypePending, history.TypeFiring, history.TypeResolved, history.TypeInactive, history.TypeStale, history.TypeFresh:
			fp := e.Fingerprint
			if rows[fp] == nil {
				rows[fp] = &historyRow{Fingerprint: fp, Labels: labelString(e.Labels)}
				order = append(order, fp)
			}
			o := cur[fp]
			next := ""
			switch e.Type {
			case history.TypePending, history.TypeFiring:
				next = e.Type
			case history.TypeStale:
				next = "stale"
			case history.TypeFresh:
				next = history.TypeFiring
			}
			if o != nil && o.state != "" {
				band(fp, o.state, o.since, e.Time)
			}
			cur[fp] = &open{state: next, since: e.Time}
			row.Detail = detailText(e)
		case history.TypeNotification:
			row.Detail = detailText(e)
			if e.GroupKey != "" {
				row.GroupHref = "history?group=" + url.QueryEscape(e.GroupKey) + rangeParams(req)
			}
			v.Marks = append(v.Marks, historyMark{Kind: "notification", Outcome: e.Outcome,
				Style: template.CSS(fmt.Sprintf("left:%.3f%%", pos(e.Time))),
				Title: fmt.Sprintf("%s: notification to %s %s (%s)", e.Time.UTC().Format(time.RFC3339), row.Receiver, e.Outcome, row.Detail)})
		case history.TypeAck, history.TypeSilence:
			row.Detail = detailText(e)
			v.Marks = append(v.Marks, historyMark{Kind: e.Type, Outcome: e.Outcome,
				Style: template.CSS(fmt.Sprintf("left:%.3f%%", pos(e.Time))),
				Title: fmt.Sprintf("%s: %s %s by %s", e.Time.UTC().Format(time.RFC3339), e.Type, e.Outcome, cmp.Or(e.User, "unknown"))})
		default:
			row.Detail = detailText(e)
		}
		v.Events = append(v.Events, row)
	}
	for _, fp := range order {
		if o := cur[fp]; o != nil && o.state != "" {
			band(fp, o.state, o.since, req.To)
		}
		v.Rows = append(v.Rows, *rows[fp])
	}
}

func labelString(ls map[string]string) string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		if k != labels.AlertName {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, ls[k])
	}
	return strings.Join(parts, ", ")
}

// detailText is the short text of an event's details for the table.
func detailText(e history.Event) string {
	if len(e.Details) == 0 {
		return ""
	}
	var d map[string]any
	if json.Unmarshal(e.Details, &d) != nil {
		return ""
	}
	switch e.Type {
	case history.TypeNotification:
		var parts []string
		parts = append(parts, fmt.Sprintf("%v firing, %v resolved", d["firing"], d["resolved"]))
		if ts, ok := d["slack_ts"].(string); ok {
			parts = append(parts, fmt.Sprintf("Slack %v ts %s", d["slack_channel"], ts))
		}
		if er, ok := d["error"].(string); ok {
			parts = append(parts, "error: "+er)
		}
		return strings.Join(parts, "; ")
	case history.TypeSilence:
		for _, k := range []string{"silenceCreated", "silenceUpdated"} {
			if m, ok := d[k].(map[string]any); ok {
				if s, ok := m["silence"].(map[string]any); ok {
					var ms []string
					if list, ok := s["matchers"].([]any); ok {
						for _, x := range list {
							if mm, ok := x.(map[string]any); ok {
								if r, ok := mm["rendered"].(string); ok {
									ms = append(ms, r)
								}
							}
						}
					}
					return fmt.Sprintf("{%s} until %v: %v", strings.Join(ms, ", "), s["endsAt"], s["comment"])
				}
			}
		}
	case history.TypeAck:
		if r, ok := d["reason"].(string); ok {
			return r
		}
		return ""
	}
	var parts []string
	for _, k := range []string{"value", "active_at", "reason", "error"} {
		if x, ok := d[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %v", strings.ReplaceAll(k, "_", " "), x))
		}
	}
	return strings.Join(parts, ", ")
}

var historyPage = template.Must(template.New("history").Funcs(template.FuncMap{
	"ts": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>History{{if .Title}} of {{.Title}}{{end}} · paged</title>
<link rel="icon" href="data:,">
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1f23;margin:0}
header{display:flex;gap:1.25rem;align-items:baseline;padding:.6rem 1.25rem;border-bottom:1px solid #dde1e6;background:#f5f6f8}
header a{color:#1d1f23}main{padding:0 1.25rem 2rem;max-width:90rem}
form{margin:1rem 0;display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}label{font-size:.85rem;color:#5f6670;display:block}
.err{color:#c62828}.muted{color:#5f6670}.mono{font-family:ui-monospace,Menlo,monospace;font-size:12px}
.timeline{position:relative;margin:1.5rem 0 .5rem 16rem}
.track{position:relative;height:1.3rem;background:#f1f3f5;margin:.25rem 0;border-radius:2px}
.track .name{position:absolute;right:100%;width:15.5rem;margin-right:.5rem;text-align:right;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font:12px ui-monospace,Menlo,monospace;line-height:1.3rem}
.band{position:absolute;top:0;bottom:0;border-radius:2px}
.band.state-pending{background:#f2b600}.band.state-firing{background:#d93025}.band.state-stale{background:#9aa0a6}
.mark{position:absolute;top:0;bottom:0;width:3px;margin-left:-1px}
.mark.kind-notification.outcome-sent{background:#1a73e8}.mark.kind-notification.outcome-failed{background:#000}
.mark.kind-ack{background:#188038}.mark.kind-silence{background:#8e24aa}
.axis{position:relative;height:1.2rem;font-size:11px;color:#5f6670}.axis span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.key span{display:inline-block;margin-right:1rem;font-size:12px}.sw{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:middle}
table{border-collapse:collapse;width:100%;margin-top:1rem}td,th{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eceff1;vertical-align:top;font-size:13px}
.badge{display:inline-block;padding:0 .4rem;border-radius:3px;font-size:12px;background:#eceff1}
.type-firing{background:#fce8e6;color:#a50e0e}.type-pending{background:#fef7e0;color:#8a6100}.type-resolved{background:#e6f4ea;color:#137333}
.type-notification{background:#e8f0fe;color:#174ea6}.type-ack{background:#e6f4ea;color:#0d652d}.type-silence{background:#f3e8fd;color:#6a1b9a}
</style></head>
<body id="paged-history">
` + pageHeader + `
<main>
<h1>History{{if .Title}} of {{.Title}}{{end}}</h1>
<form method="get" action="history">
{{if .Req.Group}}<input type="hidden" name="group" value="{{.Req.Group}}">{{else}}
<div><label for="alertname">Alert</label><input id="alertname" name="alertname" value="{{.Req.Alertname}}"></div>
{{if .Req.Fingerprint}}<input type="hidden" name="fingerprint" value="{{.Req.Fingerprint}}">{{end}}{{end}}
<div><label for="range">Range</label><input id="range" name="range" value="{{if .Req.RangeInput}}{{.Req.RangeInput}}{{else}}1d{{end}}" list="ranges" size="6">
<datalist id="ranges">{{range .Ranges}}<option value="{{.}}">{{end}}</datalist></div>
<div><label for="end">End (RFC 3339, empty: now)</label><input id="end" name="end" value="{{.Req.EndInput}}" size="22"></div>
<div><button type="submit">Show</button></div>
</form>
{{- if .Error}}<p class="err" id="history-error" role="alert">{{.Error}}</p>
{{- else}}
<p class="muted">{{ts .From}} to {{ts .To}}{{if .Truncated}} — more events than one page shows: narrow the range{{end}}</p>
<div class="key"><span><i class="sw" style="background:#f2b600"></i>pending</span><span><i class="sw" style="background:#d93025"></i>firing</span><span><i class="sw" style="background:#9aa0a6"></i>stale</span><span><i class="sw" style="background:#1a73e8"></i>notification sent</span><span><i class="sw" style="background:#000"></i>failed</span><span><i class="sw" style="background:#188038"></i>acknowledgement</span><span><i class="sw" style="background:#8e24aa"></i>silence</span></div>
<section class="timeline" id="timeline">
{{- range .Rows}}
<div class="track alert-track" data-fingerprint="{{.Fingerprint}}"><span class="name" title="{{.Labels}}">{{if .Labels}}{{.Labels}}{{else}}{{.Fingerprint}}{{end}}</span>
{{- range .Bands}}<span class="band state-{{.State}}" data-state="{{.State}}" style="{{.Style}}" title="{{.Title}}"></span>{{end}}</div>
{{- end}}
<div class="track" id="marks"><span class="name">notifications, acks, silences</span>
{{- range .Marks}}<span class="mark kind-{{.Kind}} outcome-{{.Outcome}}" data-kind="{{.Kind}}" data-outcome="{{.Outcome}}" style="{{.Style}}" title="{{.Title}}"></span>{{end}}</div>
<div class="axis">{{range .Ticks}}<span style="{{.Style}}">{{.Label}}</span>{{end}}</div>
</section>
{{- if .Groups}}<p>Notification groups: {{range .Groups}}<a class="group-link" href="{{.Href}}"><code class="mono">{{.Key}}</code></a> {{end}}</p>{{end}}
{{- if .Events}}
<table id="events"><thead><tr><th>Time</th><th>Event</th><th>Outcome</th><th>Receiver</th><th>Who</th><th>Labels</th><th>Details</th></tr></thead><tbody>
{{- range .Events}}
<tr class="event" data-type="{{.Type}}"><td class="mono">{{ts .Time}}</td><td><span class="badge type-{{.Type}}">{{.Type}}</span></td><td>{{.Outcome}}</td><td>{{.Receiver}}</td><td class="who">{{.User}}</td><td class="mono">{{.Labels}}</td><td>{{.Detail}}{{if .GroupHref}} <a class="group-link" href="{{.GroupHref}}">group</a>{{end}}</td></tr>
{{- end}}
</tbody></table>
{{- else}}<p class="muted" id="no-events">No events in this range.</p>{{end}}
{{- end}}
</main>
</body></html>
`))
