// Package embedded is paged's embedded datasource: it scrapes the LLM
// servers itself with Prometheus's scrape manager, keeps the samples in a
// local Prometheus TSDB, and answers the rule engine's PromQL with
// Prometheus's query engine over that TSDB.
//
// Nothing here re-implements a scraper, a discovery or a storage: service
// discovery (static_configs included) is Prometheus's discovery manager,
// the scrape loops, relabelling, staleness markers, the synthetic up /
// scrape_duration_seconds / scrape_samples_scraped series and the limits
// are github.com/prometheus/prometheus/scrape; retention, the WAL and
// compaction are github.com/prometheus/prometheus/tsdb. Scrape configs
// are Prometheus's own *config.ScrapeConfig, verbatim (PromScrapeConfigs),
// or a shorthand for static jobs (ScrapeConfigs) rendered through
// Prometheus's config loader. This package adds the Keep filter (store
// only the metrics the rules read, as a last metric_relabel_config), paged's
// default limits, and owns the goroutines and the TSDB's lifetime.
//
// Usage:
//
//	emb, err := embedded.New(embedded.Options{StoragePath: dir, ScrapeConfigs: ...})
//	ds := emb.Datasource(embedded.QueryOptions{})   // an engine.Datasource
//	go emb.Run(ctx)                                  // until ctx ends; closes the TSDB
//	err = emb.Apply(embedded.Scrape{...})            // new scrape configs or Keep filter
//	err = emb.SetKeep(embedded.KeepFor(exprs...))    // after a rule reload
//	emb.Targets()                                    // scrape health for the API/UI
package embedded
