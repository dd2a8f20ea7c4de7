// Package config owns paged.yaml: its types and defaults (Default), the
// decoder that reads a file once and reports every problem at its
// file:line:col (Load, Parse, *Error), ${ENV} expansion and *_file
// secrets, the packs:, scrape_configs, cluster:, web: and notifier:
// blocks, the web configuration file (--web.config.file), the discovery
// mechanisms of this build, and the redacted form that
// /api/v1/status/config shows (Redacted).
//
// The decoder walks the yaml.v3 node tree by hand for paged's own blocks,
// because it reports every problem in one pass, with its position, and
// never quotes a value that came from the environment; where a library
// type already decodes and validates a block (Prometheus's HTTP client and
// scrape configs, the notifier's Alertmanager-format configuration) the
// node is handed to it and its errors are placed back on the node.
//
// config imports the packages it configures (notifier, packs, engine's
// rule sources) and nothing above them: never server, web, demo or cmd.
// Those read a *Config.
package config
