package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/route"
	promcfg "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/scrape"
	"github.com/prometheus/prometheus/tsdb"
	v1 "github.com/prometheus/prometheus/web/api/v1"

	"github.com/pagedhq/paged/engine/embedded"
)

// In embedded mode paged answers Prometheus's query API over its own TSDB,
// with Prometheus's own handlers (web/api/v1, as Thanos and Mimir reuse
// them), so that Grafana's Prometheus datasource, promtool query and
// client_golang's API client work against paged:
//
//	/api/v1/query, /api/v1/query_range, /api/v1/query_exemplars,
//	/api/v1/format_query, /api/v1/parse_query, /api/v1/series,
//	/api/v1/labels, /api/v1/label/<name>/values, /api/v1/metadata,
//	/api/v1/targets, /api/v1/targets/metadata, /api/v1/scrape_pools,
//	/api/v1/status/buildinfo, /api/v1/status/runtimeinfo,
//	/api/v1/status/flags, /api/v1/status/tsdb
//
// /api/v1/rules, /api/v1/alerts and /api/v1/status/config stay paged's
// (its rules, its alerts, its configuration with the secrets redacted).
// Query limits: datasource.embedded.query (timeout, max_samples,
// lookback_delta), Prometheus's defaults otherwise. The admin, remote
// read and write endpoints are not served.

// promAPIPaths are the routes handed to Prometheus's handlers, with their
// methods.
var promAPIPaths = []struct {
	path    string
	methods []string
}{
	{"/query", []string{http.MethodGet, http.MethodPost}},
	{"/query_range", []string{http.MethodGet, http.MethodPost}},
	{"/query_exemplars", []string{http.MethodGet, http.MethodPost}},
	{"/format_query", []string{http.MethodGet, http.MethodPost}},
	{"/parse_query", []string{http.MethodGet, http.MethodPost}},
	{"/series", []string{http.MethodGet, http.MethodPost}},
	{"/labels", []string{http.MethodGet, http.MethodPost}},
	{"/label/{name}/values", []string{http.MethodGet}},
	{"/metadata", []string{http.MethodGet}},
	{"/targets", []string{http.MethodGet}},
	{"/targets/metadata", []string{http.MethodGet}},
	{"/scrape_pools", []string{http.MethodGet}},
	{"/status/buildinfo", []string{http.MethodGet}},
	{"/status/runtimeinfo", []string{http.MethodGet}},
	{"/status/flags", []string{http.MethodGet}},
	{"/status/tsdb", []string{http.MethodGet}},
}

// mountPromAPI registers the query API when the engine owns the embedded
// TSDB.
func (h *Handler) mountPromAPI(r chi.Router) {
	es, ok := h.engine().(embeddedStore)
	if !ok {
		return
	}
	_, qe, emb := es.EmbeddedStorage()
	if emb == nil || qe == nil {
		return
	}
	api := h.newPromAPI(qe, emb)
	for _, p := range promAPIPaths {
		for _, m := range p.methods {
			r.Method(m, "/api/v1"+p.path, api)
		}
	}
}

