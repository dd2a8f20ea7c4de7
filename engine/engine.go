package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"
)

// Engine evaluates rule groups against a Datasource and hands alerts to
// Options.Notify. Create it with New, load rules with ApplyRules (before or
// after Run), and call Run once.
type Engine struct {
	opts    Options
	logger  *slog.Logger
	db      *tsdb.DB
	mgr     *promrules.Manager
	loader  *loader
	sent    *sentLog
	metrics *metrics

	ctx    context.Context // the rules manager's; canceled when Run ends
	cancel context.CancelFunc

	answered atomic.Bool // the datasource answered at least once
	started  atomic.Bool
	closed   sync.Once
	closeErr error

	applyMu sync.Mutex // serialises ApplyRules

	mu        sync.Mutex
	loaded    bool
	extLabels labels.Labels
	lastDSErr string
	rules     map[promrules.Rule]*ruleState
	groups    map[*promrules.Group]*groupState
	health    dsHealth
}

// RuleSettings are the global settings ApplyRules applies with the rules.
type RuleSettings struct {
	// EvaluationInterval of groups that set none; zero means
	// Options.EvaluationInterval.
	EvaluationInterval time.Duration
	// ExternalLabels (global.external_labels): $externalLabels in
	// templates and added to every notification.
	ExternalLabels labels.Labels
}

// New validates opts, fills defaults, and opens the state storage. It
// starts nothing: call Run.
func New(opts Options) (*Engine, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	var extURL *url.URL
	if opts.ExternalURL != "" {
		extURL, _ = url.Parse(opts.ExternalURL)
	}
	if err := os.MkdirAll(opts.StoragePath, 0o750); err != nil {
		return nil, fmt.Errorf("engine: storage path: %w", err)
	}
	db, err := openState(filepath.Join(opts.StoragePath, "alerts"), opts.Logger, opts.OutageTolerance)
	if err != nil {
		return nil, err
	}
	sent, err := openSentLog(filepath.Join(opts.StoragePath, "sent.json"))
	if err != nil {
		// A damaged sent log costs at most a duplicate notification: warn
		// and start with an empty one rather than refuse to start.
		opts.Logger.Warn("sent log unreadable, starting empty", "err", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		opts:   opts,
		logger: opts.Logger,
		db:     db,
		sent:   sent,
		ctx:    ctx,
		cancel: cancel,
		rules:  map[promrules.Rule]*ruleState{},
		groups: map[*promrules.Group]*groupState{},
		health: dsHealth{failures: map[string]int{}},
	}
	p := parser.NewParser(parser.Options{})
	e.loader = newLoader(p)
	e.metrics = newMetrics(opts.Registerer, e)
	e.mgr = promrules.NewManager(&promrules.ManagerOptions{
		ExternalURL:            extURL,
		QueryFunc:              e.query,
		NotifyFunc:             e.notifyFromRules,
		Context:                ctx,
		AppendableV2:           stateAppendable{db},
		Queryable:              db,
		Logger:                 opts.Logger.With("component", "rules"),
		Registerer:             opts.Registerer,
		OutageTolerance:        opts.OutageTolerance,
		ForGracePeriod:         opts.ForGracePeriod,
		ResendDelay:            opts.ResendDelay,
		GroupLoader:            e.loader,
		DefaultRuleQueryOffset: func() time.Duration { return opts.DefaultQueryOffset },
		Parser:                 p,
	})
	return e, nil
}

// Run evaluates the loaded groups until ctx ends, then stops them, saves
// state and closes the storage. It may be called once.
func (e *Engine) Run(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return errors.New("engine: Run called twice")
	}
	var wg sync.WaitGroup
	wg.Go(e.mgr.Run)
	wg.Go(func() { e.probe(ctx) })
	<-ctx.Done()
	e.cancel() // abort queries in flight
	e.mgr.Stop()
	wg.Wait()
	return e.closeStorage()
}

