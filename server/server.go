package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/digest"
	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/web"
)

// Options configures the daemon. Only ConfigFile is required.
type Options struct {
	// ConfigFile is the path of paged.yaml.
	ConfigFile string
	// Getenv provides ${ENV} values; os.Getenv when nil.
	Getenv func(string) string
	// Logger receives the daemon's logs; nil discards them.
	Logger *slog.Logger
	// Listener, when set, is used instead of listening on
	// web.listen_address (tests pass one on a free port).
	Listener net.Listener
	// Reload triggers a configuration reload each time it receives (cmd
	// turns SIGHUP into a send). Nil: reloads only through POST /-/reload.
	Reload <-chan struct{}
	// Runbooks, when set, is served at /runbooks/ instead of
	// web.runbooks_dir. Without either, paged serves the runbooks built
	// into the binary (web.BuiltinRunbooks).
	Runbooks fs.FS
	// NewEngine builds the engine; DefaultEngineFactory when nil.
	NewEngine EngineFactory
	// NewNotifier builds the notifier; NewNotifier when nil.
	NewNotifier NotifierFactory
	// AlertOutput receives the alerts as text when the configuration has
	// no notifier block (cmd passes stdout). Nil: such alerts are dropped.
	AlertOutput io.Writer
	// ReadyCheckInterval is how often readiness is checked so that a change
	// (and its reason) is logged. Default 1s.
	ReadyCheckInterval time.Duration
	// ShutdownTimeout bounds the graceful HTTP shutdown (default 10s).
	ShutdownTimeout time.Duration
	// WebConfigFile, when set, is the exporter-toolkit web configuration
	// (TLS, basic auth) instead of web.config_file: paged run's
	// --web.config.file.
	WebConfigFile string
}

// Server is a running paged: configuration, engine, notifier and HTTP API.
type Server struct {
	opts     Options
	logger   *slog.Logger
	registry *prometheus.Registry
	metrics  *metrics

	eng      Engine
	notifier Notifier // nil without a notifier block

	web     *web.Handler
	history *history.Store    // nil: no history (it could not be opened)
	digest  *digest.Scheduler // nil without a notifier

	reloadMu sync.Mutex // one reload at a time
	reloads  reloadStatus
	cfg      atomic.Pointer[config.Config]
}

