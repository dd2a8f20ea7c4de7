// Command catalog-review compares the metric catalogue (rules/catalog)
// with a checkout of an upstream server and lists the names, types and
// labels the catalogue lacks, has wrong, or lists while upstream no longer
// has them. It is the mechanical part of a catalogue review, run by hand
// (docs/checks-catalog.md), not in CI:
//
//	go run ./scripts/catalog-review -project tgi ../text-generation-inference
//	go run ./scripts/catalog-review -project dcgm-exporter ../dcgm-exporter
//	go run ./scripts/catalog-review -project gaie ../gateway-api-inference-extension
//
// Projects: vllm, sglang, sglang-gateway, tgi, dcgm-exporter, go-dcgm,
// gaie, llm-d. The exit code is 0 when the catalogue agrees with the
// checkout, 1 when it lists differences, 2 on a usage or read error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

func main() {
	fs := flag.NewFlagSet("catalog-review", flag.ContinueOnError)
	project := fs.String("project", "", "the upstream project of the checkout: "+strings.Join(projectNames(), ", "))
	release := fs.String("release", "", "the release the checkout is (gaie: 1.4; vllm: 0.12), to compare with what the catalogue says it exposes")
	list := fs.Bool("list", false, "also list every family read upstream, with its type, labels and place")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: catalog-review -project NAME CHECKOUT\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *project == "" || fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	diffs, err := Run(ctx, Options{Project: *project, Checkout: fs.Arg(0), Out: os.Stdout, List: *list, Release: *release})
	if err != nil {
		fmt.Fprintln(os.Stderr, "catalog-review:", err)
		os.Exit(2)
	}
	if diffs > 0 {
		os.Exit(1)
	}
}
