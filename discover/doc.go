// Package discover finds out which LLM inference servers a Prometheus (or
// Thanos, Mimir, VictoriaMetrics) scrapes, or which ones answer on a list
// of targets, and writes the paged.yaml that fits them: the built-in packs
// of those servers, each narrowed to its scrape jobs, and notifier stubs.
// It also lists the rules of those packs that would match no series there,
// with the metric catalogue's reason, by the same selector check as the
// engine's PagedRuleNoSeries alert (rules.SeriesChecks). `paged init` is
// its command line.
package discover
