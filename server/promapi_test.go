package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestPromAPIEmbedded: paged in embedded mode and Debian's Prometheus
// scrape the same simulated vLLM. Prometheus's own client, promtool and
// plain HTTP read paged's query API; the answers have the shapes and the
// series Prometheus gives for the same queries.
func TestPromAPIEmbedded(t *testing.T) {
	target := startSimulator(t)
	prom := testbin.StartPrometheus(t, fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [%q]}]\n", target))
	hook := httptest.NewServer(&generatorSink{})
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	writeFile(t, dir, "see.rules.yaml", seeRules)
	writeFile(t, dir, "paged.yaml", seeConfig(fmt.Sprintf(`  type: embedded
  embedded:
    scrape_interval: 1s
    keep: all               # the query API compared with Prometheus's: everything stored
    query: {timeout: 30s, max_samples: 1000000}
    scrape_configs:
      - job_name: vllm
        static_configs: [{targets: [%q]}]`, target), hook.URL))
	base, _ := runPaged(t, dir, &syncBuffer{}, io.Discard)
	poll(t, base+"/-/ready", func(code int, _ string) bool { return code == http.StatusOK })

	clientFor := func(u string) promv1.API {
		c, err := api.NewClient(api.Config{Address: u})
		if err != nil {
			t.Fatal(err)
		}
		return promv1.NewAPI(c)
	}
	paged, real := clientFor(base), clientFor(prom.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Both have scraped a few times.
	const gauge = `vllm:num_requests_running{job="vllm"}`
	for _, c := range []promv1.API{paged, real} {
		waitFor(t, "samples of "+gauge, 60*time.Second, func() bool {
			v, _, _, err := c.Query(ctx, "count_over_time("+gauge+"[1m])", time.Now())
			vec, _ := v.(model.Vector)
			return err == nil && len(vec) > 0 && vec[0].Value >= 3
		})
	}
	at := time.Now().Add(-time.Second)

	// Instant queries: the same series from both.
	for _, q := range []string{gauge, `sum by (model_name) (rate(vllm:prompt_tokens_total{job="vllm"}[30s]))`, `up{job="vllm"}`, `count by (__name__) ({job="vllm", __name__=~"vllm:.*_total"})`} {
		pv, _, _, err := paged.Query(ctx, q, at)
		if err != nil {
			t.Fatalf("paged query %s: %v", q, err)
		}
		rv, _, _, err := real.Query(ctx, q, at)
		if err != nil {
			t.Fatalf("prometheus query %s: %v", q, err)
		}
		if pv.Type() != rv.Type() {
			t.Errorf("%s: paged answers a %s, Prometheus a %s", q, pv.Type(), rv.Type())
		}
		if got, want := vectorMetrics(pv.(model.Vector)), vectorMetrics(rv.(model.Vector)); len(got) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: paged's series %v, Prometheus's %v", q, got, want)
		}
	}
	// The raw JSON has Prometheus's envelope and field names.
	for _, u := range []string{base, prom.URL} {
		code, body := getBody(t, u+"/api/v1/query?query="+url.QueryEscape(gauge)+fmt.Sprintf("&time=%d", at.Unix()))
		var env struct {
			Status string `json:"status"`
			Data   struct {
				ResultType string            `json:"resultType"`
				Result     []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &env) != nil || env.Status != "success" || env.Data.ResultType != "vector" || len(env.Data.Result) != 1 {
			t.Errorf("%s/api/v1/query = %d %s", u, code, body)
		}
	}

	// Range queries, series, labels, label values, metadata, targets,
	// build info: what Grafana's datasource calls.
	m, _, _, err := paged.QueryRange(ctx, gauge, promv1.Range{Start: at.Add(-10 * time.Second), End: at, Step: time.Second})
	if mat, ok := m.(model.Matrix); err != nil || !ok || len(mat) != 1 || len(mat[0].Values) < 3 {
		t.Errorf("query_range = %v, %v", m, err)
	}
	series, _, _, err := paged.Series(ctx, []string{`{__name__=~"vllm:num_requests_.*", job="vllm"}`}, at.Add(-time.Minute), at)
	if err != nil || len(series) < 2 {
		t.Errorf("series = %v, %v", series, err)
	}
	names, _, _, err := paged.LabelNames(ctx, nil, at.Add(-time.Minute), at)
	if err != nil || !slices.Contains(names, "model_name") || !slices.Contains(names, "instance") {
		t.Errorf("labels = %v, %v", names, err)
	}
	values, _, _, err := paged.LabelValues(ctx, "__name__", nil, at.Add(-time.Minute), at)
	if err != nil || !slices.Contains(values, "vllm:kv_cache_usage_perc") {
		t.Errorf("label/__name__/values lacks vllm:kv_cache_usage_perc: %v, %v", len(values), err)
	}
	meta, err := paged.Metadata(ctx, "vllm:num_requests_running", "")
	if err != nil || len(meta["vllm:num_requests_running"]) == 0 || meta["vllm:num_requests_running"][0].Type != promv1.MetricTypeGauge {
		t.Errorf("metadata = %v, %v", meta, err)
	}
	targets, err := paged.Targets(ctx)
	if err != nil || len(targets.Active) != 1 || targets.Active[0].Health != promv1.HealthGood || targets.Active[0].ScrapeURL != "http://"+target+"/metrics" {
		t.Errorf("targets = %+v, %v", targets, err)
	}
	bi, err := paged.Buildinfo(ctx)
	if err != nil || !strings.HasPrefix(bi.Version, "3.") {
		t.Errorf("buildinfo = %+v, %v", bi, err)
	}

	// The label names of the simulator's series are the same on both.
	var nameSets [2][]string
	for i, c := range []promv1.API{paged, real} {
		ns, _, _, err := c.LabelNames(ctx, []string{`{job="vllm", __name__=~"vllm:.*"}`}, at.Add(-time.Minute), at)
		if err != nil {
			t.Fatalf("labels: %v", err)
		}
		for _, n := range ns {
			nameSets[i] = append(nameSets[i], string(n))
		}
	}
	if !slices.Equal(nameSets[0], nameSets[1]) || len(nameSets[0]) < 4 {
		t.Errorf("label names: paged %v, Prometheus %v", nameSets[0], nameSets[1])
	}

	// paged's own endpoints under /api/v1 stay paged's.
	if _, body := getBody(t, base+"/api/v1/rules"); !strings.Contains(body, "SeeKVCacheUsed") {
		t.Errorf("/api/v1/rules lost paged's rules: %.300s", body)
	}

	// Bad input: 400 with Prometheus's error shape; limits apply.
	for q, want := range map[string]int{
		"/api/v1/query?query=" + url.QueryEscape("sum(("):                                          http.StatusBadRequest,
		"/api/v1/query_range?query=up&start=10&end=1&step=1":                                       http.StatusBadRequest,
		"/api/v1/query_range?query=up&start=0&end=100000000&step=1":                                http.StatusBadRequest,
		"/api/v1/query?query=" + url.QueryEscape(`count_over_time({job="vllm"}[1h])`) + "&limit=x": http.StatusBadRequest,
	} {
		code, body := getBody(t, base+q)
		if code != want || !strings.Contains(body, `"status":"error"`) || !strings.Contains(body, `"error":`) {
			t.Errorf("GET %s = %d %s, want %d with the reason", q, code, body, want)
		}
	}

	// promtool, the Prometheus 2.42 client, reads paged too.
	promtool := testbin.Require(t, "promtool")
	out, err := exec.CommandContext(ctx, promtool, "query", "instant", base, gauge).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `vllm:num_requests_running{`) || !strings.Contains(string(out), `job="vllm"`) {
		t.Errorf("promtool query instant: %v\n%s", err, out)
	}
	out, err = exec.CommandContext(ctx, promtool, "query", "range", "--start="+at.Add(-10*time.Second).Format(time.RFC3339), "--end="+at.Format(time.RFC3339), "--step=1s", base, gauge).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `vllm:num_requests_running{`) || !strings.Contains(string(out), " @[") {
		t.Errorf("promtool query range: %v\n%s", err, out)
	}
}

// vectorMetrics returns a vector's label sets, sorted.
func vectorMetrics(v model.Vector) []string {
	var out []string
	for _, s := range v {
		out = append(out, s.Metric.String())
	}
	slices.Sort(out)
	return out
}
