// Package embedded is paged's embedded datasource: it scrapes the LLM
// servers itself with Prometheus's scrape manager, keeps the samples in a
// local Prometheus TSDB, and answers the rule engine's PromQL with
// Prometheus's query engine over that TSDB.
//
// Nothing here re-implements a scraper or a storage: the scrape loops,
// staleness markers, the synthetic up / scrape_duration_seconds /
// scrape_samples_scraped series, sample and body-size limits are
// github.com/prometheus/prometheus/scrape; retention, the WAL and
// compaction are github.com/prometheus/prometheus/tsdb. This package turns
// paged's small scrape configuration (job_name, static_configs,
// metrics_path, scheme, per-job scrape_interval/scrape_timeout) into
// Prometheus's, validates it with errors that name the offending field,
// feeds the static targets to the scrape manager, and owns the goroutines
// and the TSDB's lifetime.
//
// Usage:
//
//	emb, err := embedded.New(embedded.Options{StoragePath: dir, ScrapeConfigs: ...})
//	ds := emb.Datasource(embedded.QueryOptions{})   // an engine.Datasource
//	go emb.Run(ctx)                                  // until ctx ends; closes the TSDB
//	err = emb.Reload(newScrapeConfigs)               // on a config reload
//	emb.Targets()                                    // scrape health for the API/UI
package embedded
