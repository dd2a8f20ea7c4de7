package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/rules"
	"github.com/prometheus/prometheus/promql/parser"
)

type lintCmd struct {
	Format              string   `help:"Output format: text, json, github or sarif." default:"text" enum:"text,json,github,sarif"`
	FailOn              string   `name:"fail-on" help:"Exit 1 when a finding is at or above this severity: error, warning or info." default:"error" enum:"error,warning,info"`
	Config              string   `help:"Lint configuration file (default: .paged-lint.yaml in the current directory, if present)." type:"path"`
	Prometheus          string   `help:"Also run live checks against this Prometheus (the series each selector uses exist)." placeholder:"URL"`
	CheckLinks          bool     `name:"check-links" help:"Send HTTP HEAD to absolute runbook links."`
	Disable             []string `help:"Disable a check or an area of checks (repeatable)." placeholder:"CHECK"`
	IgnoreUnknownFields bool     `name:"ignore-unknown-fields" help:"Accept keys Prometheus does not know."`
	EnableFeature       []string `name:"enable-feature" help:"PromQL features, as promtool's flag: promql-experimental-functions, promql-binop-fill-modifiers, promql-unquoted-utf8-names." placeholder:"FEATURE"`
	ListChecks          bool     `name:"list-checks" help:"List the checks and exit."`
	Base                string   `name:"base" placeholder:"REV" help:"Git revision the change is compared with (e.g. main): rules that still use a recording rule removed since REV are reported (rule/dependency)."`
	Baseline            string   `name:"baseline" placeholder:"FILE" type:"string" help:"Accept the findings FILE lists (written by --write-baseline): they are not shown and do not fail the run; new findings are."`
	WriteBaseline       string   `name:"write-baseline" placeholder:"FILE" type:"string" help:"Write every finding of this run to FILE as accepted, for --baseline, and exit 0."`
	PagedConfig         string   `name:"paged-config" placeholder:"FILE" type:"string" help:"Also lint what this paged.yaml loads: its rule_files and its packs with their overrides applied (findings in a pack at pack:<name>:LINE:COL, the lines of paged packs show), and its notifier block against the alerts they can send (the notifier/... checks)."`
	Paths               []string `arg:"" optional:"" help:"Rule files, directories (walked recursively) or globs." name:"path"`
}

