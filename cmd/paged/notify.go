package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/pagedhq/paged/notifier"
)

// notifyTestCmd sends a sample alert to every integration of one receiver,
// bypassing routing, silences and deduplication, and reports each outcome.
type notifyTestCmd struct {
	Config   string `help:"Configuration file." default:"paged.yaml" type:"string"`
	Receiver string `help:"Name of the receiver in notifier.receivers." required:""`
}

func (c *notifyTestCmd) Run(e *env) error {
	cfg, err := loadConfigTo(e, c.Config, e.stderr, true)
	if err != nil {
		return err
	}
	if cfg.NotifierConfig == nil {
		return usageError("%s: no notifier: block", c.Config)
	}
	opts := notifier.Options{
		Config: cfg.NotifierConfig,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if cfg.Global.ExternalURL != nil {
		opts.ExternalURL = cfg.Global.ExternalURL.String()
	}
	if cfg.RunbookBaseURL != nil {
		opts.RunbookBaseURL = cfg.RunbookBaseURL.String()
	}
	results, err := notifier.SendTest(e.ctx, opts, c.Receiver)
	if err != nil {
		return usageError("%v", err)
	}
	failed := 0
	for _, r := range results {
		if r.Err != nil {
			failed++
			fmt.Fprintf(e.stdout, "%s/%s: FAILED: %v\n", c.Receiver, r.Integration, r.Err)
			continue
		}
		fmt.Fprintf(e.stdout, "%s/%s: sent\n", c.Receiver, r.Integration)
	}
	if failed > 0 {
		return problems()
	}
	return nil
}
