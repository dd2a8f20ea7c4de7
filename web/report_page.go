package web

import (
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/pagedhq/paged/report"
)

// /report is the report of paged report --format html, built from this
// paged's history over from..to (the same syntax as the command's
// --from and --to: now, -7d, an RFC 3339 time; default the last 7 days)
// with the working hours of the report: block. The weekly digest links
// to it with the fixed span it counted.

const (
	reportPageDefaultFrom = "-7d"
	reportPageDefaultTo   = "now"
)

// reportPageRequest is /report's query, checked.
type reportPageRequest struct {
	FromInput, ToInput string
	From, To           time.Time
}

func parseReportPageRequest(q url.Values, now time.Time) (*reportPageRequest, error) {
	r := &reportPageRequest{FromInput: reportPageDefaultFrom, ToInput: reportPageDefaultTo}
	for k, vs := range q {
		switch k {
		case "from", "to":
			if len(vs) > 1 {
				return r, fmt.Errorf("%s is given %d times: give it once", k, len(vs))
			}
		default:
			return r, fmt.Errorf("unknown parameter %s (known: from, to)", clip(k))
		}
	}
	if v := q.Get("from"); v != "" {
		r.FromInput = v
	}
	if v := q.Get("to"); v != "" {
		r.ToInput = v
	}
	var err error
	if r.From, err = report.ParseTime(r.FromInput, now); err != nil {
		return r, fmt.Errorf("invalid from: %w", err)
	}
	if r.To, err = report.ParseTime(r.ToInput, now); err != nil {
		return r, fmt.Errorf("invalid to: %w", err)
	}
	if !r.From.Before(r.To) {
		return r, fmt.Errorf("from (%s) must be before to (%s)", r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339))
	}
	return r, nil
}

// reportErrorView is the page that says why there is no report.
type reportErrorView struct {
	Req   *reportPageRequest
	Error string
}

func (h *Handler) handleReportPage(w http.ResponseWriter, r *http.Request) {
	req, err := parseReportPageRequest(r.URL.Query(), time.Now())
	fail := func(code int, msg string) {
		h.writePage(w, reportErrorPage, reportErrorView{Req: req, Error: msg}, code)
	}
	switch {
	case err != nil:
		fail(http.StatusBadRequest, err.Error())
		return
	case h.opts.History == nil:
		fail(http.StatusServiceUnavailable, "there is no event history to report on: it is off unless storage.history.enabled is true, or it could not be opened at start (paged's log says why)")
		return
	}
	// One report at a time: each reads the whole span of the history.
	select {
	case h.reports <- struct{}{}:
		defer func() { <-h.reports }()
	case <-r.Context().Done():
		return
	}
	rep, err := report.Build(r.Context(), report.ConfigOptions(h.Config().Report, req.From, req.To), h.opts.History)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		h.logger.Error("report failed", "err", err)
		fail(http.StatusInternalServerError, "the report could not be built from the history; paged's log says why")
		return
	}
	h.writeRendered(w, "report", http.StatusOK, func(w io.Writer) error { return rep.WriteHTML(w) })
}

var reportErrorPage = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Report · paged</title>
<link rel="icon" href="data:,">
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1f23;margin:0}
header{display:flex;gap:1.25rem;align-items:baseline;padding:.6rem 1.25rem;border-bottom:1px solid #dde1e6;background:#f5f6f8}
header a{color:#1d1f23}main{padding:0 1.25rem 2rem;max-width:60rem}
form{margin:1rem 0;display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}label{font-size:.85rem;color:#5f6670;display:block}
.err{color:#c62828}.muted{color:#5f6670}
</style></head>
<body id="paged-report">
` + pageHeader + `
<main>
<h1>Report</h1>
<p class="err" id="report-error" role="alert">{{.Error}}</p>
<form method="get" action="report">
<div><label for="from">From</label><input id="from" name="from" value="{{.Req.FromInput}}" size="22"></div>
<div><label for="to">To</label><input id="to" name="to" value="{{.Req.ToInput}}" size="22"></div>
<div><button type="submit">Report</button></div>
</form>
<p class="muted">From and to: <code>now</code>, a duration back from now (<code>-1h</code>, <code>-7d</code>) or an RFC 3339 time, as <code>paged report --from --to</code> takes them.</p>
</main>
</body></html>
`))
