package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/engine/embedded"
	"github.com/pagedhq/paged/packs"
	"github.com/pagedhq/paged/rules"
)

// DefaultEngineFactory builds paged's rule engine over the configured
// datasource: a remote Prometheus-compatible API, or the embedded scraper
// and TSDB (kept under storage.path/metrics, apart from the alert state).
func DefaultEngineFactory(cfg *config.Config, deps Deps) (Engine, error) {
	a := &engineAdapter{}
	opts := engine.Options{
		StoragePath:         cfg.Storage.Path,
		Notify:              deps.Notify,
		EvaluationInterval:  cfg.Global.EvaluationInterval,
		ResendDelay:         cfg.Global.ResendDelay,
		AlignToScrapes:      cfg.Global.AlignEvaluations,
		ExternalURL:         cfg.Global.ExternalURL.String(),
		GeneratorURL:        config.GeneratorURL(cfg),
		DatasourceDownAfter: cfg.Datasource.DownAfterFailures,
		Logger:              deps.Logger,
		Registerer:          deps.Registerer,
		Reporter:            deps.Reporter,
		ReloadFailed:        deps.ReloadFailed,
	}
	if deps.History != nil {
		opts.History = deps.History
	}
	switch cfg.Datasource.Type {
	case config.DatasourceEmbedded:
		e := cfg.Datasource.Embedded
		eo := embedded.Options{
			StoragePath:    filepath.Join(cfg.Storage.Path, "metrics"),
			ScrapeInterval: e.ScrapeInterval,
			Retention:      e.Retention,
			Logger:         deps.Logger,
			Registerer:     deps.Registerer,
		}
		eo.PromScrapeConfigs = e.ScrapeConfigs
		eo.ScrapeTimeout = e.ScrapeTimeout
		if e.Keep != config.KeepAll {
			eo.Keep = &embedded.Keep{} // until the rules are loaded: only the scrape health series
		}
		emb, err := embedded.New(eo)
		if err != nil {
			return nil, err
		}
		a.emb = emb
		qo := embedded.QueryOptions{
			EvaluationInterval: cfg.Global.EvaluationInterval,
			Timeout:            e.Query.Timeout,
			MaxSamples:         e.Query.MaxSamples,
			LookbackDelta:      e.Query.LookbackDelta,
		}
		a.queryEngine = emb.QueryEngine(qo)
		a.ranges = backtest.NewQueryable(a.queryEngine, emb.Queryable())
		opts.Datasource = emb.Datasource(qo)
		opts.Appendable = emb.AppendableV2()
		opts.DatasourceName = "embedded TSDB"
	default:
		p := cfg.Datasource.Prometheus
		remote, err := engine.NewRemote(engine.RemoteOptions{URL: p.URL.String(), Timeout: p.Timeout, HTTPConfig: p.HTTPConfig})
		if err != nil {
			return nil, err
		}
		opts.Datasource = remote
		opts.DatasourceName = remote.String()
		if rr, err := backtest.NewRemote(engine.RemoteOptions{URL: p.URL.String(), Timeout: p.Timeout, HTTPConfig: p.HTTPConfig}); err == nil {
			a.ranges = rr
		}
		opts.CombineQueries = p.CombineQueries
	}
	eng, err := engine.New(opts)
	if err != nil {
		if a.emb != nil {
			err = errors.Join(err, a.emb.Close())
		}
		return nil, err
	}
	a.eng = eng
	return a, nil
}

// engineAdapter runs the engine and, in embedded mode, the scraper that
// feeds it, as one Engine.
type engineAdapter struct {
	eng *engine.Engine
	emb *embedded.Embedded // nil with a remote datasource
	// ranges answers /graph's range queries; queryEngine is the embedded
	// mode's PromQL engine (nil with a remote datasource).
	ranges      backtest.Source
	queryEngine *promql.Engine
}

func (a *engineAdapter) Run(ctx context.Context) error {
	if a.emb == nil {
		return a.eng.Run(ctx)
	}
	var wg sync.WaitGroup
	var embErr error
	wg.Go(func() { embErr = a.emb.Run(ctx) })
	engErr := a.eng.Run(ctx)
	wg.Wait()
	return errors.Join(engErr, embErr)
}

