package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/discover"
	"github.com/pagedhq/paged/engine"
)

// initCmd is `paged init`: it asks a Prometheus (or scrapes targets) which
// LLM servers run there and writes the paged.yaml that fits them.
type initCmd struct {
	Prometheus string        `name:"prometheus" placeholder:"URL" help:"The Prometheus-compatible API that scrapes your LLM servers (Prometheus, Thanos Query, Mimir, VictoriaMetrics), without /api/v1."`
	Scrape     []string      `name:"scrape" placeholder:"HOST:PORT" sep:"," help:"Scrape these targets' /metrics once instead of asking a Prometheus, and write a configuration in which paged scrapes them itself (embedded datasource). Repeatable, or comma-separated."`
	Output     string        `name:"output" short:"o" placeholder:"FILE" default:"paged.yaml" help:"Where to write the configuration."`
	Force      bool          `name:"force" help:"Replace the output file if it exists."`
	HTTPConfig string        `name:"http-config" placeholder:"FILE" help:"A file with Prometheus's http_config (basic_auth, authorization, tls_config, http_headers such as X-Scope-OrgID for Mimir), used for the questions and copied into the written datasource. Secrets must be *_file references."`
	Timeout    time.Duration `name:"timeout" default:"10s" help:"Timeout of each question or scrape."`
	Lookback   time.Duration `name:"lookback" default:"1h" help:"How far back to list metric names (with --prometheus)."`
}

func (c *initCmd) Run(e *env) error { return e.lines(c.run(e)) }

