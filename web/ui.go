package web

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/pagedhq/paged/engine/embedded"
	"github.com/pagedhq/paged/rules"
	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"
)

// The web UI: one server-rendered overview page at / (alerts, rules,
// silences) and, on the same page, the hash-routed silence views that
// Alertmanager's link format points at (#/silences, #/silences/new?filter=).
// Everything is embedded: no CDN, no network. The page's own links are
// relative, so it also works behind a proxy that strips a path prefix.

//go:embed ui/index.html ui/app.js
var uiFiles embed.FS

var uiPage = template.Must(template.New("index.html").Funcs(template.FuncMap{
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"age": func(now, t time.Time) string {
		if t.IsZero() {
			return ""
		}
		d := now.Sub(t).Truncate(time.Second)
		if d < 0 {
			d = 0
		}
		return d.String()
	},
	"dur": func(d time.Duration) string { return d.String() },
}).ParseFS(uiFiles, "ui/index.html"))

// uiContentSecurityPolicy allows only same-origin scripts and requests; the
// CSS is inline. A label that slipped through escaping still could not run.
const uiContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; " +
	"connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// writePage renders one of the UI's pages into a buffer, so that a
// template error is a clean 500, and writes it with status code and the
// UI's headers: the content security policy, no sniffing, no referrer, no
// caching.
func (h *Handler) writePage(w http.ResponseWriter, page *template.Template, data any, code int) {
	h.writeRendered(w, page.Name(), code, func(w io.Writer) error { return page.Execute(w, data) })
}