func (a *engineAdapter) ApplyRules(cfg *config.Config) error {
	if err := a.eng.ApplyRuleSources(cfg.RuleFilePaths, cfg.PackSources(), engine.RuleSettings{
		EvaluationInterval: cfg.Global.EvaluationInterval,
		ExternalLabels:     cfg.Global.ExternalLabels,
		NoSeriesAfter:      cfg.Global.NoSeriesAfter,
	}); err != nil {
		return err
	}
	if a.emb == nil {
		return nil
	}
	// The scrape configs and the keep filter, as a Prometheus reload
	// applies scrape_configs: only jobs whose configuration changed
	// restart.
	var keep *embedded.Keep
	if cfg.Datasource.Embedded.Keep != config.KeepAll {
		exprs := ruleExprs(a.eng.RuleGroups())
		for _, p := range cfg.Packs {
			exprs = append(exprs, dashboardExprs(p.Rendered)...)
		}
		keep = embedded.KeepFor(exprs...)
	}
	cur := a.emb.Options()
	if sameKeep(keep, cur.Keep) && reflect.DeepEqual(cfg.Datasource.Embedded.ScrapeConfigs, cur.PromScrapeConfigs) {
		return nil
	}
	if err := a.emb.Apply(embedded.Scrape{PromScrapeConfigs: cfg.Datasource.Embedded.ScrapeConfigs, Keep: keep}); err != nil {
		return fmt.Errorf("embedded scrape configs: %w", err)
	}
	return nil
}

// dashboardVar is a variable of a generated dashboard's query.
var dashboardVar = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)

// dashboardExprs lists the queries of a pack's generated Grafana
// dashboard (paged export --format grafana), with its variables
// replaced: with keep: referenced, the metrics its panels chart are kept
// too, so the dashboard has data in embedded mode.
func dashboardExprs(r *packs.Rendered) []parser.Expr {
	if r == nil {
		return nil
	}
	d, err := packs.GrafanaDashboard(r)
	if err != nil {
		return nil
	}
	p := parser.NewParser(parser.Options{})
	var out []parser.Expr
	for _, panel := range d.Panels {
		for _, tg := range panel.Targets {
			q := strings.ReplaceAll(tg.Expr, "$__rate_interval", "5m")
			q = dashboardVar.ReplaceAllString(q, ".*")
			if e, err := p.ParseExpr(q); err == nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// ruleExprs lists the expressions of every rule of groups.
func ruleExprs(groups []*promrules.Group) []parser.Expr {
	var out []parser.Expr
	for _, g := range groups {
		for _, r := range g.Rules() {
			switch r := r.(type) {
			case *promrules.AlertingRule:
				out = append(out, r.Query())
			case *promrules.RecordingRule:
				out = append(out, r.Query())
			}
		}
	}
	return out
}

func sameKeep(a, b *embedded.Keep) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Names, b.Names) && slices.Equal(a.Patterns, b.Patterns)
}

// Targets returns the embedded scraper's targets; nil with a remote
// datasource.
func (a *engineAdapter) Targets() ([]embedded.Target, []embedded.DroppedTarget, map[string]int, bool) {
	if a.emb == nil {
		return nil, nil, nil, false
	}
	dropped, counts := a.emb.DroppedTargets()
	return a.emb.Targets(), dropped, counts, true
}

func (a *engineAdapter) RuleGroups() []*promrules.Group { return a.eng.RuleGroups() }

func (a *engineAdapter) Ready() (bool, string) { return a.eng.Ready() }

// RuleDefinition returns a rule's labels and annotations as written.
func (a *engineAdapter) RuleDefinition(g *promrules.Group, r promrules.Rule) (lbls, annotations labels.Labels) {
	return a.eng.RuleDefinition(g, r)
}

// ActiveAlerts returns a rule's active alerts with their annotations.
func (a *engineAdapter) ActiveAlerts(ctx context.Context, g *promrules.Group, r *promrules.AlertingRule) []*promrules.Alert {
	return a.eng.ActiveAlerts(ctx, g, r)
}

// IsStale reports whether the rule's query is failing and its alerts kept.
func (a *engineAdapter) IsStale(r promrules.Rule) bool { return a.eng.RuleStatus(r).Stale }

// Close releases the storage of an engine that never ran.
func (a *engineAdapter) Close() error {
	err := a.eng.Close()
	if a.emb != nil {
		err = errors.Join(err, a.emb.Close())
	}
	return err
}

func (a *engineAdapter) BuiltinAlerts() []*rules.Alert { return a.eng.BuiltinAlerts() }

func (a *engineAdapter) RangeSource() backtest.Source { return a.ranges }

func (a *engineAdapter) DatasourceStatus() engine.DatasourceStatus { return a.eng.DatasourceStatus() }

func (a *engineAdapter) EmbeddedStorage() (storage.Queryable, *promql.Engine, *embedded.Embedded) {
	if a.emb == nil {
		return nil, nil, nil
	}
	return a.emb.Queryable(), a.queryEngine, a.emb
}
