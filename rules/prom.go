package rules

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// promAPI asks a live Prometheus (or a server with its HTTP API: Thanos,
// Mimir, VictoriaMetrics) about series, label values, metadata and the
// history of an expression.
type promAPI struct {
	url     string
	api     v1.API
	timeout time.Duration
	now     func() time.Time
}

// NewPrometheusAPI returns the online-check client for a Prometheus URL.
func NewPrometheusAPI(rawURL string) (PrometheusAPI, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("not an http(s) URL: %q", rawURL)
	}
	c, err := api.NewClient(api.Config{Address: rawURL})
	if err != nil {
		return nil, err
	}
	return &promAPI{url: u.Redacted(), api: v1.NewAPI(c), timeout: 30 * time.Second, now: time.Now}, nil
}

func (p *promAPI) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), p.timeout)
}

// SeriesExist reports whether the selector matches any series in the last
// hour.
func (p *promAPI) SeriesExist(selector string) (bool, error) {
	return p.SeriesWithin(selector, time.Hour)
}

// SeriesWithin reports whether the selector matched any series in the
// last d.
func (p *promAPI) SeriesWithin(selector string, d time.Duration) (bool, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	now := p.now()
	sets, _, _, err := p.api.Series(ctx, []string{selector}, now.Add(-d), now, v1.WithLimit(1))
	if err != nil {
		return false, err
	}
	return len(sets) > 0, nil
}

// LabelValues lists the values of a label on the series of a selector in
// the last d, sorted.
func (p *promAPI) LabelValues(label, selector string, d time.Duration) ([]string, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	now := p.now()
	vals, _, _, err := p.api.LabelValues(ctx, label, []string{selector}, now.Add(-d), now, v1.WithLimit(50))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		out = append(out, string(v))
	}
	slices.Sort(out)
	return out, nil
}

// MetricType is the type the server's metadata gives a metric family
// ("counter", "gauge", ...), or "" when it has none.
func (p *promAPI) MetricType(family string) (string, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	md, err := p.api.Metadata(ctx, family, "1")
	if err != nil {
		return "", err
	}
	for _, m := range md[family] {
		return string(m.Type), nil
	}
	return "", nil
}

// QueryRange evaluates expr over the last window at step.
func (p *promAPI) QueryRange(expr string, window, step time.Duration) (model.Matrix, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	now := p.now()
	v, _, _, err := p.api.QueryRange(ctx, expr, v1.Range{Start: now.Add(-window), End: now, Step: step})
	if err != nil {
		return nil, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query_range returned %s, not a matrix", v.Type())
	}
	return m, nil
}

// CountSeries is how many series the selector matches now.
func (p *promAPI) CountSeries(selector string) (int, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	v, _, _, err := p.api.Query(ctx, "count("+selector+")", p.now())
	if err != nil {
		return 0, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return 0, fmt.Errorf("query returned %s, not a vector", v.Type())
	}
	if len(vec) == 0 {
		return 0, nil
	}
	return int(vec[0].Value), nil
}

// ExternalLabels are the server's global.external_labels, read from its
// configuration (/api/v1/status/config).
func (p *promAPI) ExternalLabels() (map[string]string, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	cfg, err := p.api.Config(ctx)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Global struct {
			ExternalLabels map[string]string `yaml:"external_labels"`
		} `yaml:"global"`
	}
	if err := yaml.Unmarshal([]byte(cfg.YAML), &doc); err != nil {
		return nil, fmt.Errorf("reading the server's configuration: %w", err)
	}
	if doc.Global.ExternalLabels == nil {
		doc.Global.ExternalLabels = map[string]string{}
	}
	return doc.Global.ExternalLabels, nil
}

// Unreachable reports whether err says the server could not be reached
// at all (connection refused, DNS, timeout), as opposed to an answer: a
// refused query or an endpoint the server does not have.
func Unreachable(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded)
}