func (c *initCmd) run(e *env) error {
	switch {
	case c.Prometheus == "" && len(c.Scrape) == 0:
		return usageError("init: give --prometheus URL (the Prometheus, Thanos, Mimir or VictoriaMetrics that scrapes your LLM servers) or --scrape HOST:PORT... (paged scrapes them itself)")
	case c.Prometheus != "" && len(c.Scrape) > 0:
		return usageError("init: --prometheus and --scrape exclude each other: ask a Prometheus, or scrape the servers")
	case c.HTTPConfig != "" && c.Prometheus == "":
		return usageError("init: --http-config is for --prometheus (the scraped targets are asked without credentials)")
	case c.Timeout <= 0:
		return usageError("init: --timeout %s: want a duration greater than 0", c.Timeout)
	case c.Lookback <= 0:
		return usageError("init: --lookback %s: want a duration greater than 0", c.Lookback)
	case strings.TrimSpace(c.Output) == "":
		return usageError("init: -o: want a file name")
	}
	remote := engine.RemoteOptions{URL: c.Prometheus, Timeout: c.Timeout, HTTPConfig: promconfig.DefaultHTTPClientConfig}
	if c.Prometheus != "" {
		if err := checkPrometheusURL(c.Prometheus); err != nil {
			return err
		}
	}
	var targets []string
	for _, t := range c.Scrape {
		t = strings.TrimSpace(t)
		if err := checkTarget(t); err != nil {
			return err
		}
		if !contains(targets, t) {
			targets = append(targets, t)
		}
	}
	var httpYAML []byte
	if c.HTTPConfig != "" {
		hc, err := config.LoadHTTPClientConfig(c.HTTPConfig, e.getenv)
		if err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
		if inline := inlineSecrets(&hc); len(inline) > 0 {
			return usageError("init: --http-config %s: %s written in the file: use the *_file form (password_file, credentials_file, client_secret_file, files: in http_headers) so that the written paged.yaml carries no secret", c.HTTPConfig, strings.Join(inline, ", "))
		}
		remote.HTTPConfig = hc
		if httpYAML, err = yamlv2.Marshal(hc); err != nil {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("init: --http-config: %w", err)}
		}
	}
	// Refuse before asking anything.
	if err := checkOutput(c.Output, c.Force); err != nil {
		return err
	}

	var (
		inv *discover.Inventory
		ds  engine.Datasource
		err error
	)
	now := time.Now()
	if c.Prometheus != "" {
		var r *engine.Remote
		inv, r, err = discover.FromPrometheus(e.ctx, discover.PrometheusOptions{Remote: remote, Lookback: c.Lookback, Now: now})
		if err != nil {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("init: %w", err)}
		}
		ds = r
		fmt.Fprintf(e.stdout, "Asked %s: %d metric names in the last %s.\n", inv.Source, inv.Names, model.Duration(c.Lookback))
	} else {
		inv = discover.FromTargets(e.ctx, targets, discover.ScrapeOptions{Timeout: c.Timeout})
		fmt.Fprintf(e.stdout, "Scraped %s:\n", plural(len(targets), "target"))
		for _, t := range inv.Targets {
			switch {
			case t.Err != nil:
				fmt.Fprintf(e.stdout, "  %s: %v: left out\n", t.Addr, t.Err)
			case len(t.Packs) == 0:
				fmt.Fprintf(e.stdout, "  %s: %d metric names, none of an LLM server paged knows: left out\n", t.Addr, t.Names)
			default:
				fmt.Fprintf(e.stdout, "  %s: %s (%d metric names), job %s\n", t.Addr, strings.Join(t.Packs, ", "), t.Names, t.Job)
			}
		}
	}
	if len(inv.Packs) == 0 {
		for _, n := range inv.Notes {
			fmt.Fprintln(e.stdout, "Note: "+n)
		}
		return &exitError{Code: exitProblems, Err: fmt.Errorf("init: found no metrics of vLLM, TGI, SGLang, Triton or dcgm-exporter (%s): nothing written", inv.Source)}
	}
	fmt.Fprintln(e.stdout, "Found:")
	for _, p := range inv.Packs {
		sel := p.Selector()
		if sel == "" {
			sel = "(no selector)"
		}
		fmt.Fprintf(e.stdout, "  %-8s %s: %s; selector %s\n", p.Pack, p.Title, p.JobList(), sel)
	}
	for _, n := range inv.Notes {
		fmt.Fprintln(e.stdout, "Note: "+n)
	}

	var timeout time.Duration // the default is not written
	if c.Timeout != config.DefaultDatasourceTimeout {
		timeout = c.Timeout
	}
	content, err := inv.Config(discover.ConfigOptions{
		Command:       c.commandLine(),
		PrometheusURL: c.Prometheus,
		Timeout:       timeout,
		HTTPConfig:    httpYAML,
		NoSeriesAfter: config.DefaultNoSeriesAfter,
		File:          filepath.Base(c.Output),
		Now:           now,
	})
	if err != nil {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("init: %w", err)}
	}
	// Never write a file paged itself would refuse.
	if _, err := config.Parse(content, c.Output, e.getenv); err != nil {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("init: the configuration written for these servers does not load, which is a bug in paged init; nothing written:\n%w", err)}
	}
	if err := writeNew(c.Output, content, c.Force); err != nil {
		return err
	}
	names := make([]string, len(inv.Packs))
	for i, p := range inv.Packs {
		names[i] = p.Pack
	}
	fmt.Fprintf(e.stdout, "Wrote %s: %s %s. Check it: paged check-config %s\n", c.Output, map[bool]string{true: "pack", false: "packs"}[len(names) == 1], strings.Join(names, ", "), c.Output)

	rep, err := inv.Check(e.ctx, ds, now)
	if err != nil {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("init: checking the packs' selectors: %w", err)}
	}
	printReport(e.stdout, rep, inv.Source)
	return nil
}

// printReport lists the pack rules that match no series, with the
// catalogue's reason.
func printReport(w io.Writer, rep *discover.Report, source string) {
	fmt.Fprintln(w)
	if len(rep.Dead) == 0 && len(rep.Failed) == 0 {
		fmt.Fprintf(w, "Every rule of these packs reads series that exist on %s (%d rules, %d selectors counted).\n", source, rep.Rules, rep.Selectors)
	} else if len(rep.Dead) > 0 {
		fmt.Fprintf(w, "Rules that match no series on %s (each would raise PagedRuleNoSeries after no_series_after):\n", source)
	}
	for _, f := range rep.Dead {
		fmt.Fprintf(w, "  %s %s: %s matches no series", f.Pack, f.Rule, f.Selector)
		if f.Checked != f.Selector {
			fmt.Fprintf(w, " (counted as %s)", f.Checked)
		}
		fmt.Fprintln(w)
		if f.Hint != "" {
			fmt.Fprintf(w, "      %s\n", f.Hint)
		}
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(w, "  %s %s: %s could not be counted: %v\n", f.Pack, f.Rule, f.Checked, f.Err)
	}
	if len(rep.Dead) > 0 || len(rep.Failed) > 0 {
		fmt.Fprintf(w, "%d of %d rules match nothing", rep.DeadRules(), rep.Rules)
		if len(rep.Failed) > 0 {
			fmt.Fprintf(w, ", %d selectors could not be counted", len(rep.Failed))
		}
		fmt.Fprintln(w, ": fix the selector, disable the alert (packs: disable:), or enable the metric on the server.")
	}
	if len(rep.Skipped) > 0 {
		var reasons []string
		for _, f := range rep.Skipped {
			r := f.Selector + ": " + f.Skip
			if !contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
		fmt.Fprintf(w, "Not checked, as PagedRuleNoSeries does not check them (%d):\n", len(reasons))
		for _, r := range reasons {
			fmt.Fprintf(w, "  %s\n", r)
		}
	}
}

// checkPrometheusURL refuses what is not an http(s) URL, and credentials
// in it (they would land in the written file).
func checkPrometheusURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError("init: --prometheus %q: want an http(s) URL such as http://prometheus:9090", engine.RedactURL(raw))
	}
	if u.User != nil {
		return usageError("init: --prometheus %s: the URL carries credentials, which would be written into the configuration: put them in an http_config file (basic_auth with password_file) and give --http-config FILE", engine.RedactURL(raw))
	}
	return nil
}

