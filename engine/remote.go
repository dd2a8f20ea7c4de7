package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// RemoteOptions configure a Remote datasource.
type RemoteOptions struct {
	// URL of a Prometheus-compatible query API (Prometheus, Thanos Query,
	// Mimir, VictoriaMetrics...), without the /api/v1 suffix. Required.
	URL string
	// Timeout of one query, sent to the server as its timeout parameter
	// too. Default 10s.
	Timeout time.Duration
	// HTTPConfig carries basic_auth, authorization, oauth2 and tls_config.
	HTTPConfig config.HTTPClientConfig
}

// Remote queries a Prometheus-compatible HTTP API: one instant query per
// rule and evaluation, at the evaluation timestamp.
type Remote struct {
	api     v1.API
	timeout time.Duration
	name    string
}

// NewRemote validates the options and builds the HTTP client.
func NewRemote(o RemoteOptions) (*Remote, error) {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	a, err := NewPrometheusAPI(o, "paged_datasource")
	if err != nil {
		return nil, err
	}
	return &Remote{api: a, timeout: o.Timeout, name: RedactURL(o.URL)}, nil
}

// NewPrometheusAPI validates the options and returns a client of the
// Prometheus HTTP API with their authentication and TLS settings. clientName
// names the HTTP client in prometheus/common's metrics. Errors never carry
// credentials of the URL.
func NewPrometheusAPI(o RemoteOptions, clientName string) (v1.API, error) {
	if o.URL == "" {
		return nil, errors.New("datasource: url is required")
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("datasource: invalid url: %w", redactURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("datasource: url %s: scheme must be http or https", RedactURL(o.URL))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("datasource: url %s: host is missing", RedactURL(o.URL))
	}
	if err := o.HTTPConfig.Validate(); err != nil {
		return nil, fmt.Errorf("datasource: http_config: %w", err)
	}
	rt, err := config.NewRoundTripperFromConfig(o.HTTPConfig, clientName)
	if err != nil {
		return nil, fmt.Errorf("datasource: http_config: %w", err)
	}
	c, err := api.NewClient(api.Config{Address: o.URL, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("datasource: %w", redactURLError(err))
	}
	return v1.NewAPI(c), nil
}

// String returns the datasource URL without credentials.
func (r *Remote) String() string { return r.name }

// Query runs an instant query at ts.
func (r *Remote) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	val, _, _, err := r.api.Query(ctx, expr, ts, v1.WithTimeout(r.timeout))
	if err != nil {
		return nil, classifyRemote(err)
	}
	return toVector(val)
}

// classifyRemote tells "Prometheus answered and rejected the query" (400
// bad_data, 422 execution) from "no usable answer" (everything else).
func classifyRemote(err error) error {
	var ae *v1.Error
	if errors.As(err, &ae) {
		switch ae.Type {
		case v1.ErrBadData, v1.ErrExec:
			return &DatasourceError{Kind: KindQuery, Err: errors.New(ae.Msg)}
		}
		// Detail holds the response body: keep it out of errors, it may be
		// large and may echo request headers.
		return Unavailable(fmt.Errorf("%s: %s", ae.Type, ae.Msg))
	}
	return Unavailable(redactURLError(err))
}

// toVector converts an API result to the vector a rule evaluates.
func toVector(val model.Value) (promql.Vector, error) {
	switch v := val.(type) {
	case model.Vector:
		out := make(promql.Vector, 0, len(v))
		b := labels.NewScratchBuilder(8)
		for _, s := range v {
			b.Reset()
			for n, lv := range s.Metric {
				b.Add(string(n), string(lv))
			}
			b.Sort()
			out = append(out, promql.Sample{Metric: b.Labels(), T: int64(s.Timestamp), F: float64(s.Value)})
		}
		return out, nil
	case *model.Scalar:
		return promql.Vector{{Metric: labels.EmptyLabels(), T: int64(v.Timestamp), F: float64(v.Value)}}, nil
	case nil:
		return nil, &DatasourceError{Kind: KindQuery, Err: errors.New("empty result")}
	default:
		return nil, &DatasourceError{Kind: KindQuery, Err: fmt.Errorf("rule result is a %s, not a vector or scalar", val.Type())}
	}
}

// RedactURL removes the password (and user) from a URL for logs and errors.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid url>"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	q := u.Query()
	changed := false
	for k := range q {
		q.Set(k, "xxxxx")
		changed = true
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// redactURLError rewrites a *url.Error so that its URL carries no
// credentials.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &url.Error{Op: ue.Op, URL: RedactURL(ue.URL), Err: ue.Err}
	}
	return err
}
