package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/model"

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
	from, err := reportTime(c.From, now)
	if err != nil {
		return usageError("--from: %v", err)
	}
	to, err := reportTime(c.To, now)
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
	r, err := report.Build(e.ctx, report.Options{
		From: from, To: to, Location: rc.TimeZone, WorkStart: rc.WorkStart, WorkEnd: rc.WorkEnd,
		WorkingDays: rc.WorkingDays, FlappingThreshold: rc.FlappingThreshold, Top: c.Top,
	}, sources...)
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

// reportTime reads now, -<duration> (Prometheus durations: -90m, -7d)
// or an RFC 3339 time.
func reportTime(s string, now time.Time) (time.Time, error) {
	switch {
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-"):
		d, err := model.ParseDuration(s[1:])
		if err != nil || d == 0 {
			return time.Time{}, fmt.Errorf("%q is not a duration back from now such as -1h or -7d", s)
		}
		return now.Add(-time.Duration(d)), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither now, a duration back from now (-1h, -7d) nor an RFC 3339 time", s)
	}
	return t, nil
}