// New loads the configuration and builds the engine and the notifier. It
// does not start them: Serve does.
func New(opts Options) (*Server, error) {
	if opts.ConfigFile == "" {
		return nil, errors.New("no configuration file given")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.NewEngine == nil {
		opts.NewEngine = DefaultEngineFactory
	}
	if opts.NewNotifier == nil {
		opts.NewNotifier = NewNotifier
	}
	if opts.ReadyCheckInterval <= 0 {
		opts.ReadyCheckInterval = time.Second
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 10 * time.Second
	}
	if opts.WebConfigFile != "" {
		if err := config.ValidateWebConfig(opts.WebConfigFile); err != nil {
			return nil, err
		}
	}
	cfg, err := config.Load(opts.ConfigFile, opts.Getenv)
	if err != nil {
		return nil, err
	}
	cfg.UseWebConfig(opts.WebConfigFile)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{opts: opts, logger: opts.Logger, registry: reg, metrics: newMetrics(reg)}
	s.cfg.Store(cfg)

	// One reporter for every state file under storage.path.
	rep := durable.NewReporter(cfg.Storage.Path, opts.Logger.With("component", "state"), reg)
	if cfg.Storage.History.Enabled {
		s.history = openHistory(cfg, rep, opts.Logger.With("component", "history"), reg)
	}
	built := false
	defer func() {
		if !built {
			_ = s.history.Close()
		}
	}()
	deps := Deps{Logger: opts.Logger.With("component", "notifier"), Registerer: reg, Reporter: rep, History: s.history}
	n, err := opts.NewNotifier(cfg, deps)
	if err != nil {
		return nil, fmt.Errorf("build notifier: %w", err)
	}
	deps = Deps{Logger: opts.Logger.With("component", "engine"), Registerer: reg, Reporter: rep, ReloadFailed: s.reloads.failure, History: s.history}
	if n != nil {
		s.notifier = n
		deps.Notify = s.limitRuleLabels(n.Notify, reg)
	}
	if deps.Notify == nil && opts.AlertOutput != nil {
		deps.Notify = engine.ConsoleSink(opts.AlertOutput, time.Now)
	}
	eng, err := opts.NewEngine(cfg, deps)
	if err != nil {
		return nil, fmt.Errorf("build engine: %w", err)
	}
	if err := eng.ApplyRules(cfg); err != nil {
		if c, ok := eng.(io.Closer); ok {
			_ = c.Close()
		}
		return nil, fmt.Errorf("load rules: %w", err)
	}
	s.eng = eng
	chartSource(n, eng)
	if s.digest, err = s.newDigest(n, rep, reg); err != nil {
		return nil, err
	}
	wo := web.Options{
		Config:        s.Config,
		Engine:        eng,
		Notifier:      s.notifier,
		Reload:        s.Reload,
		Registry:      reg,
		Runbooks:      opts.Runbooks,
		WebConfigFile: cfg.Web.ConfigFile,
		Logger:        opts.Logger,
	}
	if s.history != nil {
		wo.History = s.history
	}
	s.web, err = web.New(wo)
	if err != nil {
		return nil, err
	}
	s.metrics.reloadSuccess(time.Now())
	built = true
	return s, nil
}

// openHistory opens the event history under storage.path. paged pages
// without one: a history that cannot be opened is logged, and the
// daemon goes on without.
func openHistory(cfg *config.Config, rep *durable.Reporter, logger *slog.Logger, reg prometheus.Registerer) *history.Store {
	h, err := history.Open(history.Options{
		Path:       filepath.Join(cfg.Storage.Path, history.FileName),
		Retention:  cfg.Storage.History.Retention,
		MaxBytes:   cfg.Storage.History.MaxBytes,
		Reporter:   rep,
		Logger:     logger,
		Registerer: reg,
	})
	if err != nil {
		logger.Error("the history cannot be opened; paging goes on without it", "err", err)
		return nil
	}
	return h
}

// newDigest builds the weekly digest's scheduler over the notifier (nil
// without one: report.digest needs a receiver). It sends nothing while
// the configuration has no report.digest; a reload that adds one wakes
// it.
func (s *Server) newDigest(n Notifier, rep *durable.Reporter, reg prometheus.Registerer) (*digest.Scheduler, error) {
	sender, ok := n.(interface {
		SendDigest(context.Context, string, notifier.Digest) (notifier.DigestResult, error)
	})
	if !ok {
		return nil, nil
	}
	opts := digest.Options{
		Config:      s.Config,
		Send:        sender.SendDigest,
		StoragePath: s.Config().Storage.Path,
		Reporter:    rep,
		Logger:      s.logger.With("component", "digest"),
		Registerer:  reg,
	}
	if s.history != nil {
		opts.History = s.history
	}
	return digest.New(opts)
}

// Config returns the configuration in effect.
func (s *Server) Config() *config.Config { return s.cfg.Load() }

func (s *Server) engine() Engine { return s.eng }

// Registry is the registry /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Handler returns the HTTP API.
func (s *Server) Handler() http.Handler { return s.web }

// Serve runs the engine, the notifier and the HTTP server on ln until ctx
// is cancelled, then shuts them down gracefully. A nil ln listens on
// web.listen_address.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", s.Config().Web.ListenAddress)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var wg sync.WaitGroup
	errc := make(chan error, 4)
	run := func(name string, f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil && !errors.Is(err, context.Canceled) {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	if s.notifier != nil {
		run("notifier", s.notifier.Run)
	}
	if s.digest != nil {
		run("digest", s.digest.Run)
	}
	run("engine", s.eng.Run)
	run("readiness", s.watchReady)

	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// A body's time is web.read_timeout, set per request
		// (bodyDeadline), so that a reload applies it and a request
		// without a body is not cut short.
		IdleTimeout:    s.Config().Web.IdleTimeout,
		MaxHeaderBytes: int(s.Config().Web.MaxHeaderBytes),
		// TLS handshake failures and the like, in paged's log.
		ErrorLog:    slog.NewLogLogger(s.logger.With("component", "web").Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.web.Serve(srv, ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
		}
	}()
	s.logger.Info("paged started", "listen", ln.Addr().String(), "rule_files", len(s.Config().RuleFilePaths), "packs", len(s.Config().Packs))

	var runErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-errc:
			runErr = err
			s.logger.Error("component failed", "err", err)
			break loop
		case <-s.opts.Reload:
			if err := s.Reload(); err != nil {
				s.logger.Error("reload failed", "err", err)
			}
		}
	}
	s.logger.Info("paged shutting down")
	shutdownCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer stop()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	cancel()
	wg.Wait()
	if err := s.history.Close(); err != nil {
		s.logger.Warn("closing the history", "err", err)
	}
	return runErr
}

// Run loads the configuration, builds everything and serves until ctx is
// cancelled. It is what `paged run` calls.
func Run(ctx context.Context, opts Options) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx, opts.Listener)
}
