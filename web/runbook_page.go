package web

import (
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"path"
	"strings"
)

// runbookView is a runbook page: the rendered runbook and, on paged's own
// /runbooks/, the alert's current instances.
type runbookView struct {
	Title string
	Body  template.HTML
	// Alert is the alert the runbook is for (its file name); Instances
	// are its alerts now, and Root the relative path back to paged's /.
	Alert     string
	Instances []uiAlert
	Root      string
	// Raw links the runbook's markdown source, relative to the page
	// (<Alert>.md?raw), so that it holds behind a path prefix too.
	Raw string
}

// runbookContentSecurityPolicy: a runbook page runs no script and loads
// nothing from elsewhere.
const runbookContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// acceptsHTML reports whether the Accept header prefers HTML to markdown
// and plain text: a browser's does, curl's (*/*) and
// "Accept: text/markdown" do not.
func acceptsHTML(accept string) bool {
	best, bestQ := "", -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if _, err := fmtSscan(v, &q); err != nil {
				q = 0
			}
		}
		switch mt {
		case "text/html", "application/xhtml+xml", "text/markdown", "text/plain", "text/x-markdown":
		default:
			continue
		}
		if q > bestQ {
			best, bestQ = mt, q
		}
	}
	return (best == "text/html" || best == "application/xhtml+xml") && bestQ > 0
}

// addInstances lists the current alerts of the runbook's alert: those
// named as the file, or whose runbook_url leads to it.
func (h *Handler) addInstances(r *http.Request, v *runbookView, file string) {
	v.Alert = path.Base(strings.TrimSuffix(file, ".md"))
	v.Root = strings.Repeat("../", strings.Count(file, "/")+1)
	runbook := "runbooks/" + strings.TrimSuffix(file, ".md")
	ext := h.Config().Global.ExternalURL.String()
	for _, a := range h.collectAlerts(r.Context()) {
		link := strings.TrimSuffix(h.uiRunbookLink(a.annotation("runbook_url")), ".md")
		if a.Name != v.Alert && !strings.HasSuffix(link, runbook) {
			continue
		}
		ua := h.uiAlert(a, ext)
		ua.SilenceHref = v.Root + ua.SilenceHref
		if strings.HasPrefix(ua.GraphHref, "graph?") {
			ua.GraphHref = v.Root + ua.GraphHref
		}
		v.Instances = append(v.Instances, ua)
	}
}

var runbookPage = template.Must(template.New("runbook").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · paged runbook</title>
{{- if .Raw}}
<link rel="alternate" type="text/markdown" href="{{.Raw}}">
{{- end}}
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1f23}
pre{background:#f4f4f4;padding:.75rem;overflow:auto}code{background:#f4f4f4;padding:0 .2rem}
table{border-collapse:collapse}th,td{border:1px solid #dde1e6;padding:.25rem .5rem;text-align:left;vertical-align:top}
.badge{display:inline-block;padding:0 .45rem;border-radius:.6rem;font-size:.78rem;font-weight:600;color:#fff;background:#5f6670}
.state-firing{background:#c62828}.state-pending{background:#d77a00}.state-silenced,.state-inhibited{background:#607d8b}
.label{display:inline-block;margin:.1rem .2rem .1rem 0;padding:0 .35rem;border:1px solid #dde1e6;border-radius:.3rem;background:#f5f6f8;font-size:.8rem}
#instances{border:1px solid #dde1e6;border-radius:.4rem;padding:.25rem 1rem .75rem;margin-bottom:1.5rem;background:#fafbfc}
nav{font-size:.9rem;margin-bottom:1rem}</style>
</head><body>
{{- if .Root}}
<nav><a href="{{.Root}}">paged</a> · <a href="{{.Root}}runbooks/">runbooks</a>{{if .Raw}} · <a class="raw" href="{{.Raw}}">markdown source</a>{{end}}</nav>
<section id="instances">
<h2>{{.Alert}} now</h2>
{{- if .Instances}}
<table>
<thead><tr><th>State</th><th>Labels</th><th>Since</th><th>Value</th><th></th></tr></thead>
<tbody>
{{- range .Instances}}
<tr class="instance"><td><span class="badge state-{{.State}}">{{.State}}</span>{{if .Stale}} <span class="badge">stale</span>{{end}}</td>
<td>{{range .Labels}}<span class="label">{{.Name}}="{{.Value}}"</span>{{end}}</td>
<td>{{.ActiveAt.UTC.Format "2006-01-02 15:04:05Z"}}</td><td>{{.Value}}</td>
<td>{{if .GraphHref}}<a class="graph" href="{{.GraphHref}}">Graph</a> {{end}}<a class="silence" href="{{.SilenceHref}}">Silence</a></td></tr>
{{- end}}
</tbody></table>
{{- else}}
<p>Not firing or pending now.</p>
{{- end}}
</section>
{{- end}}
<article id="runbook">
{{.Body}}
</article>
</body></html>
`))

func fmtSscan(s string, f *float64) (int, error) { return fmt.Sscan(s, f) }
