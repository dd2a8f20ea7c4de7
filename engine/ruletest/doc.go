// Package ruletest runs rule unit tests written in the `promtool test rules`
// file format, with the evaluation semantics of Prometheus 3: input series are
// loaded through promql/promqltest's lazy loader, rule groups are built and
// evaluated by prometheus/rules on a manual clock, and expressions are
// evaluated by promql.Engine.
//
// On top of promtool it keeps the position of every test case (failures name
// path:line:col), reports which alerting rules the tests exercise (coverage),
// and accepts one extension field, exp_pending_alerts, to assert alerts that
// are pending at a time. Files that do not use the extension behave exactly as
// they do with promtool.
package ruletest
