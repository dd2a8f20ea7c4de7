package embedded

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery"
	"github.com/prometheus/prometheus/scrape"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/util/compression"
)

// Embedded scrapes the configured targets into a local TSDB. Build it with
// New, read it through Queryable or Datasource, and drive it with Run,
// which owns every goroutine and closes the TSDB when it returns.
type Embedded struct {
	reg     *registerer
	db      *tsdb.DB
	scraper *scrape.Manager
	// discoverer runs every job's service discovery (static_configs
	// included) and hands the target groups to the scraper, as in
	// Prometheus. Its providers live until cancel.
	discoverer *discovery.Manager
	cancel     context.CancelFunc

	mu      sync.Mutex // guards opts and stopped, serialises Reload
	opts    Options
	stopped bool

	started   atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// New validates opts, opens (or reopens) the TSDB under opts.StoragePath
// and prepares the scrape manager. Nothing is scraped until Run.
func New(opts Options) (*Embedded, error) {
	opts.ScrapeConfigs = cloneConfigs(opts.ScrapeConfigs)
	opts.PromScrapeConfigs = slices.Clone(opts.PromScrapeConfigs)
	opts.Keep = opts.Keep.clone()
	if err := opts.fill(); err != nil {
		return nil, err
	}
	cfg, err := prometheusConfig(&opts)
	if err != nil {
		return nil, err
	}
	reg := &registerer{next: opts.Registerer, logger: opts.Logger}
	db, err := tsdb.Open(opts.StoragePath, opts.Logger.With("component", "tsdb"), reg, tsdbOptions(&opts), nil)
	if err != nil {
		reg.unregisterAll()
		return nil, fmt.Errorf("embedded: open storage %s: %w", opts.StoragePath, err)
	}
	fail := func(err error) (*Embedded, error) {
		err = errors.Join(err, db.Close())
		reg.unregisterAll()
		return nil, err
	}
	mgr, err := scrape.NewManager(&scrape.Options{
		// Sync targets as soon as discovery hands them over instead of
		// after the first 5s reload tick, and follow changes within 1s.
		DiscoveryReloadOnStartup: true,
		DiscoveryReloadInterval:  model.Duration(time.Second),
	}, opts.Logger.With("component", "scrape manager"), nil, nil, db, reg)
	if err != nil {
		return fail(fmt.Errorf("embedded: scrape manager: %w", err))
	}
	if err := mgr.ApplyConfig(cfg); err != nil {
		return fail(fmt.Errorf("embedded: scrape config: %w", err))
	}
	sdMetrics, err := discovery.CreateAndRegisterSDMetrics(reg)
	if err != nil {
		return fail(fmt.Errorf("embedded: discovery metrics: %w", err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	disc := discovery.NewManager(ctx, opts.Logger.With("component", "discovery manager scrape"), reg, sdMetrics,
		discovery.Name("scrape"), discovery.Updatert(time.Second))
	if disc == nil {
		cancel()
		return fail(errors.New("embedded: discovery manager could not be created (see log)"))
	}
	if err := disc.ApplyConfig(discoveryConfigs(cfg)); err != nil {
		cancel()
		return fail(fmt.Errorf("embedded: service discovery: %w", err))
	}
	return &Embedded{reg: reg, opts: opts, db: db, scraper: mgr, discoverer: disc, cancel: cancel}, nil
}

// tsdbOptions derives the TSDB's settings from the retention. The head
// block keeps up to 1.5 block ranges of samples in memory before they are
// compacted to disk, so the block range is what bounds memory per series;
// short retentions get a short range too.
func tsdbOptions(o *Options) *tsdb.Options {
	t := tsdb.DefaultOptions()
	t.RetentionDuration = o.Retention.Milliseconds()
	t.MaxBytes = o.RetentionSize
	// Prometheus's default (--storage.tsdb.wal-compression).
	t.WALCompression = compression.Snappy
	blockRange := 2 * time.Hour
	if r := (o.Retention / 4).Truncate(time.Minute); r < blockRange {
		blockRange = max(r, time.Minute)
	}
	t.MinBlockDuration = blockRange.Milliseconds()
	// As Prometheus: larger blocks up to a tenth of the retention.
	t.MaxBlockDuration = max(t.MinBlockDuration, min(o.Retention/10, 31*24*time.Hour).Milliseconds())
	return t
}

// Run scrapes until ctx ends, then stops the scrape loops and closes the
// TSDB, flushing its WAL so a later New on the same path sees the data.
// It may be called once.
func (e *Embedded) Run(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return errors.New("embedded: Run called twice")
	}
	done := make(chan error, 1)
	discDone := make(chan error, 1)
	go func() { discDone <- e.discoverer.Run() }()
	go func() { done <- e.scraper.Run(e.discoverer.SyncCh()) }()
	o := e.Options()
	o.Logger.Info("embedded scraping started", "jobs", len(o.ScrapeConfigs)+len(o.PromScrapeConfigs), "path", o.StoragePath)

	<-ctx.Done()
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	// The scraper stops first: it reads the discoverer's channel, and the
	// discoverer's sender would block on a reader that has gone.
	e.scraper.Stop()
	runErr := <-done
	e.cancel()
	<-discDone
	if err := e.Close(); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("embedded: scrape manager: %w", runErr)
	}
	return nil
}

// Reload replaces the scrape configurations, as a Prometheus reload does:
// new jobs and targets start, removed ones stop and their series get
// staleness markers, jobs whose settings changed restart their loops. The
// other options (storage, retention, limits, defaults) stay as they are.
// On any error nothing changes and the old configuration keeps running.
func (e *Embedded) Reload(configs []ScrapeConfig) error {
	return e.Apply(Scrape{ScrapeConfigs: configs, PromScrapeConfigs: e.Options().PromScrapeConfigs, Keep: e.Options().Keep})
}

// Scrape is the part of Options a reload may change.
type Scrape struct {
	ScrapeConfigs     []ScrapeConfig
	PromScrapeConfigs []*config.ScrapeConfig
	Keep              *Keep
}

// Apply replaces the scrape configurations and the Keep filter, as a
// Prometheus reload does: new jobs start their discovery and targets,
// removed ones stop and their series get staleness markers, jobs whose
// settings changed (a new Keep filter changes every job) restart their
// loops. On any error nothing changes and the old configuration keeps
// running.
func (e *Embedded) Apply(s Scrape) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return errors.New("embedded: reload after Run returned")
	}
	next := e.opts
	next.ScrapeConfigs = cloneConfigs(s.ScrapeConfigs)
	next.PromScrapeConfigs = slices.Clone(s.PromScrapeConfigs)
	next.Keep = s.Keep.clone()
	if err := next.fill(); err != nil {
		return err
	}
	cfg, err := prometheusConfig(&next)
	if err != nil {
		return err
	}
	if err := e.scraper.ApplyConfig(cfg); err != nil {
		return fmt.Errorf("embedded: apply scrape config: %w", err)
	}
	if err := e.discoverer.ApplyConfig(discoveryConfigs(cfg)); err != nil {
		return fmt.Errorf("embedded: apply service discovery: %w", err)
	}
	e.opts = next
	return nil
}

