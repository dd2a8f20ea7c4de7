package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/pagedhq/paged/internal/durable"
)

// Engine evaluates rule groups against a Datasource and hands alerts to
// Options.Notify. Create it with New, load rules with ApplyRules (before or
// after Run), and call Run once.
type Engine struct {
	opts     Options
	logger   *slog.Logger
	state    *stateStore
	mgr      *promrules.Manager
	loader   *loader
	metrics  *metrics
	x        *expander
	builtin  *builtinAlerts
	noSeries *noSeries
	fresh    *freshGate
	align    *aligner // nil unless Options.AlignToScrapes

	ctx    context.Context // the rules manager's; canceled when Run ends
	cancel context.CancelFunc

	answered atomic.Bool // the datasource answered at least once
	started  atomic.Bool
	closed   sync.Once
	closeErr error

	applyMu sync.Mutex                // serialises ApplyRules
	stores  map[storeKey]*sampleStore // under applyMu

	mu        sync.Mutex
	loaded    bool
	extLabels labels.Labels
	lastDSErr string
	rules     map[promrules.Rule]*ruleState
	groups    map[*promrules.Group]*groupState
	pending   map[string]*groupPlan // by group key, while the manager swaps groups
	toPrime   map[string]primeKind  // groups to restore from the store before they evaluate
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
	// NoSeriesAfter (global.no_series_after) is how long a selector of a
	// rule may match no series before PagedRuleNoSeries fires for it
	// (noseries.go). 0 turns the check off; paged.yaml's default is 30m.
	NoSeriesAfter time.Duration
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
	if err := durable.MakeStorageDir(opts.StoragePath); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	state, err := openStateStore(opts.StoragePath, opts.Reporter, opts.Logger.With("component", "state"))
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		opts:    opts,
		logger:  opts.Logger,
		state:   state,
		ctx:     ctx,
		cancel:  cancel,
		rules:   map[promrules.Rule]*ruleState{},
		groups:  map[*promrules.Group]*groupState{},
		toPrime: map[string]primeKind{},
		health:  dsHealth{failures: map[string]int{}},
	}
	if h := state.savedHealth(); h.down {
		e.health.down, e.health.downSince, e.health.lastSent = true, h.downSince, h.lastSent
	}
	appendable := opts.Appendable
	if appendable == nil {
		appendable = discard{}
	}
	p := parser.NewParser(parser.Options{})
	e.loader = newLoader(p)
	e.x = &expander{
		query:       e.query,
		externalURL: opts.ExternalURL,
		extURL:      extURL,
		logf:        opts.Logger.With("component", "rules").Warn,
	}
	e.metrics = newMetrics(opts.Registerer, e)
	e.mgr = promrules.NewManager(&promrules.ManagerOptions{
		ExternalURL:            extURL,
		QueryFunc:              e.query,
		NotifyFunc:             e.notifyFromRules,
		Context:                ctx,
		AppendableV2:           appendable,
		Queryable:              noRestore,
		Logger:                 opts.Logger.With("component", "rules"),
		Registerer:             opts.Registerer,
		OutageTolerance:        opts.OutageTolerance,
		ResendDelay:            opts.ResendDelay,
		GroupLoader:            e.loader,
		DefaultRuleQueryOffset: func() time.Duration { return opts.DefaultQueryOffset },
		Parser:                 p,
		// No ConcurrentEvalsEnabled or RuleConcurrencyController: the
		// rules of a group are evaluated one after another, which
		// ruledef.go relies on to tell which rule a query belongs to.
	})
	e.builtin = newBuiltinAlerts(e)
	e.noSeries = newNoSeries(e)
	e.fresh = newFreshGate()
	if opts.AlignToScrapes {
		e.align = newAligner(e)
	}
	return e, nil
}

// Run evaluates the loaded groups until ctx ends, then stops them, saves
// state and closes the storage. It may be called once.
func (e *Engine) Run(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return errors.New("engine: Run called twice")
	}
	// Replay what was missed while paged was down, then tell the
	// receivers (which lost what they held if they restarted too) about
	// the restored firing alerts, before the groups evaluate.
	now := time.Now()
	e.catchUpAll(ctx, now)
	e.announceRestored(ctx, now)
	var wg sync.WaitGroup
	wg.Go(e.mgr.Run)
	wg.Go(func() { e.probe(ctx) })
	wg.Go(func() { e.builtin.run(ctx) })
	wg.Go(func() { e.noSeries.run(ctx) })
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
		if err := e.state.close(); err != nil {
			e.closeErr = fmt.Errorf("engine: close alert state: %w", err)
		}
	})
	return e.closeErr
}

// ApplyRules loads the rule files (globs allowed) and replaces the running
// groups. It checks every file first and returns all their errors
// (path:line:col) without touching the running rules when any fails.
// Groups whose content did not change keep running with their state;
// changed groups keep the state of rules that did not change.
func (e *Engine) ApplyRules(patterns []string, s RuleSettings) error {
	return e.ApplyRuleSources(patterns, nil, s)
}

// RuleSource is rule groups that do not come from a file on disk: a rule
// pack with the overrides of paged.yaml applied (package packs).
type RuleSource struct {
	// Name stands where a file name goes: the groups' "file" in the rules
	// API and in their state ("pack:vllm"). It must not be the name of a
	// rule file too.
	Name   string
	Groups *rulefmt.RuleGroups
	// KeepLabels are the labels of the matchers the pack's selector
	// override adds: the no-series check keeps them on every selector of
	// the source, as it keeps job and instance.
	KeepLabels []string
}