// checkTarget accepts host:port with a port in 1-65535.
func checkTarget(t string) error {
	host, port, err := net.SplitHostPort(t)
	if err != nil || host == "" || strings.Contains(t, "/") {
		return usageError("init: --scrape %q: want host:port, such as 127.0.0.1:8000", t)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return usageError("init: --scrape %q: port %q: want 1-65535", t, port)
	}
	return nil
}

// checkOutput refuses an existing file without --force, and a directory.
func checkOutput(path string, force bool) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, err := os.Stat(filepath.Dir(path)); err != nil {
			return usageError("init: -o %s: directory %s does not exist", path, filepath.Dir(path))
		}
		return nil
	case err != nil:
		return &exitError{Code: exitUsage, Err: fmt.Errorf("init: %w", err)}
	case st.IsDir():
		return usageError("init: -o %s is a directory: want a file name", path)
	case !force:
		return usageError("init: %s exists: not overwritten (give --force to replace it, or -o another file)", path)
	}
	return nil
}

// writeNew writes the file through a temporary file in the same
// directory: renamed over the old one with force, else linked to its name,
// which fails if a file appeared there meanwhile.
func writeNew(path string, content []byte, force bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("init: %w", err)}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		if force {
			err = os.Rename(tmp.Name(), path)
		} else if err = os.Link(tmp.Name(), path); errors.Is(err, os.ErrExist) {
			return usageError("init: %s exists: not overwritten (give --force to replace it, or -o another file)", path)
		}
	}
	if err != nil {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("init: write %s: %w", path, err)}
	}
	return nil
}

// inlineSecrets names the secrets written in an http_config rather than
// read from files.
func inlineSecrets(hc *promconfig.HTTPClientConfig) []string {
	var out []string
	if hc.BasicAuth != nil && hc.BasicAuth.Password != "" {
		out = append(out, "basic_auth.password")
	}
	if hc.Authorization != nil && hc.Authorization.Credentials != "" {
		out = append(out, "authorization.credentials")
	}
	if hc.OAuth2 != nil && hc.OAuth2.ClientSecret != "" {
		out = append(out, "oauth2.client_secret")
	}
	if hc.BearerToken != "" {
		out = append(out, "bearer_token")
	}
	if hc.HTTPHeaders != nil {
		for name, h := range hc.HTTPHeaders.Headers {
			if len(h.Secrets) > 0 {
				out = append(out, "http_headers."+name+".secrets")
			}
		}
	}
	if len(hc.ProxyConnectHeader) > 0 {
		out = append(out, "proxy_connect_header")
	}
	return out
}

// commandLine is the command as the header of the written file quotes it.
func (c *initCmd) commandLine() string {
	parts := []string{"paged init"}
	if c.Prometheus != "" {
		parts = append(parts, "--prometheus "+engine.RedactURL(c.Prometheus))
	}
	for _, t := range c.Scrape {
		parts = append(parts, "--scrape "+t)
	}
	if c.HTTPConfig != "" {
		parts = append(parts, "--http-config "+c.HTTPConfig)
	}
	return strings.Join(parts, " ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
