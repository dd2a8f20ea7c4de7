package server

import (
	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/notifier"
)

// NewNotifier is the default NotifierFactory: paged's embedded Alertmanager
// with state under storage.path.
func NewNotifier(cfg *config.Config, deps Deps) (Notifier, error) {
	if cfg.NotifierConfig == nil {
		return nil, nil
	}
	// No AuthToken: web's requireToken guards /api/v2 like every
	// other route, with the token in effect (a reload rotates it) and
	// knowing about basic auth.
	opts := notifier.Options{
		Config:      cfg.NotifierConfig,
		StoragePath: cfg.Storage.Path,
		ExternalURL: cfg.Global.ExternalURL.String(),
		Logger:      deps.Logger,
		Registerer:  deps.Registerer,
		Reporter:    deps.Reporter,
		History:     deps.History,
		Cluster:     config.NotifierCluster(cfg.Cluster),
	}
	if cfg.RunbookBaseURL != nil {
		opts.RunbookBaseURL = cfg.RunbookBaseURL.String()
	}
	n, err := notifier.New(opts)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// chartSource gives the notifier the engine's range queries (the embedded
// TSDB's, or the datasource's query_range) for the charts of its Slack
// messages.
func chartSource(n Notifier, eng Engine) {
	cs, ok := n.(interface{ SetChartSource(notifier.ChartSource) })
	if !ok {
		return
	}
	if rs, ok := eng.(interface{ RangeSource() backtest.Source }); ok && rs.RangeSource() != nil {
		cs.SetChartSource(rs.RangeSource())
	}
}
