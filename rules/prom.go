package rules

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// promAPI asks a live Prometheus whether series exist.
type promAPI struct {
	api     v1.API
	timeout time.Duration
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
	return &promAPI{api: v1.NewAPI(c), timeout: 30 * time.Second}, nil
}

// SeriesExist reports whether the selector matches any series in the last
// hour.
func (p *promAPI) SeriesExist(selector string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	now := time.Now()
	sets, _, _, err := p.api.Series(ctx, []string{selector}, now.Add(-time.Hour), now)
	if err != nil {
		return false, err
	}
	return len(sets) > 0, nil
}
