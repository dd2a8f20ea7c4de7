// Package server is paged's daemon, and only that: it loads paged.yaml
// (config), builds the rule engine and the notifier from it, mounts the
// HTTP surface (web) over them, runs them, applies reloads (all or
// nothing) and shuts them down.
//
// cmd/paged turns flags and signals into a context and a reload channel and
// calls Run; everything else happens here, so the daemon runs the same in a
// process and in a test. Handlers, pages and API shapes belong in web;
// configuration types and decoding in config; neither belongs here.
package server
