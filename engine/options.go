package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/storage"

	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/rules"
)

// Options configure an Engine. New fills the defaults.
type Options struct {
	// Datasource answers the rules' queries. Required.
	Datasource Datasource
	// DatasourceName names the datasource in PagedDatasourceDown and in
	// Ready's reason, e.g. the URL without credentials (RedactURL).
	DatasourceName string
	// StoragePath is the directory of the alert state (statestore.go, in
	// its alert-state subdirectory). Required; it must be writable.
	StoragePath string
	// Reporter receives corrupt state files moved aside and write
	// failures (shared with the notifier, whose state lives beside); the
	// engine raises PagedStateCorrupted and PagedStateWriteFailing from
	// it. Nil: a reporter of the engine's own, without metrics.
	Reporter *durable.Reporter
	// Appendable receives recorded series and the ALERTS and
	// ALERTS_FOR_STATE series (the embedded TSDB). Nil discards them.
	Appendable storage.AppendableV2
	// Notify receives the alerts due to be sent. Nil discards them.
	Notify rules.NotifyFunc
	// History receives the alerts' changes of state, alerts going stale
	// and fresh, and the datasource's outages (a *history.Store). Nil
	// records nothing.
	History HistoryRecorder
	// ReloadFailed, when set, tells the reload of the configuration that
	// failed with none succeeding since; the engine raises
	// PagedReloadFailed while it answers true.
	ReloadFailed func() (ReloadFailure, bool)

	// EvaluationInterval is the default interval of groups that set none
	// (global.evaluation_interval). Default 30s.
	EvaluationInterval time.Duration
	// ExternalURL is paged's own URL, $externalURL in templates and the
	// base of generator URLs unless GeneratorBaseURL is set.
	ExternalURL string
	// GeneratorBaseURL is the base of each alert's GeneratorURL (the
	// expression's graph). Default ExternalURL.
	GeneratorBaseURL string
	// GeneratorURL, when set, writes each alert's GeneratorURL from its
	// rule's expression instead of GeneratorBaseURL.
	GeneratorURL func(expr string) string

	// ResendDelay is how often an active alert is re-sent. Default 1m.
	ResendDelay time.Duration
	// OutageTolerance is the longest paged downtime after which the
	// stored alert state is still restored. Default 1h.
	OutageTolerance time.Duration
	// DefaultQueryOffset applies to groups without query_offset.
	DefaultQueryOffset time.Duration
	// DatasourceDownAfter is the number of consecutive evaluations of a
	// group in which every query failed for lack of an answer before
	// PagedDatasourceDown fires. Default 3.
	DatasourceDownAfter int
	// DatasourceDownRunbookURL is the runbook_url annotation of
	// PagedDatasourceDown. Default "paged/PagedDatasourceDown" (relative:
	// resolved like the packs' runbook URLs).
	DatasourceDownRunbookURL string
	// AlignToScrapes moves each group's evaluations to just after the
	// data it reads has been scraped (align.go), learned from the
	// samples' timestamps: at most one extra query per group per
	// evaluation while learning, one per ten evaluations after.
	AlignToScrapes bool
	// CombineQueries sends the queries of a group's alerting rules
	// together where it can, up to ten to a query (combine.go): one HTTP
	// round trip for ten rules instead of one per rule. For remote
	// datasources.
	CombineQueries bool
	// ProbeInterval is how often the datasource is probed until it has
	// answered once. Default 5s.
	ProbeInterval time.Duration

	// Logger; nil discards.
	Logger *slog.Logger
	// Registerer receives the rules manager's metrics and paged's own;
	// nil registers nothing.
	Registerer prometheus.Registerer
}

func (o *Options) validate() error {
	var errs []error
	if o.Datasource == nil {
		errs = append(errs, errors.New("engine: a datasource is required"))
	}
	if o.StoragePath == "" {
		errs = append(errs, errors.New("engine: storage path is required"))
	}
	if o.ExternalURL != "" {
		if _, err := url.Parse(o.ExternalURL); err != nil {
			errs = append(errs, fmt.Errorf("engine: external url: %w", err))
		}
	}
	for name, d := range map[string]time.Duration{
		"evaluation interval": o.EvaluationInterval, "resend delay": o.ResendDelay,
		"outage tolerance": o.OutageTolerance,
		"query offset":     o.DefaultQueryOffset, "probe interval": o.ProbeInterval,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("engine: %s must not be negative", name))
		}
	}
	if o.DatasourceDownAfter < 0 {
		errs = append(errs, errors.New("engine: datasource down threshold must not be negative"))
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.EvaluationInterval == 0 {
		o.EvaluationInterval = 30 * time.Second
	}
	if o.ResendDelay == 0 {
		o.ResendDelay = time.Minute
	}
	if o.OutageTolerance == 0 {
		o.OutageTolerance = time.Hour
	}
	if o.DatasourceDownAfter == 0 {
		o.DatasourceDownAfter = 3
	}
	if o.DatasourceDownRunbookURL == "" {
		o.DatasourceDownRunbookURL = "paged/PagedDatasourceDown"
	}
	if o.ProbeInterval == 0 {
		o.ProbeInterval = 5 * time.Second
	}
	if o.GeneratorBaseURL == "" {
		o.GeneratorBaseURL = o.ExternalURL
	}
	if o.DatasourceName == "" {
		if s, ok := o.Datasource.(fmt.Stringer); ok {
			o.DatasourceName = s.String()
		} else {
			o.DatasourceName = "datasource"
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Reporter == nil {
		o.Reporter = durable.NewReporter(o.StoragePath, o.Logger.With("component", "state"), nil)
	}
	if o.Notify == nil {
		o.Notify = func(context.Context, []*rules.Alert) {}
	}
}
