package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/rules"
)

// managerEngine is a test Engine built on Prometheus's own rule manager
// over a local TSDB: the same *rules.Group values the real engine returns,
// without a datasource. Rules like vector(1) need no data.
type managerEngine struct {
	cfg    *config.Config
	mgr    *promrules.Manager
	notify rules.NotifyFunc

	mu          sync.Mutex
	ready       bool
	reason      string
	applyCalled int
}

func newManagerEngine(t testing.TB, cfg *config.Config, deps Deps) *managerEngine {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: 10 * time.Second})
	e := &managerEngine{cfg: cfg, notify: deps.Notify, ready: true}
	logger := deps.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
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

// factory returns an EngineFactory that records the engine it built.
func managerFactory(t testing.TB, built **managerEngine) EngineFactory {
	return func(cfg *config.Config, deps Deps) (Engine, error) {
		e := newManagerEngine(t, cfg, deps)
		*built = e
		return e, nil
	}
}

func (e *managerEngine) Run(ctx context.Context) error {
	go func() { <-ctx.Done(); e.mgr.Stop() }()
	e.mgr.Run()
	return nil
}

func (e *managerEngine) ApplyRules(cfg *config.Config) error {
	files := cfg.RuleFilePaths
	e.mu.Lock()
	e.applyCalled++
	e.mu.Unlock()
	// Prometheus's Update only says "error loading rules"; load first to
	// get the reasons, as the real engine does.
	if _, errs := e.mgr.LoadGroups(cfg.Global.EvaluationInterval, cfg.Global.ExternalLabels, cfg.Global.ExternalURL.String(), nil, false, files...); len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := e.mgr.Update(cfg.Global.EvaluationInterval, files, cfg.Global.ExternalLabels, cfg.Global.ExternalURL.String(), nil); err != nil {
		return err
	}
	return nil
}

func (e *managerEngine) RuleGroups() []*promrules.Group { return e.mgr.RuleGroups() }

func (e *managerEngine) Ready() (bool, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ready, e.reason
}
