// Package config owns paged.yaml: its types and defaults (Default), the
// decoder that reads a file once and reports every problem at its
// file:line:col (Load, Parse, *Error), ${ENV} expansion and *_file
// secrets, the packs:, scrape_configs, cluster:, web: and notifier:
// blocks, the web configuration file (--web.config.file), the discovery
// mechanisms of this build, and the redacted form that
// /api/v1/status/config shows (Redacted).
//
// The decoder walks the yaml.v3 node tree once, after ${ENV} expansion,
// and reports every problem in that one pass at its line and column,
// never quoting a value that came from the environment. Each block is
// decoded in one of three ways:
//
//   - By hand, with decode.go's mapping, list and scalar helpers: global,
//     datasource (type, down_after_failures, prometheus, embedded and its
//     query block), rule_files, packs, grafana_url, runbook_base_url,
//     storage, web and cluster. Here yaml.v3's Node.Decode into a tagged
//     struct would say less. Its known-key check (checkKeys) gives the
//     same position and message as mapping. But a value of the wrong kind
//     becomes "line N: cannot unmarshal !!seq into string", with no column
//     and YAML's tag names, where mapping says "expected a string, got a
//     list" at the value. A repeated key becomes "mapping key ... already
//     defined", also with no column. model.Duration stops the whole decode
//     at the first bad duration, with no position and no hint. A typed
//     bool quietly takes YAML 1.1's yes and on, where paged asks for true
//     or false (YAML 1.2). And
//     the checks that follow (positive numbers, non-empty paths, http(s)
//     URLs, host:port, byte sizes, label names, pack overrides) would still
//     be written by hand. testdata/*.bad.yaml pins these messages and
//     positions.
//   - By Node.Decode into the library's own tagged struct, with checkKeys
//     first so that a misspelt key is reported at its position:
//     datasource.prometheus.http_config (prometheus/common's
//     HTTPClientConfig). Its type errors go on the node of their line, and
//     its Validate errors go on the block.
//   - Handed whole to the library that defines the block, with its errors
//     placed back on paged.yaml's nodes: notifier (the notifier's
//     Config.UnmarshalYAML), datasource.embedded.scrape_configs
//     (Prometheus's config.Load, one job at a time) and the file that
//     web.config_file names (exporter-toolkit's web.Validate).
//
// config imports the packages it configures (notifier, packs, engine's
// rule sources) and nothing above them: never server, web, demo or cmd.
// Those read a *Config.
package config
