package webtest

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
)

// Engine is a rule engine built on Prometheus's own rule manager over a
// local TSDB: the same *rules.Group values the real engine returns,
// without a datasource. Rules like vector(1) need no data. It is what web
// reads (RuleGroups, Ready) and what the daemon drives (Run, ApplyRules).
type Engine struct {
	mgr *promrules.Manager

	mu     sync.Mutex
	ready  bool
	reason string
}

// NewEngine opens the engine's TSDB in a temp dir, closed when the test
// ends. The engine starts ready. A nil logger discards.
func NewEngine(t testing.TB, logger *slog.Logger) *Engine {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: 10 * time.Second})
	e := &Engine{ready: true}
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

// Run evaluates the groups on their intervals until ctx is cancelled.
func (e *Engine) Run(ctx context.Context) error {
	go func() { <-ctx.Done(); e.mgr.Stop() }()
	e.mgr.Run()
	return nil
}

// ApplyRules loads cfg's rule files with its global settings; on failure
// the old rules keep running.
func (e *Engine) ApplyRules(cfg *config.Config) error {
	files := cfg.RuleFilePaths
	// Prometheus's Update only says "error loading rules"; load first to
	// get the reasons, as the real engine does.
	if _, errs := e.mgr.LoadGroups(cfg.Global.EvaluationInterval, cfg.Global.ExternalLabels, cfg.Global.ExternalURL.String(), nil, false, files...); len(errs) > 0 {
		return errors.Join(errs...)
	}
	return e.mgr.Update(cfg.Global.EvaluationInterval, files, cfg.Global.ExternalLabels, cfg.Global.ExternalURL.String(), nil)
}

// RuleGroups returns the loaded groups with their live state.
func (e *Engine) RuleGroups() []*promrules.Group { return e.mgr.RuleGroups() }

// Ready reports what SetReady last set.
func (e *Engine) Ready() (bool, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ready, e.reason
}

// SetReady sets what Ready reports.
func (e *Engine) SetReady(ok bool, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ready, e.reason = ok, reason
}
