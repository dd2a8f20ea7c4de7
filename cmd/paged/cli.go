package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/pagedhq/paged/config"
)

// Exit codes shared by every subcommand (DESIGN.md §2).
const (
	exitOK       = 0
	exitProblems = 1 // lint findings at or above --fail-on, failed tests, invalid config
	exitUsage    = 2 // usage or I/O error
)

// exitError carries an exit code out of a subcommand. A nil Err means the
// command already printed what it had to say.
type exitError struct {
	Code int
	Err  error
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitError) Unwrap() error { return e.Err }

// problems returns an error that makes paged exit 1 without printing more.
func problems() error { return &exitError{Code: exitProblems} }

// usageError makes paged exit 2 with the message.
func usageError(format string, args ...any) error {
	return &exitError{Code: exitUsage, Err: fmt.Errorf(format, args...)}
}

// loadConfig loads paged.yaml; its problems are printed with their
// positions on stderr and make paged exit 1.
func loadConfig(e *env, path string) (*config.Config, error) {
	return loadConfigTo(e, path, e.stderr, false)
}

// loadConfigTo is loadConfig with the problems printed on w, followed by
// a line counting them when counted (check-config, test --config and
// notify-test have always printed it). A file paged cannot read is a usage
// error.
func loadConfigTo(e *env, path string, w io.Writer, counted bool) (*config.Config, error) {
	cfg, err := config.Load(path, e.getenv)
	if err == nil {
		return cfg, nil
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		return nil, &exitError{Code: exitUsage, Err: err}
	}
	for _, p := range ce.Problems {
		fmt.Fprintln(w, p.String())
	}
	if counted {
		fmt.Fprintf(w, "%s: %d problem(s)\n", path, len(ce.Problems))
	}
	return nil, problems()
}

// lines prints a multi-line error one "paged: " line at a time, so each
// problem reads on its own (exit codes stay as they were).
func (e *env) lines(err error) error {
	var ee *exitError
	if !errors.As(err, &ee) || ee.Err == nil || !strings.Contains(ee.Err.Error(), "\n") {
		return err
	}
	for _, l := range strings.Split(ee.Err.Error(), "\n") {
		fmt.Fprintln(e.stderr, "paged:", l)
	}
	return &exitError{Code: ee.Code}
}

// env is what every subcommand gets: the streams, the context and the
// environment, so commands run the same in a process and in testscript.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// cli is the whole command line. Each subcommand is defined in its own file.
type cli struct {
	Run         runCmd         `cmd:"" help:"Run the alerting daemon."`
	Demo        demoCmd        `cmd:"" help:"Run a self-contained demo: simulator, embedded engine and console alerts."`
	Lint        lintCmd        `cmd:"" help:"Lint rule files."`
	Test        testCmd        `cmd:"" help:"Run rule unit tests (promtool test rules format)."`
	Backtest    backtestCmd    `cmd:"" help:"Replay alert rules over past data."`
	Simulate    simulateCmd    `cmd:"" help:"Serve /metrics of a simulated LLM inference server."`
	CheckConfig checkConfigCmd `cmd:"" name:"check-config" help:"Validate a paged.yaml configuration file."`
	NotifyTest  notifyTestCmd  `cmd:"" name:"notify-test" help:"Send a sample alert to a receiver."`
	Packs       packsCmd       `cmd:"" help:"The rule packs built into paged: list, show."`
	Export      exportCmd      `cmd:"" help:"Write packs as Prometheus rule files, PrometheusRules or Mimir namespaces, and their runbooks as HTML."`
	Report      reportCmd      `cmd:"" help:"How paging went over a span (--from -7d): pages per alert and receiver, the noisiest and flapping alerts, time to acknowledge, pages outside working hours, silences, delivery failures."`
	History     historyCmd     `cmd:"" help:"What fired, was notified, silenced or acknowledged, oldest first: from a running paged (--url) or a storage directory (--storage.path)."`
	Healthcheck healthcheckCmd `cmd:"" help:"Probe a running paged (default http://127.0.0.1:9095/-/healthy); exit 0 when it answers 200. For container health checks."`
	Init        initCmd        `cmd:"" help:"Find the LLM servers a Prometheus scrapes (or scrape them), write the paged.yaml that fits, and list the pack rules that would match nothing."`
	Version     versionCmd     `cmd:"" help:"Print the version."`
}

// Main runs paged with args and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c cli
	exited := -1
	parser, err := kong.New(&c,
		kong.Name("paged"),
		kong.Description("Alerting for LLM inference servers."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exited = code; panic(kongExit{}) }),
		kong.UsageOnError(),
		kong.WithHyphenPrefixedParameters(true), // --from -7d
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintln(stderr, "paged:", err)
		return exitUsage
	}
	var kctx *kong.Context
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(kongExit); !ok {
					panic(r)
				}
			}
		}()
		kctx, err = parser.Parse(args)
	}()
	if exited >= 0 {
		// --help exits 0; kong reports usage errors through err below.
		return exited
	}
	if err != nil {
		fmt.Fprintln(stderr, "paged:", err)
		return exitUsage
	}
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	err = kctx.Run(e)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stderr, "paged:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, "paged:", err)
	return exitUsage
}

type kongExit struct{}