// Close releases the storage of an engine that was never run. After Run
// it does nothing.
func (e *Engine) Close() error {
	if e.started.CompareAndSwap(false, true) {
		// Start and stop the manager so that loaded groups, which wait for
		// the start, end.
		var wg sync.WaitGroup
		wg.Go(e.mgr.Run)
		e.cancel()
		e.mgr.Stop()
		wg.Wait()
		return e.closeStorage()
	}
	return nil
}

func (e *Engine) closeStorage() error {
	e.closed.Do(func() {
		var errs []error
		if err := e.sent.flush(); err != nil {
			errs = append(errs, fmt.Errorf("engine: save sent log: %w", err))
		}
		if err := e.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("engine: close state storage: %w", err))
		}
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

// ApplyRules loads the rule files (globs allowed) and replaces the running
// groups. It checks every file first and returns all their errors
// (path:line:col) without touching the running rules when any fails.
// Groups whose content did not change keep running with their state;
// changed groups keep the state of rules that did not change.
func (e *Engine) ApplyRules(patterns []string, s RuleSettings) error {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	files, err := expand(patterns)
	if err != nil {
		return fmt.Errorf("previous rules kept: %w", err)
	}
	if err := e.loader.prepare(files); err != nil {
		return fmt.Errorf("previous rules kept: %w", err)
	}
	interval := s.EvaluationInterval
	if interval <= 0 {
		interval = e.opts.EvaluationInterval
	}
	ext := s.ExternalLabels.Copy()
	// The groups read the external labels as soon as they run.
	e.mu.Lock()
	e.extLabels = ext
	e.mu.Unlock()
	if err := e.mgr.Update(interval, files, ext, e.opts.ExternalURL, e.iterate); err != nil {
		return fmt.Errorf("previous rules kept: %w", err)
	}
	e.mu.Lock()
	e.loaded = true
	e.pruneLocked()
	e.mu.Unlock()
	e.logger.Info("rules applied", "files", len(files), "groups", len(e.mgr.RuleGroups()))
	return nil
}

// pruneLocked forgets the state of rules and groups that are gone.
func (e *Engine) pruneLocked() {
	liveGroups := map[*promrules.Group]bool{}
	liveRules := map[promrules.Rule]bool{}
	for _, g := range e.mgr.RuleGroups() {
		liveGroups[g] = true
		for _, r := range g.Rules() {
			liveRules[r] = true
		}
	}
	for g := range e.groups {
		if !liveGroups[g] {
			delete(e.groups, g)
		}
	}
	for r := range e.rules {
		if !liveRules[r] {
			delete(e.rules, r)
		}
	}
	keys := map[string]bool{}
	for g := range liveGroups {
		keys[promrules.GroupKey(g.File(), g.Name())] = true
	}
	for k := range e.health.failures {
		if !keys[k] {
			delete(e.health.failures, k)
		}
	}
}

// RuleGroups returns the running groups, sorted by file and name, in
// Prometheus's own type (for the /api/v1/rules and /api/v1/alerts views).
func (e *Engine) RuleGroups() []*promrules.Group {
	return e.mgr.RuleGroups()
}

// Ready reports whether rules are loaded and the datasource has answered
// at least once; otherwise it says why not.
func (e *Engine) Ready() (bool, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.loaded {
		return false, "rules are not loaded yet"
	}
	if !e.answered.Load() {
		if e.lastDSErr != "" {
			return false, fmt.Sprintf("datasource %s has not answered yet: %s", e.opts.DatasourceName, e.lastDSErr)
		}
		return false, fmt.Sprintf("datasource %s has not answered yet", e.opts.DatasourceName)
	}
	return true, ""
}

// probe queries the datasource until it has answered once, so that Ready
// turns true even before the first evaluation and says why not otherwise.
func (e *Engine) probe(ctx context.Context) {
	t := time.NewTicker(e.opts.ProbeInterval)
	defer t.Stop()
	for !e.answered.Load() {
		qctx, cancel := context.WithTimeout(ctx, e.opts.ProbeInterval)
		_, _ = e.query(qctx, "vector(1)", time.Now())
		cancel()
		if e.answered.Load() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