// ApplyRuleSources is ApplyRules with rule groups from sources beside the
// files. The sources' groups are checked as the manager checks a file's
// (every expression parses) before anything changes.
func (e *Engine) ApplyRuleSources(patterns []string, sources []RuleSource, s RuleSettings) error {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	e.mu.Lock()
	kept := e.loaded
	e.mu.Unlock()
	fail := func(err error) error { return &LoadError{Kept: kept, Err: err} }
	files, err := expand(patterns)
	if err != nil {
		return fail(err)
	}
	parsed, err := e.loader.parseAll(files)
	if err != nil {
		return fail(err)
	}
	if err := e.loader.addSources(parsed, sources); err != nil {
		return fail(err)
	}
	for _, src := range sources {
		files = append(files, src.Name)
	}
	interval := s.EvaluationInterval
	if interval <= 0 {
		interval = e.opts.EvaluationInterval
	}
	ext := s.ExternalLabels.Copy()
	plan, stores, err := split(files, parsed, e.loader.parser, ext, e.stores)
	if err != nil {
		return fail(err)
	}
	e.loader.serveFrom(plan.manager)
	running := map[string]bool{}
	for _, g := range e.mgr.RuleGroups() {
		running[promrules.GroupKey(g.File(), g.Name())] = true
	}
	// New groups start evaluating before Update returns: until they are
	// registered below they find their plan by group key. The groups read
	// the external labels as soon as they run. A group new to this run
	// restores the state the store has for it.
	e.mu.Lock()
	oldExt := e.extLabels
	e.extLabels = ext
	e.pending = plan.groups
	for key := range plan.groups {
		switch {
		case running[key]:
			e.toPrime[key] = primeReload // used if Update replaces the group
		case e.state.loaded(key) != nil:
			e.toPrime[key] = primeFromDisk
		}
	}
	e.mu.Unlock()
	if err := e.mgr.Update(interval, files, ext, e.opts.ExternalURL, e.iterate); err != nil {
		e.mu.Lock()
		e.extLabels, e.pending = oldExt, nil
		clear(e.toPrime)
		e.mu.Unlock()
		return fail(err)
	}
	e.stores = stores
	e.mu.Lock()
	// Kept groups (equal for the manager) take the new plan too: their
	// labels or annotations may have changed.
	for _, g := range e.mgr.RuleGroups() {
		e.groupStateLocked(g).plan = plan.groups[promrules.GroupKey(g.File(), g.Name())]
	}
	e.pending = nil
	e.pruneLocked()
	e.mu.Unlock()
	keep := map[string]bool{}
	for _, g := range e.mgr.RuleGroups() {
		e.primeGroup(e.ctx, g)
		keep[promrules.GroupKey(g.File(), g.Name())] = true
	}
	e.mu.Lock()
	clear(e.toPrime) // groups kept as they were
	e.mu.Unlock()
	e.state.dropGroups(keep)
	if e.align != nil {
		e.align.forget(keep)
	}
	keepLabels := map[string][]string{}
	for _, src := range sources {
		keepLabels[src.Name] = src.KeepLabels
	}
	e.noSeries.apply(s.NoSeriesAfter, keepLabels)
	e.mu.Lock()
	e.loaded = true
	e.mu.Unlock()
	e.logger.Info("rules applied", "files", len(files), "groups", len(e.mgr.RuleGroups()))
	return nil
}

// groupStateLocked returns paged's state of g, creating it.
func (e *Engine) groupStateLocked(g *promrules.Group) *groupState {
	gs := e.groups[g]
	if gs == nil {
		gs = &groupState{}
		e.groups[g] = gs
	}
	return gs
}

// discard is the rules manager's storage with a remote datasource:
// recorded series and the ALERTS series would be read by nothing.
type discard struct{}

func (discard) AppenderV2(context.Context) storage.AppenderV2 { return discardAppender{} }

type discardAppender struct{}

func (discardAppender) Append(ref storage.SeriesRef, _ labels.Labels, _, _ int64, _ float64, _ *histogram.Histogram, _ *histogram.FloatHistogram, _ storage.AOptions) (storage.SeriesRef, error) {
	return ref, nil
}
func (discardAppender) Commit() error   { return nil }
func (discardAppender) Rollback() error { return nil }

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

// planFor returns the plan of a running group.
func (e *Engine) planFor(g *promrules.Group) *groupPlan {
	e.mu.Lock()
	defer e.mu.Unlock()
	if gs := e.groups[g]; gs != nil && gs.plan != nil {
		return gs.plan
	}
	return e.pending[promrules.GroupKey(g.File(), g.Name())]
}

// defFor returns the definition of rule r of group g, nil when Prometheus
// keeps r's labels and annotations itself.
func (e *Engine) defFor(g *promrules.Group, r promrules.Rule) *ruleDef {
	p := e.planFor(g)
	if p == nil {
		return nil
	}
	for i, gr := range g.Rules() {
		if gr == r {
			return p.def(i, r)
		}
	}
	return nil
}

// RuleDefinition returns the labels (group labels merged) and annotation
// templates of rule r of group g as its file has them.
func (e *Engine) RuleDefinition(g *promrules.Group, r promrules.Rule) (lbls, annotations labels.Labels) {
	if def := e.defFor(g, r); def != nil {
		return def.labels, def.annotations
	}
	if ar, ok := r.(*promrules.AlertingRule); ok {
		return ar.Labels(), ar.Annotations()
	}
	return r.Labels(), labels.EmptyLabels()
}

// ActiveAlerts returns copies of the active alerts of rule r of group g,
// with their annotations.
func (e *Engine) ActiveAlerts(ctx context.Context, g *promrules.Group, r *promrules.AlertingRule) []*promrules.Alert {
	active := r.ActiveAlerts()
	def := e.defFor(g, r)
	if def == nil {
		return active
	}
	for _, a := range active {
		a.Annotations = e.x.annotations(ctx, def, a)
	}
	return active
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
