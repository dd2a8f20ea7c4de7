// Command paged is alerting for LLM inference servers: it lints, tests and
// evaluates Prometheus rule packs and routes the alerts to Slack and webhooks.
//
// main only turns flags and signals into a context; every subcommand lives in
// its own file and calls into the library packages.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	commonversion "github.com/prometheus/common/version"
)

func main() {
	// The embedded Prometheus and Alertmanager code reports this version in
	// its status API (amtool reads it) and user agents.
	commonversion.Version = version
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
