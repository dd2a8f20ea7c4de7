// Package web is paged's HTTP surface: health, readiness and reload
// (/-/healthy, /-/ready, /-/reload), the Prometheus-compatible
// /api/v1/rules, /api/v1/alerts, /api/v1/targets, /api/v1/status/config and,
// in embedded mode, the query API; the notifier's Alertmanager API v2 under
// /api/v2; /metrics; runbooks; the web UI (/, /graph, /status) and its
// assets; the request limits of the web: block, the bearer token, and TLS
// and basic auth through exporter-toolkit (Serve).
//
// It is written against small interfaces for what it reads and changes
// (Options: the configuration in effect, the engine's rules and alerts and
// its optional views, the notifier's API, a reload function, the metrics
// registry), never against the daemon: web does not import server. A new
// endpoint or page goes here; its settings go to config, its logic to its
// own package.
//
// web/webtest is the harness web's tests and server's tests share (a
// configuration dir with a test engine, request helpers, fixtures); only
// tests import it.
package web
