package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/pagedhq/paged/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type versionCmd struct{}

func (c *versionCmd) Run(e *env) error {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " (" + s.Value[:12] + ")"
			}
		}
	}
	fmt.Fprintf(e.stdout, "paged %s%s %s/%s %s\n", version, rev, runtime.GOOS, runtime.GOARCH, runtime.Version())
	// Which build this is matters to a scrape config (docs/embedded.md).
	if config.DiscoveryBuild == "all" {
		fmt.Fprintln(e.stdout, "discovery: every Prometheus mechanism (paged-full, -tags paged_all_discovery)")
	} else {
		fmt.Fprintf(e.stdout, "discovery: %s (the others are in paged-full, -tags paged_all_discovery)\n", strings.Join(config.BuiltinDiscovery(), ", "))
	}
	return nil
}
