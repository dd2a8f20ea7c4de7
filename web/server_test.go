package web

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/web/webtest"
)

// The HTTP surface's tests drive New directly, as the daemon does: the
// configuration loaded from a file in a temp dir, a test engine on
// Prometheus's own rule manager, the real notifier when paged.yaml has a
// notifier block, and a Reload that re-reads the file.

var (
	basicRules = webtest.BasicRules
	configWith = webtest.ConfigWith
	writeFile  = testbin.WriteFile
	call       = webtest.Call
)

func noEnv(string) string { return "" }

// testServer is the HTTP surface over a webtest.Engine and, with a
// notifier block, the real notifier, configured from paged.yaml in its
// Site's dir.
type testServer struct {
	*webtest.Site
	web      *Handler
	notifier *notifier.Notifier
	opts     struct{ ConfigFile string } // paged.yaml, as the daemon's options name it
	getenv   func(string) string
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
	ts := &testServer{Site: webtest.NewSite(t, text, files), getenv: getenv, registry: prometheus.NewRegistry()}
	ts.opts.ConfigFile = ts.ConfigFile()
	ts.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paged_config_reloads_total", Help: "Configuration reloads by result."}, []string{"result"})
	ts.registry.MustRegister(ts.reloads)
	logger := ts.Logger
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
	ts.Engine = webtest.NewEngine(t, logger)
	if err := ts.Engine.ApplyRules(cfg); err != nil {
		t.Fatalf("load rules: %v", err)
	}
	opts.Config = ts.Config
	opts.Engine = ts.Engine
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
	ts.HTTP = ts.web
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
	if err := ts.Engine.ApplyRules(cfg); err != nil {
		return err
	}
	ts.cfg.Store(cfg)
	return nil
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
		ErrorLog:          slog.NewLogLogger(slog.New(slog.NewTextHandler(ts.Logs, nil)).Handler(), slog.LevelWarn),
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
