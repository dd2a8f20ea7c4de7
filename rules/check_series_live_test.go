package rules

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestSeriesLive starts Debian's Prometheus scraping a local exporter
// that serves vLLM-named series, then checks the online check and the
// PrometheusAPI client (prom.go) against it: a selector that exists, one
// with a label value that does not, and a metric that does not.
func TestSeriesLive(t *testing.T) {
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, "# TYPE vllm:num_preemptions counter\n"+
			"vllm:num_preemptions_total{model_name=\"m\",engine=\"0\"} 3\n"+
			"# TYPE vllm:kv_cache_usage_perc gauge\n"+
			"vllm:kv_cache_usage_perc{model_name=\"m\",engine=\"0\"} 0.5\n")
	}))
	t.Cleanup(exporter.Close)
	target := strings.TrimPrefix(exporter.URL, "http://")
	prom := testbin.StartPrometheus(t, `
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: vllm
    static_configs: [{targets: ["`+target+`"]}]
`)
	api, err := NewPrometheusAPI(prom.URL)
	if err != nil {
		t.Fatal(err)
	}
	// Prometheus is an external process: poll until the first scrape is in.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := api.SeriesExist(`vllm:num_preemptions_total`)
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scrape after 60s (last error %v); prometheus output:\n%s", err, prom.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for sel, want := range map[string]bool{
		`vllm:num_preemptions_total{model_name="m"}`:     true,
		`vllm:kv_cache_usage_perc{job="vllm"}`:           true,
		`vllm:num_preemptions_total{model_name="other"}`: false,
		`vllm:gpu_cache_usage_perc`:                      false,
	} {
		got, err := api.SeriesExist(sel)
		if err != nil || got != want {
			t.Errorf("SeriesExist(%s) = %v, %v; want %v", sel, got, err, want)
		}
	}

	src := `groups:
  - name: live
    rules:
      - alert: Exists
        expr: sum(rate(vllm:num_preemptions_total{model_name="m"}[5m])) > 1
      - alert: Missing
        expr: |
          max(vllm:gpu_cache_usage_perc) > 0.9
            and on() vllm:kv_cache_usage_perc{model_name="other"} > 0
      - record: vllm:kv:max
        expr: max(vllm:kv_cache_usage_perc)
      - alert: UsesRecorded
        expr: vllm:kv:max > 0.9 or absent(vllm:not_there)
`
	f := ParseFile("live.yaml", []byte(src), ParseOptions{})
	cfg := DefaultConfig()
	cfg.Prometheus = api
	cfg.Only = []string{CheckSeriesLive}
	var got []string
	for _, fd := range Lint([]*File{f}, cfg) {
		got = append(got, fd.String())
	}
	want := []string{
		`live.yaml:8:15: warning [series/live] vllm:gpu_cache_usage_perc has no series on the server in the last 1w: nothing by that name was scraped (a typo, a renamed metric, or a job this server does not scrape)`,
		`live.yaml:9:22: warning [series/live] model_name="other" matches no vllm:kv_cache_usage_perc series: model_name is "m" on them (last hour)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Without --prometheus the check does not run at all.
	cfg.Prometheus = nil
	if fs := Lint([]*File{f}, cfg); len(fs) != 0 {
		t.Errorf("offline lint ran series/live: %v", fs)
	}
}

// A server that does not answer gives one finding with the error, not a
// silent pass.
func TestSeriesLiveUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	api, err := NewPrometheusAPI(url)
	if err != nil {
		t.Fatal(err)
	}
	f := ParseFile("x.yaml", []byte("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n  - alert: B\n    expr: vllm:num_requests_waiting > 1\n"), ParseOptions{})
	cfg := DefaultConfig()
	cfg.Prometheus = api
	cfg.Only = []string{CheckSeriesLive}
	fs := Lint([]*File{f}, cfg)
	if len(fs) != 1 || !strings.HasPrefix(fs[0].String(), "x.yaml:5:11: error [series/live] could not reach the Prometheus server (") {
		t.Fatalf("findings: %v", fs)
	}
	if _, err := NewPrometheusAPI("ftp://x"); err == nil {
		t.Error("NewPrometheusAPI accepted a non-http URL")
	}
}

type countingProm struct{ calls map[string]int }

func (c *countingProm) SeriesExist(sel string) (bool, error) {
	c.calls[sel]++
	return sel == "up", nil
}

// Each selector is asked once per file, however many rules use it.
func TestSeriesLiveAsksOnce(t *testing.T) {
	src := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0 and vllm:x > 1\n  - alert: B\n    expr: vllm:x > 2 or up{job=\"a\"} == 0\n"
	f := ParseFile("once.yaml", []byte(src), ParseOptions{})
	fake := &countingProm{calls: map[string]int{}}
	cfg := DefaultConfig()
	cfg.Prometheus = fake
	cfg.Only = []string{CheckSeriesLive}
	var got []string
	for _, fd := range Lint([]*File{f}, cfg) {
		got = append(got, fd.String())
	}
	want := []string{
		"once.yaml:5:23: warning [series/live] no series matches vllm:x on the Prometheus server",
		"once.yaml:7:11: warning [series/live] no series matches vllm:x on the Prometheus server",
		`once.yaml:7:25: warning [series/live] no series matches up{job="a"} on the Prometheus server`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if fake.calls["vllm:x"] != 1 || fake.calls["up"] != 1 || len(fake.calls) != 3 {
		t.Errorf("calls = %v, want each selector once", fake.calls)
	}
}
