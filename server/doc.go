// Package server is paged's daemon: it loads paged.yaml, builds the rule
// engine and the notifier, and serves the HTTP API (Prometheus-compatible
// /api/v1/rules and /api/v1/alerts, health, reload, /metrics, the redacted
// configuration, runbooks and the notifier's /api/v2).
//
// cmd/paged turns flags and signals into a context and a reload channel and
// calls Run; everything else happens here, so the daemon runs the same in a
// process and in a test.
package server
