// Package engine evaluates rule groups on a schedule with Prometheus's
// semantics and hands the alerts that are due to a rules.NotifyFunc.
//
// It embeds github.com/prometheus/prometheus/rules the way Thanos Ruler and
// the Mimir ruler do: the rules Manager keeps the alert state machine (for,
// keep_firing_for, limit, query_offset, templating, ALERTS_FOR_STATE), and
// this package adds what paged promises on top of it:
//
//   - a Datasource seam (remote Prometheus-compatible API, or a local PromQL
//     engine over a storage.Queryable for the embedded mode and for tests);
//   - alert state in a local TSDB under the storage path, so a restart keeps
//     the original activeAt of pending and firing alerts, and a sent log so
//     that a restart does not re-notify what was already sent;
//   - a failing query never resolves an alert: the rule's alerts keep their
//     state and are re-sent with Stale set, and after a number of failed
//     evaluations the built-in PagedDatasourceDown alert fires;
//   - labels and annotations of alerting rules set by paged, annotations
//     expanded only when an alert is sent or read (ruledef.go), which
//     takes the template cost out of every evaluation;
//   - self-metrics and a console sink.
package engine
