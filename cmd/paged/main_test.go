package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pagedhq/paged/config"
)

// TestMain lets testscript run paged as a command inside the test binary.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"paged": func() {
			// As main: SIGINT and SIGTERM cancel the context.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		},
	})
}

// TestScripts runs the command-line scripts in testdata/script: real
// command lines, real exit codes, expected output beside them.
func TestScripts(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// [alldiscovery]: this binary was built with -tags
		// paged_all_discovery (every Prometheus discovery mechanism).
		Condition: func(cond string) (bool, error) {
			if cond == "alldiscovery" {
				return config.DiscoveryBuild == "all", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", root)
			e.Setenv("NO_COLOR", "1")
			if s := os.Getenv("PAGED_SHARED"); s != "" {
				e.Setenv("PAGED_SHARED", s)
			} else {
				e.Setenv("PAGED_SHARED", filepath.Join(root, "..", "shared"))
			}
			return nil
		},
	})
}
