package web

import (
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/engine/embedded"
	"github.com/pagedhq/paged/rules"
)

// The engine's views that the pages and the query API read: optional
// interfaces, so that test engines need not implement them.

// builtinLister is implemented by engines that raise built-in alerts
// (PagedDatasourceDown and the like).
type builtinLister interface {
	BuiltinAlerts() []*rules.Alert
}

// rangeQuerier is implemented by engines that answer range queries over
// their datasource (for /graph).
type rangeQuerier interface {
	RangeSource() backtest.Source
}

// embeddedStore is implemented by engines that own the embedded TSDB
// (for the Prometheus query API).
type embeddedStore interface {
	EmbeddedStorage() (storage.Queryable, *promql.Engine, *embedded.Embedded)
}

// datasourceStatuser is implemented by engines that report the
// datasource's health.
type datasourceStatuser interface {
	DatasourceStatus() engine.DatasourceStatus
}
