package embedded

import (
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/scrape"
	"github.com/prometheus/prometheus/tsdb"
)

// DB is the TSDB the targets are scraped into, for Prometheus's HTTP API
// (web/api/v1) over the embedded mode. Read it; do not close it (Run
// does).
func (e *Embedded) DB() *tsdb.DB { return e.db }

// ScrapeManager is the scrape manager, for the API's targets, metadata
// and scrape pools.
func (e *Embedded) ScrapeManager() *scrape.Manager { return e.scraper }

// PrometheusConfig is the Prometheus configuration the scrape manager
// runs (global settings and scrape_configs).
func (e *Embedded) PrometheusConfig() (*config.Config, error) {
	o := e.Options()
	return prometheusConfig(&o)
}
