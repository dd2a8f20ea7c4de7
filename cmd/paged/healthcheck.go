package main

import (
	"fmt"
	"net/http"
	"time"
)

// healthcheckCmd probes a running paged, for container HEALTHCHECKs and
// images without curl: exit 0 when the URL answers 200, 1 otherwise.
type healthcheckCmd struct {
	URL     string        `arg:"" optional:"" default:"http://127.0.0.1:9095/-/healthy" help:"URL to probe."`
	Timeout time.Duration `default:"5s" help:"Give up after this long."`
}

func (c *healthcheckCmd) Run(e *env) error {
	client := &http.Client{Timeout: c.Timeout}
	resp, err := client.Get(c.URL)
	if err != nil {
		fmt.Fprintf(e.stderr, "paged healthcheck: %v\n", err)
		return problems()
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(e.stderr, "paged healthcheck: %s answered %s\n", c.URL, resp.Status)
		return problems()
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", c.URL, resp.Status)
	return nil
}
