// Package demo is `paged demo`: the whole product on one machine in about
// a minute. It starts a simulated vLLM server, runs paged's daemon on
// examples/demo.yaml (embedded scraper and TSDB, the vLLM rule pack, the
// notifier with a local webhook sink, the HTTP server with the runbooks),
// plays a script of incidents on the simulator, and prints each alert as
// it fires and resolves with its runbook link.
//
// To fit in a minute, the demo divides every duration of the loaded rules
// (`for`, `keep_firing_for`, range windows, subqueries, offsets) by a time
// scale and speeds the simulator up by the same factor; the rule files
// themselves are never edited. See docs/demo.md.
package demo
