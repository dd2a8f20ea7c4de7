package web

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"
)

// /status: what an operator checks first — the datasource's health and
// last error, the packs and rule files loaded, the cluster's peers, the
// configuration in effect with its secrets redacted, and the build.

type statusView struct {
	Now        time.Time
	Datasource *statusDatasource
	Ready      bool
	Reason     string
	Packs      []statusPack
	RuleFiles  []string
	Cluster    *statusCluster
	ClusterErr string
	Config     string
	ConfigErr  string
	Build      []statusKV
}

type statusDatasource struct {
	Type, Name, LastError  string
	Answered, Down         bool
	DownSince, LastSuccess time.Time
	ConsecutiveFailures    int
}

type statusPack struct {
	Name, Server, Versions, Source string
	Alerts                         int
}

type statusCluster struct {
	Status string
	Peers  []statusKV
}

type statusKV struct{ Key, Value string }

func (h *Handler) handleStatus(w http.ResponseWriter, r *http.Request) {
	cfg := h.Config()
	v := statusView{Now: time.Now(), RuleFiles: cfg.RuleFilePaths}
	v.Ready, v.Reason = h.engine().Ready()
	if ds, ok := h.engine().(datasourceStatuser); ok {
		st := ds.DatasourceStatus()
		v.Datasource = &statusDatasource{
			Type: cfg.Datasource.Type, Name: st.Name, LastError: st.LastError, Answered: st.Answered, Down: st.Down,
			DownSince: st.DownSince, LastSuccess: st.LastSuccess, ConsecutiveFailures: st.ConsecutiveFailures,
		}
	}
	for _, p := range cfg.Packs {
		sp := statusPack{Name: p.Name, Source: p.Rendered.Source, Alerts: p.Rendered.Alerts()}
		if p.Rendered.Pack != nil {
			sp.Server, sp.Versions = p.Rendered.Pack.Server, p.Rendered.Pack.Versions
		}
		v.Packs = append(v.Packs, sp)
	}
	if h.notifier != nil {
		v.Cluster, v.ClusterErr = h.clusterStatus(r.Context())
	}
	if y, err := cfg.Redacted(); err != nil {
		v.ConfigErr = err.Error()
	} else {
		v.Config = y
	}
	v.Build = append(v.Build, statusKV{"go", runtime.Version()}, statusKV{"os/arch", runtime.GOOS + "/" + runtime.GOARCH})
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Build = append(v.Build, statusKV{"module", bi.Main.Path + " " + bi.Main.Version})
		for _, st := range bi.Settings {
			if st.Key == "vcs.revision" || st.Key == "vcs.time" || st.Key == "vcs.modified" {
				v.Build = append(v.Build, statusKV{st.Key, st.Value})
			}
		}
		for _, dep := range bi.Deps {
			switch dep.Path {
			case "github.com/prometheus/prometheus", "github.com/prometheus/alertmanager":
				v.Build = append(v.Build, statusKV{dep.Path, dep.Version})
			}
		}
	}
	h.writePage(w, statusPage, v, http.StatusOK)
}