// writeRendered is writePage for a page render writes.
func (h *Handler) writeRendered(w http.ResponseWriter, name string, code int, render func(io.Writer) error) {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		h.logger.Error("render page failed", "page", name, "err", err)
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Security-Policy", uiContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// mountUI registers the web UI's routes.
func (h *Handler) mountUI(r chi.Router) {
	r.Method(http.MethodGet, "/", h.limitUIFilter(http.HandlerFunc(h.handleUI)))
	r.Get("/ui/app.js", h.handleUIScript)
}

type uiData struct {
	Now          time.Time
	ExternalURL  string
	AuthRequired bool
	Notifier     bool

	Alerts      []uiAlert
	AlertGroups []uiAlertGroup
	// Matching counts the alerts the filter selects; the page shows
	// Limit of them from Offset, and links the others.
	Matching           int
	PrevHref, NextHref string
	Firing, Pending    int
	Total              int
	Counts             map[string]int // by state, and "stale"
	Groups             []uiGroup

	// The filter form: what is selected, and the values to offer.
	Filter                       *alertFilter
	FilterError                  string
	States                       []string
	SeverityValues, ServerValues []string
	RefreshSeconds               int

	Silences      []uiSilence
	SilencesError string
	AmtoolExample string

	// Scrapes is true in embedded mode; Targets are its scrape targets.
	Scrapes bool
	Targets []uiTarget
}

type uiTarget struct {
	embedded.Target
	LabelList []labels.Label // the target labels, for the template
}

type uiAlert struct {
	Name, State, Severity string
	Summary, Description  string
	Labels                []labels.Label // all but alertname and severity
	ActiveAt              time.Time
	Value                 string
	Stale                 bool
	Source                string
	Receivers             string
	Group                 string
	SilencedBy            []string
	InhibitedBy           []string
	AckedBy               string // the Slack user who acknowledged the group, "" if none
	AckedAt               time.Time
	Runbook               string // "" when there is none
	GraphHref             string // "" when there is none
	HistoryHref           string // its timeline, /history
	SilenceHref           string
	Amtool                string
}

// uiAlertGroup is a notification group: the alerts a route sends together.
type uiAlertGroup struct {
	Name   string
	Alerts []uiAlert
}

// groupUIAlerts groups the sorted alerts by notification group, keeping
// the order of each group's first alert.
func groupUIAlerts(as []uiAlert) []uiAlertGroup {
	var out []uiAlertGroup
	idx := map[string]int{}
	for _, a := range as {
		i, ok := idx[a.Group]
		if !ok {
			i = len(out)
			idx[a.Group] = i
			out = append(out, uiAlertGroup{Name: a.Group})
		}
		out[i].Alerts = append(out[i].Alerts, a)
	}
	return out
}

type uiGroup struct {
	Name, File     string
	Interval       time.Duration
	LastEvaluation time.Time
	EvaluationTime time.Duration
	Rules          []uiRule
}

type uiRule struct {
	Name, Type, State, Health string
	LastError, Query          string
	Alerts                    int
	Stale                     bool
	GraphHref                 string
}

type uiSilence struct {
	ID, State, Matchers string
	CreatedBy, Comment  string
	StartsAt, EndsAt    time.Time
}

func (h *Handler) handleUI(w http.ResponseWriter, r *http.Request) {
	cfg := h.Config()
	d := uiData{
		Now:          time.Now(),
		ExternalURL:  cfg.Global.ExternalURL.String(),
		AuthRequired: cfg.Web.AuthRequired(),
		Notifier:     h.notifier != nil,
		Counts:       map[string]int{},
		States:       alertStates,
		// A plain meta refresh reloads the same address, query string
		// (the filter) included, and needs no JavaScript.
		RefreshSeconds: 30,
	}
	d.AmtoolExample = amtoolCommand(d.ExternalURL, labels.FromStrings("alertname", "…"))
	filter, ferr := parseAlertFilter(r.URL.Query())
	d.Filter = filter
	if ferr != nil {
		d.FilterError = ferr.Error()
	}
	for _, g := range h.engine().RuleGroups() {
		ug := uiGroup{
			Name:           g.Name(),
			File:           g.File(),
			Interval:       g.Interval(),
			LastEvaluation: g.GetLastEvaluation(),
			EvaluationTime: g.GetEvaluationTime(),
		}
		for _, rule := range g.Rules() {
			ur := uiRule{Name: rule.Name(), Health: string(rule.Health()), Query: rule.Query().String()}
			if e := rule.LastError(); e != nil {
				ur.LastError = e.Error()
			}
			switch rule := rule.(type) {
			case *promrules.AlertingRule:
				ur.Type, ur.State = "alerting", rule.State().String()
				ur.Stale = h.isStale(rule)
				ur.Alerts = len(h.apiAlerts(r.Context(), g, rule))
				ur.GraphHref = h.graphLink(rule)
			default:
				ur.Type = "recording"
			}
			ug.Rules = append(ug.Rules, ur)
		}
		d.Groups = append(d.Groups, ug)
	}
	var targets []embedded.Target
	targets, _, _, d.Scrapes = h.targets()
	for _, t := range targets {
		ut := uiTarget{Target: t}
		t.Labels.Range(func(l labels.Label) { ut.LabelList = append(ut.LabelList, l) })
		d.Targets = append(d.Targets, ut)
	}
	all := h.collectAlerts(r.Context())
	d.Total = len(all)
	for _, v := range all {
		d.Counts[v.State]++
		if v.Stale {
			d.Counts["stale"]++
		}
		if sev := v.Severity; sev != "" && !slices.Contains(d.SeverityValues, sev) {
			d.SeverityValues = append(d.SeverityValues, sev)
		}
		if srv := v.Server; srv != "" && !slices.Contains(d.ServerValues, srv) {
			d.ServerValues = append(d.ServerValues, srv)
		}
		if ferr == nil && len(filter.matchers) > 0 && r.Context().Err() != nil {
			break // web.regexp_query_timeout passed, or the client left
		}
		if ferr == nil && !filter.match(v) {
			continue
		}
		d.Matching++
		if d.Matching <= filter.Offset || d.Matching > filter.Offset+filter.Limit {
			continue // another page's
		}
		d.Alerts = append(d.Alerts, h.uiAlert(v, d.ExternalURL))
	}
	d.setPages(r.URL.Query())
	d.Firing, d.Pending = d.Counts["firing"], d.Counts["pending"]
	slices.SortFunc(d.SeverityValues, func(a, b string) int {
		return cmp.Or(cmp.Compare(severityRank(a), severityRank(b)), strings.Compare(a, b))
	})
	slices.Sort(d.ServerValues)
	d.AlertGroups = groupUIAlerts(d.Alerts)
	if h.notifier != nil {
		sil, err := h.activeSilences(r.Context())
		switch {
		case errors.Is(err, errNoSilenceAPI):
			d.Notifier = false // a wrapper without a notifier (paged demo)
		case err != nil:
			d.SilencesError = err.Error()
		}
		d.Silences = sil
	}

	code := http.StatusOK
	if ferr != nil {
		// The page still renders, with the reason above the form.
		code = http.StatusBadRequest
	}
	h.writePage(w, uiPage, d, code)
}

func (h *Handler) handleUIScript(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(uiFiles, "ui/app.js")
	if err != nil {
		http.Error(w, "script missing from the binary", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b)
}

func (h *Handler) uiAlert(a *viewAlert, external string) uiAlert {
	ua := uiAlert{
		Name:        a.Name,
		State:       a.State,
		Severity:    a.Severity,
		Summary:     a.annotation("summary"),
		Description: a.annotation("description"),
		Value:       a.Value,
		Stale:       a.Stale,
		Source:      a.Source,
		Receivers:   strings.Join(a.Receivers, ", "),
		Group:       a.group(),
		SilencedBy:  a.SilencedBy,
		InhibitedBy: a.InhibitedBy,
		ActiveAt:    a.ActiveAt,
		AckedBy:     a.ackedBy(),
		Runbook:     h.uiRunbookLink(a.annotation("runbook_url")),
		GraphHref:   uiGraphLink(a.GeneratorURL),
		HistoryHref: historyLink(a.Name, a.Labels, h.Config().Global.ExternalLabels),
		SilenceHref: "#/silences/new?filter=" + url.QueryEscape(matcherList(a.Labels)),
		Amtool:      amtoolCommand(external, a.Labels),
	}
	if a.Ack != nil {
		ua.AckedAt = a.Ack.At
	}
	a.Labels.Range(func(l labels.Label) {
		if l.Name != labels.AlertName && l.Name != "severity" {
			ua.Labels = append(ua.Labels, l)
		}
	})
	return ua
}

// uiGraphLink keeps http(s) and relative graph links, nothing else.
func uiGraphLink(ref string) string {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil || ref == "" {
		return ""
	}
	if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	if u.Scheme == "" && u.Host == "" && !strings.HasPrefix(u.Path, "graph") {
		return ""
	}
	if u.Path == "" || u.Path == "/" {
		return "" // a built-in alert's generatorURL is paged itself
	}
	return u.String()
}

// uiValue shows an alert's value as people write it (0.97, not 9.7e-01).
func uiValue(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// uiRunbookLink resolves a runbook_url annotation as the notifier does
// (DESIGN.md §4): absolute http(s) URLs stay, relative ones resolve against
// runbook_base_url or, when that is empty, against paged's own runbooks/.
// Any other scheme (javascript:, data:) gives no link.
func (h *Handler) uiRunbookLink(ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if u.Scheme != "" {
		if u.Scheme == "http" || u.Scheme == "https" {
			return u.String()
		}
		return ""
	}
	if u.Host != "" { // //host/path: the page's scheme
		return u.String()
	}
	if base := h.Config().RunbookBaseURL; base != nil {
		return rules.ResolveRunbook(ref, base)
	}
	// Relative to the page at /, so that a path-stripping proxy works too.
	u.Path = "runbooks/" + strings.TrimPrefix(u.Path, "/")
	return u.String()
}

// matcherList renders labels as Alertmanager's filter: {a="b",c="d"}, in
// the notifier's link format (sorted names, Go-quoted values).
func matcherList(ls labels.Labels) string {
	var parts []string
	ls.Range(func(l labels.Label) {
		parts = append(parts, l.Name+"="+strconv.Quote(l.Value))
	})
	return "{" + strings.Join(parts, ",") + "}"
}

// amtoolCommand is the shell command that silences ls for two hours against
// paged's Alertmanager API, for readers without JavaScript.
func amtoolCommand(external string, ls labels.Labels) string {
	args := []string{"amtool", "--alertmanager.url=" + shellQuote(external), "silence", "add",
		"--duration=2h", "--author=\"$USER\"", "--comment=" + shellQuote("why this is silenced")}
	ls.Range(func(l labels.Label) {
		args = append(args, shellQuote(l.Name+"="+strconv.Quote(l.Value)))
	})
	return strings.Join(args, " ")
}

// shellQuote single-quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// errNoSilenceAPI: the notifier serves no silence API.
var errNoSilenceAPI = errors.New("the notifier has no silence API")

// activeSilences reads the active and pending silences from the notifier's
// own Alertmanager API, the same answer GET /api/v2/silences gives.
func (h *Handler) activeSilences(ctx context.Context) ([]uiSilence, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/api/v2/silences", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	rec := &bufferedResponse{header: http.Header{}, code: http.StatusOK}
	h.notifier.APIHandler().ServeHTTP(rec, req)
	if rec.code == http.StatusNotFound {
		return nil, errNoSilenceAPI
	}
	if rec.code != http.StatusOK {
		return nil, fmt.Errorf("list silences: %d %s", rec.code, strings.TrimSpace(rec.body.String()))
	}
	var raw []struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Matchers []struct {
			Name    string `json:"name"`
			Value   string `json:"value"`
			IsRegex bool   `json:"isRegex"`
			IsEqual *bool  `json:"isEqual"`
		} `json:"matchers"`
		StartsAt  time.Time `json:"startsAt"`
		EndsAt    time.Time `json:"endsAt"`
		CreatedBy string    `json:"createdBy"`
		Comment   string    `json:"comment"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &raw); err != nil {
		return nil, fmt.Errorf("list silences: %w", err)
	}
	var out []uiSilence
	for _, r := range raw {
		if r.Status.State != "active" && r.Status.State != "pending" {
			continue
		}
		var ms []string
		for _, m := range r.Matchers {
			equal := m.IsEqual == nil || *m.IsEqual // absent means true
			op := map[[2]bool]string{{false, true}: "=", {false, false}: "!=", {true, true}: "=~", {true, false}: "!~"}[[2]bool{m.IsRegex, equal}]
			ms = append(ms, m.Name+op+strconv.Quote(m.Value))
		}
		out = append(out, uiSilence{
			ID: r.ID, State: r.Status.State, Matchers: "{" + strings.Join(ms, ",") + "}",
			CreatedBy: r.CreatedBy, Comment: r.Comment, StartsAt: r.StartsAt, EndsAt: r.EndsAt,
		})
	}
	slices.SortFunc(out, func(a, b uiSilence) int {
		return cmp.Or(strings.Compare(a.State, b.State), a.EndsAt.Compare(b.EndsAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// bufferedResponse collects an in-process handler's answer.
type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedResponse) WriteHeader(code int)        { b.code = code }

// pageHeader is the navigation of the pages web renders on the server
// (graph, history, report, status); the overview's is in ui/index.html.
const pageHeader = `<header><strong>paged</strong><a href="./">Alerts</a><a href="graph">Graph</a><a href="history">History</a><a href="report">Report</a><a href="runbooks/">Runbooks</a><a href="status">Status</a></header>`
