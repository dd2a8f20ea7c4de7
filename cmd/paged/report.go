package main

import (
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/report"
)

type reportCmd struct {
	From        string   `name:"from" default:"-7d" help:"Start of the span: a duration back from now (-1h, -7d) or an RFC 3339 time."`
	To          string   `name:"to" default:"now" help:"End of the span: now, a duration back from now (-1d) or an RFC 3339 time."`
	Format      string   `name:"format" enum:"text,json,html" default:"text" help:"text, json, or html (one self-contained page)."`
	Output      string   `name:"output" short:"o" placeholder:"FILE" help:"Write the report to FILE instead of standard output."`
	Config      string   `name:"config" placeholder:"FILE" type:"string" help:"Take the working hours, time zone and flapping threshold from this paged.yaml (report: block)."`
	URL         []string `name:"url" placeholder:"URL" help:"A running paged, read through GET /api/v1/history; repeat for each member of an HA pair (a page both sent counts once). Default http://127.0.0.1:9095."`
	StoragePath []string `name:"storage.path" placeholder:"DIR" help:"Read the history file of this storage directory instead (read-only; paged may be running); repeatable."`
	Top         int      `name:"top" default:"10" help:"How many of the noisiest alerts to list."`
}

func (c *reportCmd) Run(e *env) error { return e.lines(c.run(e)) }

func (c *reportCmd) run(e *env) error {
	now := time.Now()
	from, err := report.ParseTime(c.From, now)
	if err != nil {
		return usageError("--from: %v", err)
	}
	to, err := report.ParseTime(c.To, now)
	if err != nil {
		return usageError("--to: %v", err)
	}
	if !from.Before(to) {
		return usageError("--from (%s) must be before --to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if c.Top <= 0 {
		return usageError("--top must be greater than 0")
	}
	if len(c.URL) > 0 && len(c.StoragePath) > 0 {
		return usageError("--url and --storage.path: read either running paged or storage directories, not both")
	}
	rc := config.DefaultReport()
	if c.Config != "" {
		cfg, err := loadConfig(e, c.Config)
		if err != nil {
			return err
		}
		rc = cfg.Report
	}
	var sources []report.Source
	for _, dir := range c.StoragePath {
		s, err := history.OpenReadOnly(filepath.Join(dir, history.FileName))
		if err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
		defer s.Close()
		sources = append(sources, s)
	}
	if len(c.StoragePath) == 0 {
		urls := c.URL
		if len(urls) == 0 {
			urls = []string{"http://127.0.0.1:9095"}
		}
		for _, u := range urls {
			sources = append(sources, newHistoryClient(u))
		}
	}
	opts := report.ConfigOptions(rc, from, to)
	opts.Top = c.Top
	r, err := report.Build(e.ctx, opts, sources...)
	if err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	w := e.stdout
	if c.Output != "" {
		f, err := os.Create(c.Output)
		if err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
		defer f.Close()
		w = f
	}
	if err := write(r, c.Format, w); err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	if f, ok := w.(*os.File); ok && c.Output != "" {
		if err := f.Close(); err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
	}
	return nil
}

func write(r *report.Report, format string, w io.Writer) error {
	switch format {
	case "json":
		return r.WriteJSON(w)
	case "html":
		return r.WriteHTML(w)
	default:
		return r.WriteText(w)
	}
}