// clusterStatus reads the cluster from the notifier's Alertmanager API
// (GET /api/v2/status), as amtool does.
func (h *Handler) clusterStatus(ctx context.Context) (*statusCluster, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/api/v2/status", nil)
	if err != nil {
		return nil, err.Error()
	}
	rec := &bufferedResponse{header: http.Header{}, code: http.StatusOK}
	h.notifier.APIHandler().ServeHTTP(rec, req)
	if rec.code != http.StatusOK {
		return nil, "the notifier's status: " + http.StatusText(rec.code)
	}
	var st struct {
		Cluster struct {
			Status string `json:"status"`
			Peers  []struct {
				Name    string `json:"name"`
				Address string `json:"address"`
			} `json:"peers"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &st); err != nil {
		return nil, err.Error()
	}
	c := &statusCluster{Status: st.Cluster.Status}
	for _, p := range st.Cluster.Peers {
		c.Peers = append(c.Peers, statusKV{p.Name, p.Address})
	}
	return c, ""
}

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Status · paged</title><link rel="icon" href="data:,">
<style>body{font:15px/1.45 system-ui,sans-serif;color:#1d1f23;margin:0}
header{display:flex;gap:1.25rem;align-items:baseline;padding:.6rem 1.25rem;border-bottom:1px solid #dde1e6;background:#f5f6f8}
header a{color:#1d1f23}main{padding:0 1.25rem 2rem;max-width:80rem}
table{border-collapse:collapse}th,td{text-align:left;vertical-align:top;padding:.3rem .6rem;border-bottom:1px solid #dde1e6}
th{color:#5f6670;font-weight:600}pre{background:#f5f6f8;padding:.6rem;overflow:auto;font-size:.85rem}
.ok{color:#2e7d32}.err{color:#c62828}code{font-family:ui-monospace,Menlo,monospace}</style></head>
<body id="paged-status">` + pageHeader + `
<main>
<h2>Readiness</h2>
<p id="ready" class="{{if .Ready}}ok{{else}}err{{end}}">{{if .Ready}}ready{{else}}not ready: {{.Reason}}{{end}}</p>
{{- with .Datasource}}
<h2>Datasource</h2>
<table id="datasource">
<tr><th>type</th><td>{{.Type}}</td></tr>
<tr><th>name</th><td><code>{{.Name}}</code></td></tr>
<tr><th>health</th><td class="{{if .Down}}err{{else if .Answered}}ok{{end}}">{{if .Down}}down since {{ts .DownSince}} (PagedDatasourceDown fires){{else if .Answered}}answering{{else}}not answered yet{{end}}</td></tr>
<tr><th>last answer</th><td>{{ts .LastSuccess}}</td></tr>
<tr><th>consecutive failures</th><td>{{.ConsecutiveFailures}}</td></tr>
<tr><th>last error</th><td class="err"><code>{{.LastError}}</code></td></tr>
</table>
{{- end}}
<h2>Packs</h2>
{{- if .Packs}}
<table id="packs"><tr><th>pack</th><th>server</th><th>versions</th><th>alerts</th><th>loaded as</th></tr>
{{- range .Packs}}<tr><td>{{.Name}}</td><td>{{.Server}}</td><td>{{.Versions}}</td><td>{{.Alerts}}</td><td><code>{{.Source}}</code></td></tr>{{end}}
</table>
{{- else}}<p>No pack loaded.</p>{{end}}
<h2>Rule files</h2>
{{- if .RuleFiles}}<ul id="rule-files">{{range .RuleFiles}}<li><code>{{.}}</code></li>{{end}}</ul>{{else}}<p>No rule file.</p>{{end}}
<h2>Cluster</h2>
{{- if .ClusterErr}}<p class="err">{{.ClusterErr}}</p>
{{- else if .Cluster}}<p id="cluster">{{if .Cluster.Status}}{{.Cluster.Status}}{{else}}disabled (a single instance){{end}}</p>
{{- if .Cluster.Peers}}<table><tr><th>peer</th><th>address</th></tr>{{range .Cluster.Peers}}<tr><td>{{.Key}}</td><td>{{.Value}}</td></tr>{{end}}</table>{{end}}
{{- else}}<p>No notifier: no cluster.</p>{{end}}
<h2>Configuration <span style="color:#5f6670;font-weight:400">— secrets redacted, as /api/v1/status/config</span></h2>
{{- if .ConfigErr}}<p class="err">{{.ConfigErr}}</p>{{else}}<pre id="config">{{.Config}}</pre>{{end}}
<h2>Build</h2>
<table id="build">{{range .Build}}<tr><th>{{.Key}}</th><td><code>{{.Value}}</code></td></tr>{{end}}</table>
</main></body></html>
`))
