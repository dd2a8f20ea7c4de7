package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/rules"
)

// backtestCmd is `paged backtest`: replay the alert rules of paged.yaml
// over a past range and report what they would have done.
type backtestCmd struct {
	Config     string        `name:"config" required:"" placeholder:"FILE" type:"path" help:"paged.yaml: rule_files, packs (overrides applied), datasource, evaluation_interval and external labels come from it."`
	From       string        `name:"from" required:"" placeholder:"T" help:"Start: RFC3339, unix seconds, now, or relative (-7d)."`
	To         string        `name:"to" default:"now" placeholder:"T" help:"End, in the same forms as --from."`
	Rule       string        `name:"rule" placeholder:"REGEX" help:"Only alerting rules whose name matches (anchored)."`
	Set        []string      `name:"set" sep:"none" placeholder:"NAME=VALUE" help:"Replace the threshold (the number in the top-level comparison) of alert NAME. Repeatable."`
	Report     string        `name:"report" placeholder:"FILE" type:"path" help:"Write a self-contained HTML report with charts."`
	JSON       bool          `name:"json" help:"Print the report as JSON instead of a table."`
	FlapWindow time.Duration `name:"flap-window" default:"15m" help:"A re-fire of the same alert within this gap counts as a flap."`
	GroupWait  time.Duration `name:"group-wait" default:"30s" help:"Alertmanager group_wait used to count notifications."`
	GroupInt   time.Duration `name:"group-interval" default:"5m" help:"Alertmanager group_interval used to count notifications."`
	Repeat     time.Duration `name:"repeat-interval" default:"4h" help:"Alertmanager repeat_interval used to count notifications."`
	MaxPoints  int           `name:"max-points" default:"11000" help:"Most points per series in one range query; longer ranges are split."`
	Parallel   int           `name:"parallel" default:"4" help:"Range queries in flight at once."`
}

func (c *backtestCmd) Run(e *env) error {
	now := time.Now()
	from, err := backtest.ParseTime(c.From, now)
	if err != nil {
		return usageError("--from: %v", err)
	}
	to, err := backtest.ParseTime(c.To, now)
	if err != nil {
		return usageError("--to: %v", err)
	}
	var ruleRe *regexp.Regexp
	if c.Rule != "" {
		if ruleRe, err = regexp.Compile("^(?:" + c.Rule + ")$"); err != nil {
			return usageError("--rule: %v", err)
		}
	}
	set, err := backtest.ParseSet(c.Set)
	if err != nil {
		return usageError("%v", err)
	}
	if c.MaxPoints <= 0 || c.Parallel <= 0 {
		return usageError("--max-points and --parallel must be positive")
	}
	cfg, err := loadConfig(e, c.Config)
	if err != nil {
		return err
	}
	src, closeSrc, err := backtestSource(cfg)
	if err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	defer closeSrc()

	opts := backtest.Options{
		Source:             src,
		RuleFiles:          cfg.RuleFilePaths,
		Files:              packFiles(cfg),
		From:               from,
		To:                 to,
		EvaluationInterval: cfg.Global.EvaluationInterval,
		ExternalLabels:     cfg.Global.ExternalLabels,
		Rules:              ruleRe,
		Thresholds:         set,
		MaxPoints:          c.MaxPoints,
		Parallel:           c.Parallel,
		FlapWindow:         c.FlapWindow,
		Grouping:           backtest.Grouping{GroupWait: c.GroupWait, GroupInterval: c.GroupInt, RepeatInterval: c.Repeat},
		Charts:             c.Report != "",
	}
	if cfg.Datasource.Type == config.DatasourceEmbedded {
		opts.Parallel = 1 // the read-only TSDB supports no concurrent use
	}
	if cfg.Global.ExternalURL != nil {
		opts.ExternalURL = cfg.Global.ExternalURL.String()
	}
	if isTerminal(e.stderr) && e.getenv("TERM") != "dumb" {
		opts.Progress = progressBar(e.stderr)
	}
	rep, err := backtest.Run(e.ctx, opts)
	if err != nil {
		if strings.Contains(err.Error(), "--set") || strings.Contains(err.Error(), "backtest:") {
			return usageError("%v", err)
		}
		// Rule files that do not load: file:line:col problems.
		fmt.Fprintln(e.stderr, err)
		return problems()
	}
	if c.JSON {
		err = backtest.WriteJSON(e.stdout, rep)
	} else {
		err = backtest.WriteText(e.stdout, rep)
	}
	if err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	if c.Report != "" {
		if err := writeFileAtomic(c.Report, func(w io.Writer) error { return backtest.WriteHTML(w, rep) }); err != nil {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("--report: %w", err)}
		}
		fmt.Fprintf(e.stderr, "report written to %s\n", c.Report)
	}
	failed := 0
	for _, r := range rep.Rules {
		if r.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		return usageError("%d of %d rules could not be replayed (see the errors above)", failed, len(rep.Rules))
	}
	return nil
}

