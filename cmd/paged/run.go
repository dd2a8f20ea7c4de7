package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/server"
)

// runCmd is the daemon: it evaluates the rules of paged.yaml, routes the
// alerts and serves the API until SIGTERM or SIGINT; SIGHUP reloads.
type runCmd struct {
	Config    string `help:"Configuration file." default:"paged.yaml" type:"string"`
	LogLevel  string `name:"log.level" help:"Log level: debug, info, warn, error." default:"info" enum:"debug,info,warn,error"`
	LogFormat string `name:"log.format" help:"Log format: text or json." default:"text" enum:"text,json"`
	WebConfig string `name:"web.config.file" help:"Web configuration file for TLS and basic auth (exporter-toolkit format, as Prometheus's); overrides web.config_file." type:"string"`
}

func (c *runCmd) Run(e *env) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return usageError("--log.level: %v", err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var logger *slog.Logger
	if c.LogFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(e.stderr, hopts))
	} else {
		logger = slog.New(slog.NewTextHandler(e.stderr, hopts))
	}

	if c.WebConfig != "" {
		if err := config.ValidateWebConfig(c.WebConfig); err != nil {
			return usageError("--web.config.file: %v", err)
		}
	}

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	reload := make(chan struct{})
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				select {
				case reload <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()

	err := server.Run(ctx, server.Options{
		ConfigFile:    c.Config,
		Getenv:        e.getenv,
		Logger:        logger,
		Reload:        reload,
		AlertOutput:   e.stdout,
		WebConfigFile: c.WebConfig,
	})
	if err == nil {
		return nil
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Fprintln(e.stderr, p.String())
		}
		return problems()
	}
	var le *engine.LoadError
	if errors.As(err, &le) {
		// The first load of the rules failed: nothing ever ran, so
		// nothing is kept. Each problem on a line of its own, as
		// check-config prints them.
		ps := le.Problems()
		for _, p := range ps {
			fmt.Fprintln(e.stderr, p)
		}
		return &exitError{Code: exitProblems, Err: fmt.Errorf("no rules loaded: %d problem(s) in rule files", len(ps))}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == c.Config {
		return &exitError{Code: exitUsage, Err: err}
	}
	return &exitError{Code: exitProblems, Err: err}
}
