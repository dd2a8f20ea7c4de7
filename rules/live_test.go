package rules

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/simulator"
)

// TestLiveChecksAgainstSimulator starts Debian's Prometheus scraping the
// vLLM simulator and runs every live check on rules that exercise them:
// why a selector matches nothing (a name never scraped, a label value
// that no series has, a label no series has), types from the server's
// metadata, and how often an alert would have fired.
func TestLiveChecksAgainstSimulator(t *testing.T) {
	testbin.Require(t, "prometheus")
	sim, err := simulator.New(simulator.Options{Server: simulator.ServerVLLM, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	prom := testbin.StartPrometheus(t, "global: {scrape_interval: 1s, evaluation_interval: 1s, external_labels: {cluster: eu1}}\nscrape_configs:\n"+
		"  - job_name: vllm\n    static_configs: [{targets: [\""+ln.Addr().String()+"\"]}]\n")
	api, err := NewPrometheusAPI(prom.URL)
	if err != nil {
		t.Fatal(err)
	}
	live := api.(LiveAPI)
	// Prometheus is an external process: poll until a few scrapes and
	// their metadata are in.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := api.SeriesExist(`vllm:num_requests_running`)
		typ, _ := live.MetricType("python_gc_collections")
		if typ == "" {
			typ, _ = live.MetricType("python_gc_collections_total")
		}
		if err == nil && ok && typ != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scrape after 60s (last error %v); prometheus output:\n%s", err, prom.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // a few samples for the replay

	src := `groups:
  - name: live
    interval: 1s
    rules:
      - alert: NeverScraped
        expr: vllm:gpu_cache_usage_perc > 0.9
      - alert: WrongModel
        expr: vllm:num_requests_running{model_name="other"} > 0
      - alert: NoSuchLabel
        expr: vllm:num_requests_running{tenant="a"} > 0
      - alert: RawCounter
        expr: python_gc_collections_total > 10
      - alert: RateOfGauge
        expr: rate(process_resident_memory_bytes[1m]) > 0
      - alert: AlwaysTrue
        expr: vllm:num_requests_running >= 0
      - alert: External
        expr: vllm:num_requests_running > 1000
        labels: {cluster: mine}
        annotations:
          summary: "{{ $externalLabels.cluster }} {{ $externalLabels.region }}"
`
	f := ParseFile("live.yaml", []byte(src), ParseOptions{})
	cfg := DefaultConfig()
	cfg.Prometheus = api
	cfg.LiveWindow = time.Minute
	cfg.Only = []string{"series", "alerts/count", "query/cost", "rule/external-labels"}
	got := map[string]string{}
	for _, fd := range Lint([]*File{f}, cfg) {
		got[fd.Rule+" "+fd.Check] += fd.Message + "\n"
	}
	want := map[string]string{
		"NeverScraped series/live":  "vllm:gpu_cache_usage_perc has no series on the server in the last 1w: nothing by that name was scraped",
		"WrongModel series/live":    `model_name="other" matches no vllm:num_requests_running series: model_name is "meta-llama/Llama-3.1-8B-Instruct" on them (last hour)`,
		"NoSuchLabel series/live":   `vllm:num_requests_running has series, but none of them has a tenant label, so tenant="a" matches nothing`,
		"RawCounter series/type":    "python_gc_collections_total is a counter (the server's metadata says so)",
		"RateOfGauge series/type":   "rate() on process_resident_memory_bytes, a gauge by the server's metadata",
		"AlwaysTrue alerts/count":   "would have fired 1 time in the last 1m, on 1 series",
		"NeverScraped alerts/count": "would not have fired in the last 1m (the expression returned 0 series)",
		"AlwaysTrue query/cost":     "one evaluation reads 1 series (vllm:num_requests_running: 1)",
		"External rule/external-labels": `label cluster is also an external label of the server (cluster="eu1"): the rule's value "mine" hides it on what this rule produces` + "\n" +
			`"summary" reads $externalLabels.region, which the server does not have (its external labels: cluster): it renders as an empty string`,
		"NeverScraped query/cost": "one evaluation reads 0 series (vllm:gpu_cache_usage_perc: 0)",
	}
	for k, w := range want {
		if !strings.Contains(got[k], w) {
			t.Errorf("%s: got %q, want it to contain %q", k, got[k], w)
		}
	}
	for k, msg := range got {
		if _, ok := want[k]; !ok && !strings.HasSuffix(k, "alerts/count") && !strings.HasSuffix(k, "query/cost") {
			t.Errorf("unexpected finding %s: %s", k, msg)
		}
	}
}

// An unreachable server is one finding for the whole run, not one per
// selector or per file.
func TestLiveUnreachableOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	api, err := NewPrometheusAPI(url)
	if err != nil {
		t.Fatal(err)
	}
	var files []*File
	for _, name := range []string{"a.yaml", "b.yaml"} {
		files = append(files, ParseFile(name, []byte("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n  - alert: B\n    expr: rate(x_total[5m]) > 1\n"), ParseOptions{}))
	}
	cfg := DefaultConfig()
	cfg.Prometheus = api
	cfg.Only = []string{"series", "alerts/count"}
	fs := Lint(files, cfg)
	if len(fs) != 1 || !strings.HasPrefix(fs[0].String(), "a.yaml:5:11: error [series/live] could not reach the Prometheus server (") ||
		!strings.HasSuffix(fs[0].Message, "the live checks were skipped for every rule") {
		t.Fatalf("findings: %v", fs)
	}
}

// A server that answers the series API but lacks the metadata endpoint
// (as some Prometheus-compatible backends do): one info finding, and the
// series checks still run.
func TestLivePartialServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/series":
			_ = r.ParseForm()
			if strings.Contains(strings.Join(r.Form["match[]"], ","), "missing") {
				w.Write([]byte(`{"status":"success","data":[]}`))
				return
			}
			w.Write([]byte(`{"status":"success","data":[{"__name__":"x"}]}`))
		case "/api/v1/label/job/values":
			w.Write([]byte(`{"status":"success","data":["a"]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	api, err := NewPrometheusAPI(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := ParseFile("p.yaml", []byte("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: x_total > 1\n  - alert: B\n    expr: y_total > 1 and missing > 0\n"), ParseOptions{})
	cfg := DefaultConfig()
	cfg.Prometheus = api
	cfg.Only = []string{"series", "rule/external-labels"}
	var got []string
	notes := 0
	for _, fd := range Lint([]*File{f}, cfg) {
		if strings.Contains(fd.Message, "/api/v1/status/config") {
			notes++
			if fd.Severity != Info || fd.Check != "rule/external-labels" {
				t.Errorf("missing config endpoint: %s", fd)
			}
			continue
		}
		got = append(got, fd.String())
	}
	if len(got) != 2 || !strings.Contains(got[0], "info [series/type] the server answered /api/v1/metadata with an error") ||
		!strings.Contains(got[1], "warning [series/live] missing has no series on the server in the last 1w") {
		t.Errorf("findings:\n%s", strings.Join(got, "\n"))
	}
	if notes != 1 {
		t.Errorf("%d notes about the missing config endpoint, want 1 for the run", notes)
	}
}

func TestReplayAlert(t *testing.T) {
	at := func(mins ...int) []model.SamplePair {
		var out []model.SamplePair
		for _, m := range mins {
			out = append(out, model.SamplePair{Timestamp: model.Time(int64(m) * 60000), Value: 1})
		}
		return out
	}
	m := model.Matrix{
		{Metric: model.Metric{"a": "1"}, Values: at(0, 1, 2, 3, 4, 10, 11)}, // fires once with for 2m; 10-11 too short
		{Metric: model.Metric{"a": "2"}, Values: at(0, 1, 2, 3, 5, 6, 7)},   // with for 2m: 0-3 fires, 5-7 fires again
	}
	if fires, series, _ := replayAlert(m, time.Minute, 2*time.Minute, 0); fires != 3 || series != 2 {
		t.Errorf("for 2m: %d fires on %d series, want 3 on 2", fires, series)
	}
	// keep_firing_for 2m bridges the one-step gap of series 2.
	if fires, _, _ := replayAlert(m, time.Minute, 2*time.Minute, 2*time.Minute); fires != 2 {
		t.Errorf("keep_firing_for 2m: %d fires, want 2", fires)
	}
	if fires, series, firing := replayAlert(m, time.Minute, 0, 0); fires != 4 || series != 2 || firing != 14*time.Minute {
		t.Errorf("for 0: %d fires on %d series, firing %v; want 4 on 2, 14m", fires, series, firing)
	}
}

func TestConfigPrometheus(t *testing.T) {
	c, err := ParseConfig("x.yaml", []byte("prometheus:\n  url: http://p:9090\n  lookback: 3d\n  window: 6h\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.PrometheusURL != "http://p:9090" || c.LiveLookback != 72*time.Hour || c.LiveWindow != 6*time.Hour {
		t.Errorf("got url %q lookback %v window %v", c.PrometheusURL, c.LiveLookback, c.LiveWindow)
	}
	if _, err := ParseConfig("x.yaml", []byte("prometheus: {lookback: soon}\n")); err == nil || !strings.Contains(err.Error(), "prometheus.lookback") {
		t.Errorf("bad lookback: %v", err)
	}
}

// fakeLive answers from a fixed table: which selectors have series now
// and in the lookback.
type fakeLive struct {
	now, ever map[string]bool
	values    map[string][]string
}

func (f fakeLive) SeriesExist(sel string) (bool, error) { return f.now[sel], nil }
func (f fakeLive) SeriesWithin(sel string, d time.Duration) (bool, error) {
	if d > time.Hour {
		return f.ever[sel] || f.now[sel], nil
	}
	return f.now[sel], nil
}
func (f fakeLive) LabelValues(label, sel string, _ time.Duration) ([]string, error) {
	return f.values[label], nil
}
func (fakeLive) MetricType(string) (string, error) { return "", nil }
func (fakeLive) QueryRange(string, time.Duration, time.Duration) (model.Matrix, error) {
	return nil, nil
}
func (fakeLive) CountSeries(string) (int, error)            { return 0, nil }
func (fakeLive) ExternalLabels() (map[string]string, error) { return map[string]string{}, nil }

// The diagnoses that need history: a metric gone in the last hour, and
// matchers that each match but never together.
func TestLiveDiagnosis(t *testing.T) {
	api := fakeLive{
		ever: map[string]bool{"old_metric": true},
		now: map[string]bool{
			"up": true, `up{job="a"}`: true, `up{instance="b"}`: true,
		},
	}
	f := ParseFile("d.yaml", []byte("groups:\n- name: g\n  rules:\n  - alert: Gone\n    expr: old_metric > 1\n  - alert: Apart\n    expr: up{job=\"a\",instance=\"b\"} == 0\n"), ParseOptions{})
	cfg := DefaultConfig()
	cfg.Prometheus = api
	cfg.Only = []string{CheckSeriesLive}
	var got []string
	for _, fd := range Lint([]*File{f}, cfg) {
		got = append(got, fd.String())
	}
	want := []string{
		"d.yaml:5:11: warning [series/live] old_metric had series in the last 1w but has none in the last hour: its target is gone or the metric was renamed",
		`d.yaml:7:11: warning [series/live] each matcher of up{instance="b",job="a"} matches up series, but no series has them all together`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
