package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	client  api.Client
	timeout time.Duration
	name    string
}

// NewRemote validates the options and builds the HTTP client.
func NewRemote(o RemoteOptions) (*Remote, error) {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	c, err := newClient(o, "paged_datasource")
	if err != nil {
		return nil, err
	}
	return &Remote{client: c, timeout: o.Timeout, name: RedactURL(o.URL)}, nil
}

// NewPrometheusAPI validates the options and returns a client of the
// Prometheus HTTP API with their authentication and TLS settings. clientName
// names the HTTP client in prometheus/common's metrics. Errors never carry
// credentials of the URL.
func NewPrometheusAPI(o RemoteOptions, clientName string) (v1.API, error) {
	c, err := newClient(o, clientName)
	if err != nil {
		return nil, err
	}
	return v1.NewAPI(c), nil
}

// newClient validates the options and builds client_golang's HTTP client
// with their authentication and TLS settings.
func newClient(o RemoteOptions, clientName string) (api.Client, error) {
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
	return c, nil
}

// String returns the datasource URL without credentials.
func (r *Remote) String() string { return r.name }

// Query runs an instant query at ts: a POST of the form Prometheus's API
// takes (a GET when the server refuses POST, as client_golang does), the
// answer decoded by decodeQueryResponse.
func (r *Remote) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	args := url.Values{}
	args.Set("query", expr)
	args.Set("time", strconv.FormatFloat(float64(ts.Unix())+float64(ts.Nanosecond())/1e9, 'f', -1, 64))
	args.Set("timeout", r.timeout.String())
	form := args.Encode()
	u := r.client.URL("/api/v1/query", nil)
	req, err := http.NewRequest(http.MethodPost, u.String(), strings.NewReader(form))
	if err != nil {
		return nil, Unavailable(redactURLError(err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header["Idempotency-Key"] = nil // retried on a broken keep-alive connection
	resp, body, err := r.client.Do(ctx, req)
	if err == nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented) {
		u.RawQuery = form
		if req, err = http.NewRequest(http.MethodGet, u.String(), nil); err != nil {
			return nil, Unavailable(redactURLError(err))
		}
		resp, body, err = r.client.Do(ctx, req)
	}
	if err != nil {
		return nil, Unavailable(redactURLError(err))
	}
	return queryResult(resp.StatusCode, body)
}

// queryResult turns an answer into a vector or a classified error: 400
// and 422 carry Prometheus's error type (bad_data and execution are query
// errors); other non-2xx codes and undecodable bodies mean the datasource
// did not answer. The body never goes into an error: it may be large and
// may echo request headers.
func queryResult(code int, body []byte) (promql.Vector, error) {
	if code/100 != 2 && code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
		if code/100 == 5 {
			return nil, Unavailable(fmt.Errorf("server_error: server error: %d", code))
		}
		if code/100 == 4 {
			return nil, Unavailable(fmt.Errorf("client_error: client error: %d", code))
		}
		return nil, Unavailable(fmt.Errorf("bad_response: bad response code %d", code))
	}
	r, err := decodeQueryResponse(body)
	if err != nil {
		if code/100 != 2 {
			return nil, Unavailable(fmt.Errorf("client_error: client error: %d", code))
		}
		return nil, Unavailable(fmt.Errorf("bad_response: %w", err))
	}
	if code/100 != 2 || r.status == "error" {
		if code/100 != 2 && r.status == "success" {
			return nil, Unavailable(errors.New("bad_response: inconsistent body for response code"))
		}
		typ, msg := r.errorType, r.errorMsg
		if typ == "" {
			typ = "client_error"
		}
		if msg == "" {
			msg = fmt.Sprintf("client error: %d", code)
		}
		if typ == string(v1.ErrBadData) || typ == string(v1.ErrExec) {
			return nil, &DatasourceError{Kind: KindQuery, Err: errors.New(msg)}
		}
		return nil, Unavailable(fmt.Errorf("%s: %s", typ, msg))
	}
	switch r.resultType {
	case "vector":
		if r.vector == nil {
			return promql.Vector{}, nil
		}
		return r.vector, nil
	case "scalar":
		s, err := r.sample()
		if err != nil {
			return nil, Unavailable(fmt.Errorf("bad_response: %w", err))
		}
		return promql.Vector{s}, nil
	case "":
		return nil, &DatasourceError{Kind: KindQuery, Err: errors.New("empty result")}
	default:
		return nil, &DatasourceError{Kind: KindQuery, Err: fmt.Errorf("rule result is a %s, not a vector or scalar", r.resultType)}
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

// QueryRange runs a range query (engine.HistoryDatasource): the engine
// replays the evaluations it missed while it was down. Native histograms
// in the answer are dropped.
func (r *Remote) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, _, _, err := v1.NewAPI(r.client).QueryRange(ctx, expr, v1.Range{Start: start, End: end, Step: step})
	if err != nil {
		var ae *v1.Error
		if errors.As(err, &ae) && (ae.Type == v1.ErrBadData || ae.Type == v1.ErrExec) {
			return nil, &DatasourceError{Kind: KindQuery, Err: errors.New(ae.Msg)}
		}
		return nil, Unavailable(redactURLError(err))
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, &DatasourceError{Kind: KindQuery, Err: fmt.Errorf("range query result is a %s, not a matrix", v.Type())}
	}
	out := make(promql.Matrix, 0, len(m))
	for _, ss := range m {
		b := labels.NewScratchBuilder(len(ss.Metric))
		for k, v := range ss.Metric {
			b.Add(string(k), string(v))
		}
		b.Sort()
		s := promql.Series{Metric: b.Labels()}
		for _, p := range ss.Values {
			s.Floats = append(s.Floats, promql.FPoint{T: int64(p.Timestamp), F: float64(p.Value)})
		}
		out = append(out, s)
	}
	return out, nil
}
