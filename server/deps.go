package server

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/rules"
)

// Engine is what the server needs from the rule engine; *engine.Engine
// satisfies it.
type Engine interface {
	// Run evaluates the rule groups until ctx is cancelled.
	Run(ctx context.Context) error
	// ApplyRules loads cfg's rule files with its global settings
	// (evaluation interval, external labels); on failure the old rules
	// keep running.
	ApplyRules(cfg *config.Config) error
	// RuleGroups returns the loaded groups with their live state.
	RuleGroups() []*promrules.Group
	// Ready reports whether rules are loaded and the datasource answered,
	// and why not.
	Ready() (bool, string)
}

// Notifier is what the server needs from the notifier; *notifier.Notifier
// satisfies it.
type Notifier interface {
	Run(ctx context.Context) error
	Notify(ctx context.Context, alerts []*rules.Alert)
	ApplyConfig(*notifier.Config) error
	APIHandler() http.Handler
}

// Deps is what the server hands to the factories.
type Deps struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Notify delivers the engine's alerts: the notifier's Notify, or nil
	// when there is no notifier (the engine then prints alerts).
	Notify rules.NotifyFunc
	// Reporter reports the state files under storage.path that are
	// corrupt (moved aside) or cannot be written, for the notifier and
	// the engine alike (paged_state_corruptions_total,
	// paged_state_write_failures_total).
	Reporter *durable.Reporter
	// ReloadFailed tells the configuration reload that failed with none
	// succeeding since, for the engine's PagedReloadFailed.
	ReloadFailed func() (engine.ReloadFailure, bool)
	// History records what the engine and the notifier do; nil when the
	// history could not be opened (a nil store records nothing).
	History *history.Store
}

// EngineFactory builds the engine for a loaded configuration.
type EngineFactory func(cfg *config.Config, deps Deps) (Engine, error)

// NotifierFactory builds the notifier for a loaded configuration. It returns
// nil, nil when the configuration has no notifier block.
type NotifierFactory func(cfg *config.Config, deps Deps) (Notifier, error)