// packFiles are the packs of the configuration, overrides applied, as
// the engine loads them.
func packFiles(cfg *config.Config) []*rules.File {
	out := make([]*rules.File, 0, len(cfg.Packs))
	for _, pc := range cfg.Packs {
		out = append(out, pc.Rendered.File)
	}
	return out
}

// backtestSource is the configured datasource as a range-query source: the
// remote API, or the embedded TSDB opened read-only (a running paged may
// keep writing to it).
func backtestSource(cfg *config.Config) (backtest.Source, func(), error) {
	if cfg.Datasource.Type == config.DatasourceEmbedded {
		dir := filepath.Join(cfg.Storage.Path, "metrics")
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, fmt.Errorf("embedded TSDB: %w", err)
		}
		sandbox, err := os.MkdirTemp("", "paged-backtest-")
		if err != nil {
			return nil, nil, err
		}
		db, err := tsdb.OpenDBReadOnly(dir, sandbox, slog.New(slog.DiscardHandler))
		if err != nil {
			os.RemoveAll(sandbox)
			return nil, nil, fmt.Errorf("embedded TSDB %s: %w", dir, err)
		}
		eng := promql.NewEngine(promql.EngineOpts{
			MaxSamples:           50_000_000,
			Timeout:              10 * time.Minute,
			LookbackDelta:        5 * time.Minute,
			EnableAtModifier:     true,
			EnableNegativeOffset: true,
			NoStepSubqueryIntervalFn: func(int64) int64 {
				return cfg.Global.EvaluationInterval.Milliseconds()
			},
		})
		src, closeQ, err := backtest.NewReadOnly(eng, db)
		if err != nil {
			db.Close()
			os.RemoveAll(sandbox)
			return nil, nil, fmt.Errorf("embedded TSDB %s: %w", dir, err)
		}
		return src, func() { closeQ(); db.Close(); os.RemoveAll(sandbox) }, nil
	}
	p := cfg.Datasource.Prometheus
	if p.URL == nil {
		return nil, nil, errors.New("datasource.prometheus.url is not set")
	}
	r, err := backtest.NewRemote(engine.RemoteOptions{URL: p.URL.String(), Timeout: max(p.Timeout, 2*time.Minute), HTTPConfig: p.HTTPConfig})
	if err != nil {
		return nil, nil, err
	}
	return r, func() {}, nil
}

// progressBar draws "[#####-----] 12/40 queries" on one terminal line.
func progressBar(w io.Writer) func(done, total int) {
	const width = 30
	finished := false
	return func(done, total int) {
		if total <= 0 || finished {
			return
		}
		n := min(width, done*width/total)
		fmt.Fprintf(w, "\r[%s%s] %d/%d queries", strings.Repeat("#", n), strings.Repeat("-", width-n), done, total)
		if done >= total {
			fmt.Fprint(w, "\r\033[K")
			finished = true
		}
	}
}

// writeFileAtomic writes path through a temporary file and a rename.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".paged-report-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
