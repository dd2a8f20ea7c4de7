package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/notifier/notificationtest"
)

// testCmd is `paged test`: rule unit tests in the promtool test rules format.
type testCmd struct {
	RunRegex            []string `name:"run" sep:"none" placeholder:"REGEX" help:"Only run test groups whose name matches. Repeatable; the expressions are joined with |."`
	Diff                bool     `help:"Print a diff of expected and got alerts and samples."`
	Debug               bool     `help:"Print timing and a dump of every series after each test group."`
	JUnit               string   `name:"junit" placeholder:"FILE" type:"path" help:"Write a JUnit XML report to FILE."`
	IgnoreUnknownFields bool     `name:"ignore-unknown-fields" help:"Ignore unknown fields in the rule files (the test files stay strict)."`
	Coverage            bool     `help:"List every alerting rule and the test cases that exercise it firing and not firing."`
	MinCoverage         float64  `name:"min-coverage" placeholder:"PCT" help:"Fail (exit 1) when fewer than PCT percent of the alerting rules are tested firing and not firing. Implies --coverage."`

	Config string `placeholder:"FILE" help:"paged.yaml whose notifier block the notification_tests run against."`
	Update bool   `help:"Write the golden files of the notification tests' exp_payloads with what is rendered."`

	Files []string `arg:"" name:"TESTFILE" help:"Test files, directories (every *.test.yaml below) or glob patterns."`
}

func (c *testCmd) Run(e *env) error {
	if c.MinCoverage < 0 || c.MinCoverage > 100 {
		return usageError("--min-coverage must be between 0 and 100, got %v", c.MinCoverage)
	}
	files, err := ruletest.ExpandPaths(c.Files)
	if err != nil {
		return usageError("%v", err)
	}
	var junit bytes.Buffer
	opts := ruletest.Options{
		Run:                 c.RunRegex,
		Diff:                c.Diff,
		Debug:               c.Debug,
		IgnoreUnknownFields: c.IgnoreUnknownFields,
		Stdout:              e.stdout,
		Stderr:              e.stderr,
	}
	if c.JUnit != "" {
		opts.JUnit = &junit
	}
	var notifCov *notificationtest.Coverage
	if c.Update && c.Config == "" {
		return usageError("--update needs --config")
	}
	if c.Config != "" {
		cfg, err := loadConfigTo(e, c.Config, e.stderr, true)
		if err != nil {
			return err
		}
		if cfg.NotifierConfig == nil {
			return usageError("%s: no notifier: block for the notification tests", c.Config)
		}
		nopts := notificationtest.Options{Config: cfg.NotifierConfig, Update: c.Update, RuleTests: opts, Stdout: e.stdout}
		nopts.Render = cfg.RenderOptions()
		nopts.RuleTests.Stdout, nopts.RuleTests.Stderr, nopts.RuleTests.JUnit = nil, nil, nil
		nopts.Coverage = notificationtest.NewCoverage(cfg.NotifierConfig)
		notifCov = nopts.Coverage
		opts.Notifications = notificationtest.Runner(nopts)
	}
	res, err := ruletest.Run(e.ctx, opts, files...)
	if err != nil {
		var ue *ruletest.UsageError
		if errors.As(err, &ue) {
			return usageError("%v", ue.Err)
		}
		return &exitError{Code: exitUsage, Err: err}
	}
	if c.JUnit != "" {
		if err := os.WriteFile(c.JUnit, junit.Bytes(), 0o644); err != nil {
			return usageError("writing JUnit report: %v", err)
		}
	}
	failed := res.Failed()
	if c.Coverage || c.MinCoverage > 0 {
		if err := res.Coverage.WriteText(e.stdout); err != nil {
			return usageError("writing coverage: %v", err)
		}
		if notifCov != nil {
			if err := notifCov.WriteText(e.stdout); err != nil {
				return usageError("writing coverage: %v", err)
			}
		}
		if pct := res.Coverage.Percent(); pct < c.MinCoverage {
			fmt.Fprintf(e.stderr, "paged: coverage %.1f%% is below --min-coverage %v%%\n", pct, c.MinCoverage)
			failed = true
		}
	}
	if failed {
		return problems()
	}
	return nil
}
