package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier"
)

// The HTTP surface's tests drive New directly, as the daemon does: the
// configuration loaded from a file in a temp dir, a test engine on
// Prometheus's own rule manager, the real notifier when paged.yaml has a
// notifier block, and a Reload that re-reads the file.

const basicRules = `groups:
  - name: basic
    interval: 1s
    rules:
      - alert: AlwaysFiring
        expr: vector(1) > 0
        labels: {severity: warning}
        annotations: {summary: "value is {{ $value }}"}
      - record: basic:three
        expr: vector(3)
`

const minimalConfig = `
datasource:
  prometheus: {url: "http://127.0.0.1:9"}
rule_files: [%s]
`

func configWith(ruleFiles string) string {
	return strings.Replace(minimalConfig, "%s", ruleFiles, 1)
}

var writeFile = testbin.WriteFile

type syncBuffer = testbin.SyncBuffer

func noEnv(string) string { return "" }

// managerEngine is a test Engine built on Prometheus's own rule manager
// over a local TSDB: the same *rules.Group values the real engine returns,
// without a datasource. Rules like vector(1) need no data.
type managerEngine struct {
	mgr *promrules.Manager

	mu     sync.Mutex
	ready  bool
	reason string
}

func newManagerEngine(t testing.TB, logger *slog.Logger) *managerEngine {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: 10 * time.Second})
	e := &managerEngine{ready: true}
	e.mgr = promrules.NewManager(&promrules.ManagerOptions{
		QueryFunc:    promrules.EngineQueryFunc(eng, db),
		NotifyFunc:   func(context.Context, string, ...*promrules.Alert) {},
		Context:      context.Background(),
		AppendableV2: db,
		Queryable:    db,
		Logger:       logger,
		ResendDelay:  time.Minute,
	})
	return e
}

func (e *managerEngine) applyRules(cfg *config.Config) error {
	files := cfg.RuleFilePaths
	// Prometheus's Update only says "error loading rules"; load first to
	// get the reasons, as the real engine does.
	if _, errs := e.mgr.LoadGroups(cfg.Global.EvaluationInterval, cfg.Global.ExternalLabels, cfg.Global.ExternalURL.String(), nil, false, files...); len(errs) > 0 {
		return errors.Join(errs...)
	}
	return e.mgr.Update(cfg.Global.EvaluationInterval, files, cfg.Global.ExternalLabels, cfg.Global.ExternalURL.String(), nil)
}

func (e *managerEngine) RuleGroups() []*promrules.Group { return e.mgr.RuleGroups() }

func (e *managerEngine) Ready() (bool, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ready, e.reason
}

func (e *managerEngine) setReady(ok bool, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ready, e.reason = ok, reason
}

// testServer is the HTTP surface over a managerEngine and, with a
// notifier block, the real notifier, configured from paged.yaml in a temp
// dir.
type testServer struct {
	web      *Handler
	eng      *managerEngine
	notifier *notifier.Notifier
	dir      string
	opts     struct{ ConfigFile string } // paged.yaml, as the daemon's options name it
	getenv   func(string) string
	logs     *syncBuffer
	registry *prometheus.Registry
	reloads  *prometheus.CounterVec // paged_config_reloads_total, as the daemon counts them
	cfg      atomic.Pointer[config.Config]
	reloadMu sync.Mutex
}

// newTestServer writes config and files into a temp dir and builds the
// HTTP surface over them, with env for ${VAR}s.
func newTestServer(t testing.TB, config string, files map[string]string, env map[string]string) *testServer {
	t.Helper()
	return newWebServer(t, config, files, func(k string) string { return env[k] }, Options{})
}

