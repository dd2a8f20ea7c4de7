package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/packs"
	"github.com/pagedhq/paged/web"
)

// exportCmd is `paged export`: the packs, overrides applied, for a
// Prometheus, a prometheus-operator (kube-prometheus-stack) or a Mimir or
// Cortex ruler that paged does not run, and their runbooks as static pages.
type exportCmd struct {
	Format         string   `name:"format" enum:"rules,prometheusrule,mimir,grafana," default:"" placeholder:"FORMAT" help:"rules (a Prometheus rule file), prometheusrule (a monitoring.coreos.com/v1 PrometheusRule manifest) , mimir (a mimirtool rules load namespace file) or grafana (one Grafana dashboard per pack, JSON). Default rules, or none with only --runbooks."`
	Config         string   `name:"config" placeholder:"FILE" type:"string" help:"Export the packs of this paged.yaml with their overrides (and its runbook_base_url)."`
	Output         string   `name:"output" short:"o" placeholder:"DIR" type:"path" help:"Write one file per pack into DIR (<pack>.yaml) instead of standard output."`
	RunbookBaseURL string   `name:"runbook-base-url" placeholder:"URL" help:"Make relative runbook_url annotations absolute under URL (where the runbooks are published)."`
	RunbookSuffix  string   `name:"runbook-suffix" placeholder:".html" help:"Replace the .md of relative runbook links: .html for the pages --runbooks writes."`
	Runbooks       string   `name:"runbooks" placeholder:"DIR" type:"path" help:"Write the packs' runbooks into DIR as static HTML pages (with their markdown) to publish."`
	Name           string   `name:"name" placeholder:"NAME" help:"PrometheusRule metadata.name (one pack only; default paged-<pack>)."`
	Namespace      string   `name:"namespace" placeholder:"NS" help:"PrometheusRule metadata.namespace, or the Mimir ruler namespace (default: the pack's name)."`
	ManifestLabel  []string `name:"manifest-label" sep:"none" placeholder:"NAME=VALUE" help:"PrometheusRule metadata label, for kube-prometheus-stack's ruleSelector (release=<helm release>). Repeatable."`
	overrideFlags
	Packs []string `arg:"" optional:"" name:"pack" help:"Built-in packs or pack directories (default: every built-in pack)."`
}

func (c *exportCmd) Run(e *env) error { return e.lines(c.run(e)) }

func (c *exportCmd) run(e *env) error {
	format := c.Format
	if format == "" && c.Runbooks == "" {
		format = packs.FormatRules
	}
	if format == "" && (c.Output != "" || c.Name != "" || c.Namespace != "" || len(c.ManifestLabel) > 0) {
		return usageError("export: --output, --name, --namespace and --manifest-label need --format")
	}
	var o packs.Overrides
	if c.RunbookBaseURL != "" {
		u, err := url.Parse(c.RunbookBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError("export: --runbook-base-url %q: want an http(s) URL", c.RunbookBaseURL)
		}
		o.RunbookBaseURL = u
	}
	o.RunbookSuffix = c.RunbookSuffix
	if c.RunbookSuffix != "" && !strings.HasPrefix(c.RunbookSuffix, ".") {
		return usageError("export: --runbook-suffix %q: want a suffix such as .html", c.RunbookSuffix)
	}
	labels := map[string]string{}
	for _, l := range c.ManifestLabel {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return usageError("export: --manifest-label %q: want NAME=VALUE", l)
		}
		labels[k] = v
	}

	var (
		rendered []*packs.Rendered
		plain    []*packs.Rendered // without the runbook rewrite, for --runbooks
		err      error
	)
	switch {
	case c.Config != "":
		if len(c.Packs) > 0 || c.given() {
			return usageError("export: with --config the packs and their overrides come from paged.yaml; leave out the pack names and the override flags")
		}
		cfg, err := loadConfig(e, c.Config)
		if err != nil {
			return err
		}
		if len(cfg.Packs) == 0 {
			return &exitError{Code: exitProblems, Err: fmt.Errorf("export: %s loads no packs (packs:)", c.Config)}
		}
		if o.RunbookBaseURL == nil {
			o.RunbookBaseURL = configRunbookBase(cfg)
		}
		for _, pc := range cfg.Packs {
			po := pc.Overrides
			po.RunbookBaseURL, po.RunbookSuffix = o.RunbookBaseURL, o.RunbookSuffix
			r, err := pc.Rendered.Pack.Apply(po)
			if err != nil {
				return &exitError{Code: exitProblems, Err: errors.Join(flagErrors(pc.Rendered.Pack, err)...)}
			}
			rendered = append(rendered, r)
			plain = append(plain, pc.Rendered)
		}
	default:
		if rendered, err = resolvePacks(c.Packs, &c.overrideFlags, o); err != nil {
			return err
		}
		if plain, err = resolvePacks(c.Packs, &c.overrideFlags, packs.Overrides{}); err != nil {
			return err
		}
	}

	if format != "" {
		eo := packs.ExportOptions{Format: format, Name: c.Name, Namespace: c.Namespace, Labels: labels, Generator: "paged " + version}
		if err := c.writePacks(e, rendered, eo); err != nil {
			return err
		}
		if o.RunbookBaseURL == nil && format != packs.FormatGrafana {
			fmt.Fprintln(e.stderr, "paged: note: runbook_url annotations stay relative (vllm/VLLMKVCacheSaturated.md); give --runbook-base-url where the runbooks are published (paged export --runbooks DIR writes them)")
		}
	}
	if c.Runbooks != "" {
		return c.writeRunbooks(e, plain)
	}
	return nil
}

