package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/demo"
)

// demoCmd runs the self-contained demo (package demo).
type demoCmd struct {
	Config      string  `help:"Run this paged.yaml instead of the demo configuration built into paged (examples/demo.yaml)." placeholder:"FILE" type:"string"`
	PrintConfig bool    `name:"print-config" help:"Print the built-in demo configuration (a paged.yaml to start from) and exit."`
	TimeScale   float64 `name:"time-scale" help:"Divide the rules' for durations and range windows by this factor and run the simulator that much faster (1: real time)." default:"60"`
	Listen      string  `help:"Address of paged's HTTP server (runbooks, API); a free port is used when it is taken." default:"127.0.0.1:9095"`
	Seed        uint64  `help:"Simulator random seed." default:"1"`
	Forever     bool    `help:"Keep running after the script, until Ctrl-C."`
	Data        string  `help:"Directory for the demo's state; default: a temporary directory removed at the end." type:"path"`
	LogLevel    string  `name:"log.level" help:"Level of the components' logs on stderr: debug, info, warn, error." default:"error" enum:"debug,info,warn,error"`
}

func (c *demoCmd) Run(e *env) error {
	if c.PrintConfig {
		_, err := e.stdout.Write(demo.BuiltinConfig())
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return usageError("--log.level: %v", err)
	}
	err := demo.Run(e.ctx, demo.Options{
		ConfigFile:  c.Config,
		TimeScale:   c.TimeScale,
		Listen:      c.Listen,
		Seed:        c.Seed,
		Forever:     c.Forever,
		StoragePath: c.Data,
		Stdout:      e.stdout,
		Color:       useColor(e),
		Getenv:      e.getenv,
		Logger:      slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})),
	})
	if err == nil {
		return nil
	}
	var incomplete *demo.IncompleteError
	if errors.As(err, &incomplete) || errors.Is(err, context.Canceled) {
		return problems() // interrupted, or the summary already says what is missing
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Fprintln(e.stderr, p.String())
		}
		return problems()
	}
	return &exitError{Code: exitUsage, Err: err}
}
