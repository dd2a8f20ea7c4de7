package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/simulator"
)

// TestSameSeriesAsPrometheus has Debian's Prometheus and the embedded mode
// scrape the same simulated vLLM server with the same job name, and checks
// that they store the same metric names and, for a gauge, a histogram's
// _bucket series, _total counters and the synthetic series, exactly the
// same label sets: the embedded mode sees what a real Prometheus sees.
//
// One difference is expected, and checked on a second, hand-written target:
// Prometheus 3 (the embedded library) normalises classic-histogram "le"
// values on ingestion (le="1" is stored as le="1.0"), while Prometheus 2.42
// stores the text as exposed. We follow the newer behaviour. vLLM (Python
// prometheus_client) and the simulator already write "1.0", so for them the
// two agree.
func TestSameSeriesAsPrometheus(t *testing.T) {
	testbin.Require(t, "prometheus")
	_, addr := startSim(t, simulator.Options{Server: simulator.ServerVLLM, Scenario: "steady", Speed: 10, Seed: 7})
	hand := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, "# TYPE hand_seconds histogram\n"+
			"hand_seconds_bucket{le=\"1\"} 1\nhand_seconds_bucket{le=\"+Inf\"} 2\nhand_seconds_sum 3\nhand_seconds_count 2\n")
	}))

	prom := testbin.StartPrometheus(t, fmt.Sprintf(
		"global: {scrape_interval: 1s, scrape_timeout: 1s}\nscrape_configs:\n"+
			"  - job_name: vllm\n    static_configs: [{targets: [%q]}]\n"+
			"  - job_name: hand\n    static_configs: [{targets: [%q]}]\n", addr, hand))
	e, err := New(Options{
		StoragePath:    t.TempDir(),
		ScrapeInterval: 300 * time.Millisecond,
		ScrapeConfigs: []ScrapeConfig{
			{JobName: "vllm", StaticConfigs: []StaticConfig{{Targets: []string{addr}}}},
			{JobName: "hand", StaticConfigs: []StaticConfig{{Targets: []string{hand}}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, e)

	// Both have scraped at least twice (so every series, including the
	// ones a first scrape might miss, is in).
	eventually(t, 45*time.Second, func() error {
		for name, n := range map[string]float64{"prometheus": promScalar(t, prom.URL, `count_over_time(up{job="vllm"}[1m])`), "embedded": embScalar(t, e, `count_over_time(up{job="vllm"}[1m])`)} {
			if !(n >= 2) {
				return fmt.Errorf("%s: %v scrapes so far", name, n)
			}
		}
		return nil
	})

	promNames := promNameSet(t, prom.URL)
	embNames := embNameSet(t, e)
	if !slices.Equal(promNames, embNames) {
		t.Errorf("metric names differ:\nonly in Prometheus: %v\nonly in embedded:   %v", minus(promNames, embNames), minus(embNames, promNames))
	}
	if !slices.Contains(embNames, "vllm:kv_cache_usage_perc") || len(embNames) < 30 {
		t.Fatalf("embedded stored only %d names: %v", len(embNames), embNames)
	}

	for _, metric := range []string{
		"vllm:kv_cache_usage_perc",
		"vllm:time_to_first_token_seconds_bucket",
		"vllm:prompt_tokens_total",
		"vllm:request_success_total",
		"up",
		"scrape_samples_scraped",
	} {
		ps := promSeries(t, prom.URL, metric)
		es := embSeries(t, e, metric)
		if len(es) == 0 {
			t.Errorf("%s: no series in the embedded TSDB", metric)
			continue
		}
		if !slices.Equal(ps, es) {
			t.Errorf("%s: label sets differ\nonly in Prometheus: %v\nonly in embedded:   %v", metric, minus(ps, es), minus(es, ps))
		}
	}

	// The documented difference: le="1" as exposed (2.42) and as
	// normalised by Prometheus 3.
	if got, want := promSeries(t, prom.URL, "hand_seconds_bucket"), []string{
		fmt.Sprintf(`{__name__="hand_seconds_bucket", instance=%q, job="hand", le="+Inf"}`, hand),
		fmt.Sprintf(`{__name__="hand_seconds_bucket", instance=%q, job="hand", le="1"}`, hand),
	}; !slices.Equal(got, want) {
		t.Errorf("Prometheus 2.42 hand_seconds_bucket = %v, want %v", got, want)
	}
	if got, want := embSeries(t, e, "hand_seconds_bucket"), []string{
		fmt.Sprintf(`{__name__="hand_seconds_bucket", instance=%q, job="hand", le="+Inf"}`, hand),
		fmt.Sprintf(`{__name__="hand_seconds_bucket", instance=%q, job="hand", le="1.0"}`, hand),
	}; !slices.Equal(got, want) {
		t.Errorf("embedded hand_seconds_bucket = %v, want %v (Prometheus 3 normalises le)", got, want)
	}
}

func embSeriesRaw(t *testing.T, e *Embedded, metric string) []labels.Labels {
	t.Helper()
	q, err := e.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, metric))
	var out []labels.Labels
	for ss.Next() {
		out = append(out, ss.At().Labels())
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func embSeries(t *testing.T, e *Embedded, metric string) []string {
	var out []string
	for _, ls := range embSeriesRaw(t, e, metric) {
		out = append(out, ls.String())
	}
	slices.Sort(out)
	return out
}

func embNameSet(t *testing.T, e *Embedded) []string {
	t.Helper()
	q, err := e.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	names, _, err := q.LabelValues(context.Background(), labels.MetricName, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func embScalar(t *testing.T, e *Embedded, expr string) float64 {
	t.Helper()
	v, err := query(e, expr)
	if err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	if len(v) == 0 {
		return math.NaN()
	}
	return v[0].F
}

// promGet calls Prometheus's HTTP API and decodes data into out.
func promGet(t *testing.T, base, path string, params url.Values, out any) {
	t.Helper()
	resp, err := http.Get(base + path + "?" + params.Encode())
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if body.Status != "success" {
		t.Fatalf("GET %s: %s", path, body.Error)
	}
	if err := json.Unmarshal(body.Data, out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func promScalar(t *testing.T, base, expr string) float64 {
	var data struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	promGet(t, base, "/api/v1/query", url.Values{"query": {expr}}, &data)
	if len(data.Result) == 0 {
		return math.NaN()
	}
	s, _ := data.Result[0].Value[1].(string)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func promNameSet(t *testing.T, base string) []string {
	var names []string
	promGet(t, base, "/api/v1/label/__name__/values", url.Values{}, &names)
	slices.Sort(names)
	return names
}

func promSeries(t *testing.T, base, metric string) []string {
	var data []map[string]string
	promGet(t, base, "/api/v1/series", url.Values{"match[]": {fmt.Sprintf("{__name__=%q}", metric)}}, &data)
	var out []string
	for _, m := range data {
		out = append(out, labels.FromMap(m).String())
	}
	slices.Sort(out)
	return out
}

// minus returns the elements of a not in b.
func minus(a, b []string) string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return strings.Join(out, ", ")
}
