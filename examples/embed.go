// Package examples holds the rule packs, their unit tests and runbooks, and
// example configurations. The packs (with their pack.yaml metadata), the
// runbooks and demo.yaml are compiled into the paged binary from here, so
// `paged demo`, `paged packs` and `paged export` work without a clone;
// these files stay their only source.
//
// Its tests prove every pack is what DESIGN.md §4 promises: lint-clean,
// loadable by Debian's promtool, fully tested, and built in unchanged.
package examples

import (
	"embed"
	"io/fs"
)

//go:embed demo.yaml packs runbooks
var files embed.FS

// FS returns the built-in files: demo.yaml, packs/<name>/ (pack.yaml, rule
// and test files) and runbooks/<server>/<Alert>.md.
func FS() fs.FS { return files }

// DemoConfig is the path of the demo's paged.yaml in FS.
const DemoConfig = "demo.yaml"