// newWebServer is newTestServer with opts: their Notifier (without a
// notifier block), Runbooks and WebConfigFile (paged run's
// --web.config.file, which wins over web.config_file) are kept.
func newWebServer(t testing.TB, text string, files map[string]string, getenv func(string) string, opts Options) *testServer {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, dir, name, content)
	}
	writeFile(t, dir, "paged.yaml", text)
	ts := &testServer{dir: dir, getenv: getenv, logs: &syncBuffer{}, registry: prometheus.NewRegistry()}
	ts.opts.ConfigFile = filepath.Join(dir, "paged.yaml")
	ts.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paged_config_reloads_total", Help: "Configuration reloads by result."}, []string{"result"})
	ts.registry.MustRegister(ts.reloads)
	logger := slog.New(slog.NewTextHandler(ts.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.WebConfigFile != "" {
		if err := config.ValidateWebConfig(opts.WebConfigFile); err != nil {
			t.Fatalf("web config: %v", err)
		}
	}
	cfg, err := config.Load(ts.opts.ConfigFile, getenv)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	cfg.UseWebConfig(opts.WebConfigFile)
	ts.cfg.Store(cfg)
	ts.eng = newManagerEngine(t, logger)
	if err := ts.eng.applyRules(cfg); err != nil {
		t.Fatalf("load rules: %v", err)
	}
	opts.Config = ts.Config
	opts.Engine = ts.eng
	opts.Reload = ts.Reload
	opts.Registry = ts.registry
	opts.Logger = logger
	opts.WebConfigFile = cfg.Web.ConfigFile
	if cfg.NotifierConfig != nil {
		nopts := notifier.Options{
			Config:      cfg.NotifierConfig,
			StoragePath: cfg.Storage.Path,
			ExternalURL: cfg.Global.ExternalURL.String(),
			Logger:      logger,
			Registerer:  ts.registry,
			Reporter:    durable.NewReporter(cfg.Storage.Path, logger, ts.registry),
		}
		if cfg.RunbookBaseURL != nil {
			nopts.RunbookBaseURL = cfg.RunbookBaseURL.String()
		}
		n, err := notifier.New(nopts)
		if err != nil {
			t.Fatalf("notifier: %v", err)
		}
		ts.notifier = n
		opts.Notifier = n
	}
	ts.web, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// Config returns the configuration in effect.
func (ts *testServer) Config() *config.Config { return ts.cfg.Load() }

// Handler is the HTTP surface.
func (ts *testServer) Handler() http.Handler { return ts.web }

// Registry is the registry /metrics serves.
func (ts *testServer) Registry() *prometheus.Registry { return ts.registry }

// Reload re-reads paged.yaml and applies its rules, notifier block and web
// block, all or nothing, as the daemon's reload does for web.
func (ts *testServer) Reload() error {
	ts.reloadMu.Lock()
	defer ts.reloadMu.Unlock()
	if err := ts.reload(); err != nil {
		ts.reloads.WithLabelValues("failure").Inc()
		return err
	}
	ts.reloads.WithLabelValues("success").Inc()
	return nil
}

func (ts *testServer) reload() error {
	cfg, err := config.Load(ts.opts.ConfigFile, ts.getenv)
	if err != nil {
		return err
	}
	cfg.UseWebConfig(ts.Config().Web.ConfigFile)
	if ts.notifier != nil && cfg.NotifierConfig != nil {
		if err := ts.notifier.ApplyConfig(cfg.NotifierConfig); err != nil {
			return err
		}
	}
	if err := ts.eng.applyRules(cfg); err != nil {
		return err
	}
	ts.cfg.Store(cfg)
	return nil
}

// rewrite replaces the configuration file.
func (ts *testServer) rewrite(t *testing.T, config string) {
	t.Helper()
	writeFile(t, ts.dir, "paged.yaml", config)
}

// evalAll evaluates every group once at now, as the engine's loop would.
func (ts *testServer) evalAll(now time.Time) {
	for _, g := range ts.eng.RuleGroups() {
		g.Eval(context.Background(), now)
	}
}

func (ts *testServer) do(t *testing.T, method, path string, header http.Header) (int, string) {
	t.Helper()
	rec := ts.record(t, method, path, header)
	return rec.Code, rec.Body.String()
}

// record serves one request and returns the whole response.
func (ts *testServer) record(t *testing.T, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	ts.Handler().ServeHTTP(rec, req)
	return rec
}

// serveConfig writes config (and files) into a temp dir, builds the HTTP
// surface over them (opts' Runbooks and WebConfigFile are kept) and
// serves it, with the notifier running, on a free loopback port until the
// test ends, with the http.Server the daemon builds. It returns the
// address and the server.
func serveConfig(t *testing.T, config string, files map[string]string, opts Options) (string, *testServer) {
	t.Helper()
	ts := newWebServer(t, config, files, noEnv, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if ts.notifier != nil {
		wg.Add(1)
		go func() { defer wg.Done(); _ = ts.notifier.Run(ctx) }()
	}
	srv := &http.Server{
		Handler:           ts.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       ts.Config().Web.IdleTimeout,
		MaxHeaderBytes:    int(ts.Config().Web.MaxHeaderBytes),
		ErrorLog:          slog.NewLogLogger(slog.New(slog.NewTextHandler(ts.logs, nil)).Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- ts.web.Serve(srv, ln) }()
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		if err := srv.Shutdown(sctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		wg.Wait()
	})
	return ln.Addr().String(), ts
}

// call sends one request and returns the status and body.
func call(t *testing.T, c *http.Client, method, url string, body io.Reader, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if req.Header.Get("Content-Type") == "" && body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