func (h *Handler) newPromAPI(qe promql.QueryEngine, emb *embedded.Embedded) http.Handler {
	db := emb.DB()
	mgr := emb.ScrapeManager()
	cfg := h.Config()
	ext := cfg.Global.ExternalURL
	start := time.Now()
	promCfg := func() promcfg.Config {
		c, err := emb.PrometheusConfig()
		if err != nil || c == nil {
			return promcfg.DefaultConfig
		}
		return *c
	}
	lookback := cfg.Datasource.Embedded.Query.LookbackDelta
	if lookback <= 0 {
		lookback = 5 * time.Minute
	}
	timeout := cfg.Datasource.Embedded.Query.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	flags := map[string]string{
		"query.lookback-delta": lookback.String(),
		"query.timeout":        timeout.String(),
		"storage.tsdb.path":    emb.Options().StoragePath,
	}
	// The handlers' own metrics (remote read) go to a registry of their
	// own: they are not paged's.
	own := prometheus.NewRegistry()
	api := v1.NewAPI(qe, db, nil, db,
		func(context.Context) v1.ScrapePoolsRetriever { return mgr },
		func(context.Context) v1.TargetRetriever { return mgr },
		func(context.Context) v1.AlertmanagerRetriever { return noAlertmanagers{} },
		promCfg, flags,
		v1.GlobalURLOptions{ListenAddress: cfg.Web.ListenAddress, Host: ext.Host, Scheme: ext.Scheme},
		func(f http.HandlerFunc) http.HandlerFunc { return f },
		tsdbStats{db}, emb.Options().StoragePath,
		false, false, 0, // no admin API, no search API
		h.logger.With("component", "query api"),
		func(context.Context) v1.RulesRetriever { return noRules{} },
		0, 0, 0, // remote read: not served
		false, nil,
		func() (v1.RuntimeInfo, error) {
			return v1.RuntimeInfo{
				StartTime: start, CWD: ".", GoroutineCount: runtime.NumGoroutine(), GOMAXPROCS: runtime.GOMAXPROCS(0),
				GOGC: "", GODEBUG: "", StorageRetention: emb.Options().Retention.String(),
			}, nil
		},
		promBuildInfo(),
		nil, nil, // notifications
		own, own,
		nil,                             // stats renderer: Prometheus's
		false, nil, false, false, false, // remote write, OTLP
		lookback,
		false, false, // type and unit labels, metadata on append
		nil, nil,
		v1.OpenAPIOptions{ExternalURL: ext.String(), Version: promBuildInfo().Version},
		nil, false, timeout,
	)
	rt := route.New().WithPrefix("/api/v1")
	api.Register(rt)
	return rt
}

// promBuildInfo is what /api/v1/status/buildinfo says: the Prometheus
// version whose query engine and API paged embeds (Grafana reads it to
// choose the features it uses), and paged's revision.
func promBuildInfo() *v1.PrometheusVersion {
	bi := &v1.PrometheusVersion{Version: "3.0.0", Branch: "paged", GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/prometheus/prometheus" {
				bi.Version = prometheusVersion(dep.Version)
			}
		}
		for _, st := range info.Settings {
			switch st.Key {
			case "vcs.revision":
				bi.Revision = st.Value
			case "vcs.time":
				bi.BuildDate = st.Value
			}
		}
	}
	return bi
}

// prometheusVersion maps the library's module version (v0.316.0) to the
// Prometheus release it is cut from (3.16.0).
func prometheusVersion(mod string) string {
	var minor, patch int
	if n, _ := fmtSscanf(mod, "v0.%d.%d", &minor, &patch); n == 2 && minor >= 300 {
		return fmtSprintf("%d.%d.%d", minor/100, minor%100, patch)
	}
	return "3.0.0"
}

type noAlertmanagers struct{}

func (noAlertmanagers) Alertmanagers() []*url.URL        { return nil }
func (noAlertmanagers) DroppedAlertmanagers() []*url.URL { return nil }

type noRules struct{}

func (noRules) RuleGroups() []*rules.Group           { return nil }
func (noRules) AlertingRules() []*rules.AlertingRule { return nil }

// tsdbStats gives /api/v1/status/tsdb the head's statistics. The admin
// operations are refused (the admin API is off).
type tsdbStats struct{ db *tsdb.DB }

func (t tsdbStats) CleanTombstones() error { return errAdminDisabled }
func (t tsdbStats) Delete(context.Context, int64, int64, ...*labels.Matcher) error {
	return errAdminDisabled
}
func (t tsdbStats) Snapshot(string, bool) error { return errAdminDisabled }
func (t tsdbStats) Stats(name string, limit int) (*tsdb.Stats, error) {
	return t.db.Head().Stats(name, limit), nil
}
func (t tsdbStats) WALReplayStatus() (tsdb.WALReplayStatus, error) {
	return tsdb.WALReplayStatus{}, nil
}
func (t tsdbStats) BlockMetas() ([]tsdb.BlockMeta, error) {
	var out []tsdb.BlockMeta
	for _, b := range t.db.Blocks() {
		out = append(out, b.Meta())
	}
	return out, nil
}

var errAdminDisabled = errorString("the admin API is not served by paged")

type errorString string

func (e errorString) Error() string { return string(e) }

var _ v1.TargetRetriever = (*scrape.Manager)(nil)

func fmtSscanf(s, format string, args ...any) (int, error) { return fmt.Sscanf(s, format, args...) }
func fmtSprintf(format string, args ...any) string         { return fmt.Sprintf(format, args...) }
