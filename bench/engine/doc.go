// Package enginebench measures the engine's overhead against Prometheus's
// own cost of answering the same queries, and its memory with many active
// alerts. Run it with:
//
//	go test ./bench/engine -run '^$' -bench . -benchtime 1x -v
//
// Results are written up in RESULTS.md beside this file.
package enginebench