func (c *exportCmd) writePacks(e *env, rendered []*packs.Rendered, eo packs.ExportOptions) error {
	if c.Output == "" {
		out, err := packs.Join(rendered, eo)
		if err != nil {
			return usageError("export: %v", err)
		}
		_, err = e.stdout.Write(out)
		return err
	}
	outs, err := packs.Export(rendered, eo)
	if err != nil {
		return usageError("export: %v", err)
	}
	if err := os.MkdirAll(c.Output, 0o755); err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	for _, out := range outs {
		p := filepath.Join(c.Output, out.File)
		if err := writeFileAtomic(p, func(w io.Writer) error { _, err := w.Write(out.Content); return err }); err != nil {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("export: %w", err)}
		}
		fmt.Fprintf(e.stderr, "wrote %s (pack %s, %s)\n", p, out.Pack, eo.Format)
	}
	return nil
}

// writeRunbooks writes the built-in runbooks that the packs' alerts link
// to.
func (c *exportCmd) writeRunbooks(e *env, rendered []*packs.Rendered) error {
	src := web.BuiltinRunbooks()
	var paths []string
	for _, r := range rendered {
		for _, g := range r.File.Groups {
			for _, rule := range g.Rules {
				v, ok := rule.Annotation("runbook_url")
				if !ok || v.Value == "" || strings.Contains(v.Value, "://") {
					continue
				}
				p := strings.TrimPrefix(v.Value, "/")
				if _, err := fs.Stat(src, p); err != nil {
					fmt.Fprintf(e.stderr, "paged: note: %s: runbook %s is not built into paged; not written\n", rule.Name(), p)
					continue
				}
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	written, err := web.WriteRunbookSite(c.Runbooks, src, paths)
	if err != nil {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("export --runbooks: %w", err)}
	}
	fmt.Fprintf(e.stderr, "wrote %d runbook pages into %s (index.html); link them with --runbook-base-url URL --runbook-suffix .html\n", len(written), c.Runbooks)
	return nil
}

// configRunbookBase is where a configuration's relative runbook links
// point: runbook_base_url, or paged's own /runbooks/.
func configRunbookBase(cfg *config.Config) *url.URL {
	if cfg.RunbookBaseURL != nil {
		return cfg.RunbookBaseURL
	}
	u := *cfg.Global.ExternalURL
	u.Path = strings.TrimSuffix(u.Path, "/") + "/runbooks/"
	return &u
}
