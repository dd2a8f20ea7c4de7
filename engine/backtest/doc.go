// Package backtest replays alerting rules over a past time range and
// reports when each alert would have been pending, firing and resolved,
// how many notifications that would have been, and how long each lasted.
//
// Data comes from one range query per rule expression over the whole range
// at the group's evaluation step (chunked to stay under Prometheus's 11,000
// points per series), against a Prometheus-compatible API (NewRemote) or a
// local PromQL engine over a TSDB (NewQueryable). The alert state machine
// is Prometheus's own: each step's slice of the range result is served to
// rules.AlertingRule.Eval through a QueryFunc, so `for`, `keep_firing_for`,
// label templating and label sets behave exactly as in the live engine.
package backtest