// SetKeep replaces the Keep filter only (after a rule reload).
func (e *Embedded) SetKeep(k *Keep) error {
	o := e.Options()
	return e.Apply(Scrape{ScrapeConfigs: o.ScrapeConfigs, PromScrapeConfigs: o.PromScrapeConfigs, Keep: k})
}

func (k *Keep) clone() *Keep {
	if k == nil {
		return nil
	}
	return &Keep{Names: slices.Clone(k.Names), Patterns: slices.Clone(k.Patterns)}
}

// cloneConfigs deep-copies configs so that fill's defaults never write
// into the caller's slices.
func cloneConfigs(configs []ScrapeConfig) []ScrapeConfig {
	out := make([]ScrapeConfig, len(configs))
	for i, sc := range configs {
		out[i] = sc
		out[i].StaticConfigs = make([]StaticConfig, len(sc.StaticConfigs))
		for j, st := range sc.StaticConfigs {
			out[i].StaticConfigs[j] = StaticConfig{Targets: slices.Clone(st.Targets), Labels: maps.Clone(st.Labels)}
		}
	}
	return out
}

// Close closes the TSDB. Run calls it on return; call it directly only for
// an Embedded that was never run. Queries after Close fail.
func (e *Embedded) Close() error {
	e.closeOnce.Do(func() {
		e.cancel()
		if err := e.db.Close(); err != nil {
			e.closeErr = fmt.Errorf("embedded: close storage: %w", err)
		}
		e.reg.unregisterAll()
	})
	return e.closeErr
}

// Queryable is the TSDB, for a PromQL engine.
func (e *Embedded) Queryable() storage.Queryable { return e.db }

// Appendable is the TSDB, for writing series next to the scraped ones
// (for example ALERTS). Prefer a separate storage for alert state.
func (e *Embedded) Appendable() storage.Appendable { return e.db }

// AppendableV2 is the TSDB for the rules engine: recorded series (and the
// ALERTS series) land next to the scraped ones, where rules and queries
// read them.
func (e *Embedded) AppendableV2() storage.AppendableV2 { return e.db }

// Options returns the options in effect, defaults filled.
func (e *Embedded) Options() Options {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.opts
	o.ScrapeConfigs = cloneConfigs(o.ScrapeConfigs)
	o.PromScrapeConfigs = slices.Clone(o.PromScrapeConfigs)
	o.Keep = o.Keep.clone()
	return o
}
