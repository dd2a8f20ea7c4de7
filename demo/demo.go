package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/examples"
	"github.com/pagedhq/paged/server"
	"github.com/pagedhq/paged/simulator"
)

// Environment variables the demo sets for its configuration file.
const (
	EnvTarget     = "PAGED_DEMO_TARGET"      // the simulator's host:port
	EnvListen     = "PAGED_DEMO_LISTEN"      // paged's HTTP address
	EnvStorage    = "PAGED_DEMO_STORAGE"     // storage.path
	EnvWebhookURL = "PAGED_DEMO_WEBHOOK_URL" // the webhook sink
)

// Run plays the demo: a simulated vLLM server, paged's daemon (embedded
// scraper and TSDB, the engine with the rule packs of the configuration,
// the notifier, the HTTP server with runbooks) and a local webhook sink,
// driven through the script. It prints every alert as it fires and
// resolves, then a summary. It returns an *IncompleteError when an
// expected alert did not fire or did not resolve (also when ctx ends
// before they did), the error of a component that failed, and nil
// otherwise. With Forever it runs on after the script until ctx ends.
func Run(ctx context.Context, opts Options) error {
	if err := opts.fill(); err != nil {
		return err
	}
	cfgName := BuiltinConfigName
	var cfgFile string
	if opts.ConfigFile != "" {
		var err error
		if cfgFile, err = findConfig(opts.ConfigFile); err != nil {
			return err
		}
		cfgName = cfgFile
	}
	dir := opts.StoragePath
	if dir == "" {
		var err error
		dir, err = os.MkdirTemp("", "paged-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	if cfgFile == "" {
		// The built-in configuration runs from a copy beside the demo's
		// state: the server reads (and reloads) a file.
		var err error
		if cfgFile, err = writeBuiltinConfig(dir); err != nil {
			return err
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before the wait: stop everything started below

	// The simulator runs speeded up by the time scale.
	sim, err := simulator.New(simulator.Options{
		Server: simulator.ServerVLLM, Scenario: opts.Script[0].Scenario,
		Seed: opts.Seed, Speed: opts.TimeScale, Logger: opts.Logger.With("component", "simulator"),
	})
	if err != nil {
		return fmt.Errorf("demo: simulator: %w", err)
	}
	simAddr, err := serveLoopback(ctx, &wg, sim.Handler())
	if err != nil {
		return fmt.Errorf("demo: simulator: %w", err)
	}

	ln, moved, err := listen(opts.Listen)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	webAddr := ln.Addr().String()
	var links linker // set once the configuration is loaded
	con := newConsole(opts.Stdout, opts.Color, opts.Now, func(ref string) string { return links.runbook(ref) })
	sinkAddr, err := serveLoopback(ctx, &wg, webhookSink(con))
	if err != nil {
		ln.Close()
		return fmt.Errorf("demo: webhook sink: %w", err)
	}

	vars := map[string]string{
		EnvTarget:     simAddr,
		EnvListen:     webAddr,
		EnvStorage:    filepath.Join(dir, "state"),
		EnvWebhookURL: "http://" + sinkAddr + "/alerts",
	}
	getenv := func(name string) string {
		if v, ok := vars[name]; ok {
			return v
		}
		return opts.Getenv(name)
	}
	srv, err := server.New(server.Options{
		ConfigFile:  cfgFile,
		Getenv:      getenv,
		Logger:      opts.Logger,
		Listener:    ln,
		NewEngine:   scaledEngineFactory(opts.TimeScale, filepath.Join(dir, "rules")),
		NewNotifier: teeNotifierFactory(con.notify),
	})
	if err != nil {
		ln.Close()
		return fmt.Errorf("demo: %w", err)
	}
	cfg := srv.Config()
	links = newLinker(cfg)

	failed := make(chan error, 1)
	wg.Go(func() {
		if err := srv.Serve(ctx, ln); err != nil {
			failed <- fmt.Errorf("demo: paged stopped: %w", err)
		}
	})

	base := cfg.Global.ExternalURL.String()
	printHeader(con, opts, cfgName, base, simAddr, vars[EnvWebhookURL], moved)
	if err := waitReady(ctx, "http://"+webAddr+"/-/ready", opts.ReadyTimeout, failed); err != nil {
		if errors.Is(err, context.Canceled) {
			return &IncompleteError{verdict(expected(opts.Script), nil)}
		}
		return err
	}
	con.printf("paged is ready: rules loaded, simulator scraped\n\n")

	started := opts.Now()
	scriptErr := runScript(ctx, opts.Script, opts.TimeScale, sim.SetScenario, con, failed)
	if scriptErr == nil {
		// Let the notifier deliver the last resolved notifications.
		scriptErr = con.waitSinkDrained(ctx, opts.DrainTimeout, failed)
	}
	if errors.Is(scriptErr, context.Canceled) {
		con.printf("\n── interrupted\n")
	}
	history, _, _ := con.snapshot()
	want := expected(opts.Script)
	v := verdict(want, history)
	printSummary(con, history, want, v, opts.Now().Sub(started), con.webhookCounts())

	if scriptErr == nil && opts.Forever {
		con.printf("\nStill running (--forever); Ctrl-C stops.\n  switch scenarios: curl -X POST 'http://%s/scenario?name=kv-saturation'\n  alerts:           %s/api/v1/alerts\n", simAddr, base)
		select {
		case <-ctx.Done():
		case err := <-failed:
			scriptErr = err
		}
	}
	if scriptErr != nil && !errors.Is(scriptErr, context.Canceled) {
		return scriptErr // a component failed
	}
	if !v.OK() {
		return &IncompleteError{v}
	}
	return nil
}

// BuiltinConfig returns the demo's paged.yaml built into paged
// (examples/demo.yaml): `paged demo --print-config`.
func BuiltinConfig() []byte {
	b, err := fs.ReadFile(examples.FS(), examples.DemoConfig)
	if err != nil {
		panic(err) // compiled in: examples' tests prove it is there
	}
	return b
}

// writeBuiltinConfig writes the built-in configuration into dir.
func writeBuiltinConfig(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	p := filepath.Join(dir, "demo.yaml")
	if err := os.WriteFile(p, BuiltinConfig(), 0o600); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	return p, nil
}

// findConfig returns path if it exists; a relative path that does not is
// looked up in the parent directories too.
func findConfig(path string) (string, error) {
	if _, err := os.Stat(path); err == nil || filepath.IsAbs(path) {
		return path, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		candidate := filepath.Join(dir, path)
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("demo: %s not found in %s or its parents (without --config, paged demo runs its built-in configuration)", path, wd)
		}
		dir = parent
	}
}

// listen listens on addr, or on a free loopback port when addr is taken
// (moved is then true).
func listen(addr string) (ln net.Listener, moved bool, err error) {
	ln, err = net.Listen("tcp", addr)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return ln, false, err
	}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	return ln, true, err
}

// serveLoopback serves h on a free loopback port until ctx ends.
func serveLoopback(ctx context.Context, wg *sync.WaitGroup, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	wg.Go(func() { _ = srv.Serve(ln) })
	wg.Go(func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if srv.Shutdown(shutdown) != nil {
			_ = srv.Close()
		}
	})
	return ln.Addr().String(), nil
}

// waitReady polls paged's readiness endpoint: the engine has loaded the
// rules and its datasource answered.
func waitReady(ctx context.Context, url string, timeout time.Duration, failed <-chan error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: time.Second}
	last := "no answer"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-failed:
			return err
		case <-deadline.C:
			return fmt.Errorf("demo: paged not ready after %s (%s: %s)", timeout, url, last)
		case <-tick.C:
		}
	}
}

// timeScaleFor sets the time scale's floors from the configuration's
// scrape and evaluation intervals: a range keeps a few scrapes, a step one
// interval.
func timeScaleFor(cfg *config.Config, factor float64) *timeScale {
	step := cfg.Global.EvaluationInterval
	if cfg.Datasource.Type == config.DatasourceEmbedded {
		step = max(step, cfg.Datasource.Embedded.ScrapeInterval)
		for _, sc := range cfg.Datasource.Embedded.ScrapeConfigs {
			step = max(step, time.Duration(sc.ScrapeInterval))
		}
	}
	return newTimeScale(factor, minRangeSamples*step, step)
}
