package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/report"
)

type historyCmd struct {
	URL         string        `name:"url" default:"http://127.0.0.1:9095" help:"A running paged, read through GET /api/v1/history."`
	StoragePath string        `name:"storage.path" help:"Read the history file of this storage directory instead (read-only; paged may be running)."`
	Alertname   string        `help:"Only the events of this alert name."`
	Type        []string      `help:"Only events of these types (pending, firing, resolved, notification, silence, ack...)."`
	Since       time.Duration `default:"24h" help:"How far back to look."`
	Limit       int           `default:"1000" help:"At most this many events."`
}

func (c *historyCmd) Run(e *env) error {
	if c.Limit <= 0 || c.Limit > history.MaxLimit {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("--limit must be from 1 to %d", history.MaxLimit)}
	}
	if c.Since <= 0 {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("--since must be greater than 0")}
	}
	start := time.Now().Add(-c.Since)
	var evs []history.Event
	if c.StoragePath != "" {
		s, err := history.OpenReadOnly(filepath.Join(c.StoragePath, history.FileName))
		if err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
		defer s.Close()
		p, err := s.Query(e.ctx, history.Query{Alertname: c.Alertname, Types: c.Type, Start: start, Limit: c.Limit})
		if err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
		evs = p.Events
	} else {
		p, err := newHistoryClient(c.URL).Query(e.ctx, history.Query{Alertname: c.Alertname, Types: c.Type, Start: start, Limit: c.Limit})
		if err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
		evs = p.Events
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "Time\tType\tAlertname\tOutcome\tReceiver\tUser\tLabels")
	for _, ev := range evs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.Time.Local().Format("2006-01-02 15:04:05 MST"), ev.Type, ev.Alertname,
			ev.Outcome, strings.Trim(ev.Receiver+"/"+ev.Integration, "/"), ev.User, report.LabelText(ev.Labels))
	}
	return w.Flush()
}
