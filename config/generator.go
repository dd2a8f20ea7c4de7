package config

import (
	"fmt"
	"net/url"
	"strings"
	"text/template"

	"github.com/prometheus/prometheus/util/strutil"
	"go.yaml.in/yaml/v3"
)

// Where an alert's generatorURL (Slack's Source button, Alertmanager's
// "Source" link) leads:
//
//   - embedded mode: paged's own /graph, which charts the expression
//     from the embedded TSDB;
//   - remote mode: the datasource's own graph page, at
//     datasource.prometheus.external_url (default: its url), as
//     Prometheus writes it ({base}/graph?g0.expr=…&g0.tab=1);
//   - datasource.prometheus.generator_url_template, when set: a Go
//     text/template over {Expr, ExternalURL, DatasourceURL} (with
//     urlquery and js), e.g. for Grafana Explore.

// generatorData is what a generator_url_template sees.
type generatorData struct {
	// Expr is the rule's expression.
	Expr string
	// ExternalURL is paged's global.external_url; DatasourceURL is the
	// datasource's external_url (or its url), without credentials.
	ExternalURL, DatasourceURL string
}

func parseGeneratorTemplate(s string) (*template.Template, error) {
	t, err := template.New("generator_url_template").Option("missingkey=error").Parse(s)
	if err != nil {
		return nil, err
	}
	// Rendering it once proves that it names only fields that exist and
	// writes a URL.
	var b strings.Builder
	if err := t.Execute(&b, generatorData{Expr: `up{job="x"} > 0`, ExternalURL: "http://paged.example", DatasourceURL: "http://prometheus.example"}); err != nil {
		return nil, err
	}
	u, err := url.Parse(strings.TrimSpace(b.String()))
	if err != nil {
		return nil, fmt.Errorf("does not render a URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("renders %q: want an http(s) URL", b.String())
	}
	return t, nil
}

func (d *decoder) generatorTemplate(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		if _, err := parseGeneratorTemplate(v); err != nil {
			d.errorf(n, key, "invalid template: %v", err)
			return
		}
		*dst = v
	}
}

// GeneratorURL returns the function that writes an alert's generatorURL
// from its rule's expression, for cfg.
func GeneratorURL(cfg *Config) func(expr string) string {
	external := strings.TrimRight(cfg.Global.ExternalURL.String(), "/")
	if cfg.Datasource.Type == DatasourceEmbedded {
		return func(expr string) string { return external + strutil.TableLinkForExpression(expr) }
	}
	p := cfg.Datasource.Prometheus
	base := p.ExternalURL
	if base == nil {
		base = p.URL
	}
	ds := ""
	if base != nil {
		u := *base
		u.User = nil // never a password in a link
		ds = strings.TrimRight(u.String(), "/")
	}
	if p.GeneratorURLTemplate != "" {
		t, err := parseGeneratorTemplate(p.GeneratorURLTemplate)
		if err == nil {
			return func(expr string) string {
				var b strings.Builder
				if err := t.Execute(&b, generatorData{Expr: expr, ExternalURL: external, DatasourceURL: ds}); err != nil {
					return ds + strutil.TableLinkForExpression(expr)
				}
				return strings.TrimSpace(b.String())
			}
		}
	}
	return func(expr string) string { return ds + strutil.TableLinkForExpression(expr) }
}