func (c *lintCmd) Run(e *env) error {
	if c.ListChecks {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		for _, ch := range rules.Checks() {
			online := ""
			if ch.Online {
				online = " (needs --prometheus)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s%s\n", ch.Name, ch.Severity, ch.Help, online)
		}
		return tw.Flush()
	}
	if len(c.Paths) == 0 && c.PagedConfig == "" {
		return usageError("lint: give at least one rule file, directory or glob (or --paged-config)")
	}
	var loaded []*rules.File
	var pc *config.Config
	if c.PagedConfig != "" {
		var err error
		if pc, err = loadConfig(e, c.PagedConfig); err != nil {
			return err
		}
		c.Paths = append(c.Paths, pc.RuleFilePaths...)
		for _, p := range pc.Packs {
			loaded = append(loaded, p.Rendered.File)
		}
	}
	failOn, err := rules.ParseSeverity(c.FailOn)
	if err != nil {
		return usageError("lint: --fail-on: %v", err)
	}
	cfg, err := c.loadConfig()
	if err != nil {
		return usageError("lint: %v", err)
	}
	popts := parser.Options{}
	for _, f := range c.EnableFeature {
		for o := range strings.SplitSeq(f, ",") {
			switch strings.TrimSpace(o) {
			case "promql-experimental-functions":
				popts.EnableExperimentalFunctions = true
			case "promql-binop-fill-modifiers":
				popts.EnableBinopFillModifiers = true
			case "promql-unquoted-utf8-names":
				popts.EnableUnquotedUTF8Names = true
			case "promql-duration-expr", "promql-extended-range-selectors", "":
				// Always on.
			default:
				return usageError("lint: unknown feature %q", o)
			}
		}
	}
	var paths []string
	if len(c.Paths) > 0 {
		if paths, err = rules.ExpandPaths(c.Paths); err != nil {
			return usageError("lint: %v", err)
		}
	}
	if c.Prometheus == "" {
		c.Prometheus = cfg.PrometheusURL // lint.prometheus.url in .paged-lint.yaml
	}
	if c.Prometheus != "" {
		api, err := rules.NewPrometheusAPI(c.Prometheus)
		if err != nil {
			return usageError("lint: --prometheus: %v", err)
		}
		cfg.Prometheus = api
	}
	opts := rules.ParseOptions{IgnoreUnknownFields: c.IgnoreUnknownFields, Parser: parser.NewParser(popts)}
	files := loaded
	if c.Base != "" {
		// --base compares the recording rules of every file being linted
		// with the base revision's before any file is linted.
		read, err := rules.ReadFiles(paths, opts)
		if err != nil {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("lint: %w", err)}
		}
		base, err := baseFiles(c.Base, paths, opts)
		if err != nil {
			return usageError("lint: %v", err)
		}
		files = append(files, read...)
		cfg.RemovedRecords = rules.RemovedRecords(base, files, c.Base)
		paths = nil
	}
	var baseline *rules.Baseline
	if c.Baseline != "" {
		if baseline, err = rules.ReadBaseline(c.Baseline); err != nil {
			return usageError("lint: --baseline: %v", err)
		}
	}
	findings, src, err := rules.LintFiles(files, paths, opts, cfg)
	if err != nil {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("lint: %w", err)}
	}
	if pc != nil && pc.Notifier != nil {
		nf, nsrc, err := lintNotifier(pc, opts, cfg)
		if err != nil {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("lint: %w", err)}
		}
		findings, src = mergeFindings(findings, src, nf, nsrc)
	}
	if c.WriteBaseline != "" {
		return writeBaseline(e, c.WriteBaseline, findings, src)
	}
	if baseline != nil {
		var accepted, stale int
		findings, accepted, stale = baseline.Filter(findings, src)
		defer func() {
			if accepted > 0 {
				fmt.Fprintf(e.stderr, "lint: %d finding(s) accepted by the baseline %s, not shown\n", accepted, c.Baseline)
			}
			if stale > 0 {
				fmt.Fprintf(e.stderr, "lint: %d accepted finding(s) of the baseline no longer occur: --write-baseline %s drops them\n", stale, c.Baseline)
			}
		}()
	}
	color := c.Format == rules.FormatText && useColor(e)
	if err := rules.WriteFindings(e.stdout, c.Format, findings, src, color); err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	for _, f := range findings {
		if f.Severity >= failOn {
			return problems()
		}
	}
	return nil
}

// writeBaseline accepts every finding of the run into the file.
func writeBaseline(e *env, path string, findings []rules.Finding, src rules.SourceFunc) error {
	dir, err := rules.BaselineDir(path)
	if err != nil {
		return usageError("lint: --write-baseline: %v", err)
	}
	if err := rules.WriteBaselineFile(path, rules.NewBaseline(dir, findings, src)); err != nil {
		return usageError("lint: --write-baseline: %v", err)
	}
	fmt.Fprintf(e.stderr, "lint: wrote %d finding(s) to the baseline %s\n", len(findings), path)
	return nil
}

func (c *lintCmd) loadConfig() (*rules.Config, error) {
	cfg := rules.DefaultConfig()
	path := c.Config
	if path == "" {
		if _, err := os.Stat(".paged-lint.yaml"); err == nil {
			path = ".paged-lint.yaml"
		}
	}
	if path != "" {
		var err error
		cfg, err = rules.LoadConfig(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("config %s: file not found", path)
			}
			return nil, err
		}
	}
	cfg.Disabled = append(cfg.Disabled, c.Disable...)
	cfg.CheckLinks = c.CheckLinks
	return cfg, nil
}

// useColor: colour only on a terminal and never with NO_COLOR set.
func useColor(e *env) bool {
	if e.getenv("NO_COLOR") != "" || e.getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(e.stdout)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
