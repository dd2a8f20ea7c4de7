package discover

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/simulator"
)

// TestClassify: which packs a job's metric names call for.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names []string
		want  []string
	}{
		{"vLLM V1", []string{"vllm:kv_cache_usage_perc", "vllm:num_requests_running", "process_cpu_seconds_total"}, []string{PackVLLM}},
		{"vLLM 0.10 V1 with the deprecated gauge too", []string{"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"}, []string{PackVLLM}},
		{"vLLM V0", []string{"vllm:gpu_cache_usage_perc", "vllm:cpu_cache_usage_perc", "vllm:num_requests_swapped"}, []string{PackVLLMV0}},
		{"vLLM old without engine-specific names", []string{"vllm:num_requests_running"}, []string{PackVLLMV0}},
		{"V1 and V0 pods in one job", []string{"vllm:kv_cache_usage_perc", "vllm:num_requests_swapped"}, []string{PackVLLM, PackVLLMV0}},
		{"V1 histogram series", []string{"vllm:inter_token_latency_seconds_bucket"}, []string{PackVLLM}},
		{"recorded vllm names are not a server", []string{"vllm:kv:max", "up"}, nil},
		{"TGI", []string{"tgi_queue_size", "tgi_request_count"}, []string{PackTGI}},
		{"SGLang", []string{"sglang:num_running_reqs"}, []string{PackSGLang}},
		{"Triton with vLLM backend and GPUs", []string{"nv_inference_count", "DCGM_FI_DEV_GPU_TEMP"}, []string{PackTriton, PackDCGM}},
		{"Triton GPU gauges alone are not Triton", []string{"nv_gpu_utilization"}, nil},
		{"nothing", []string{"up", "node_cpu_seconds_total", "vllm:"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.names); !slices.Equal(got, tc.want) {
				t.Errorf("classify(%v) = %v, want %v", tc.names, got, tc.want)
			}
		})
	}
}

// TestSelector: one job, several, and names that need escaping, all
// accepted as a pack selector.
func TestSelector(t *testing.T) {
	for _, tc := range []struct {
		jobs []string
		want string
	}{
		{[]string{"vllm-prod"}, `{job="vllm-prod"}`},
		{[]string{"a", "b.c"}, `{job=~"a|b\\.c"}`},
		{[]string{`we"ird`, "x|y"}, `{job=~"we\"ird|x\\|y"}`},
		{[]string{""}, ""},
	} {
		p := &PackFit{Pack: PackVLLM}
		for _, j := range tc.jobs {
			p.Jobs = append(p.Jobs, Job{Name: j, Targets: 1})
		}
		got := p.Selector()
		if got != tc.want {
			t.Errorf("jobs %q: selector %s, want %s", tc.jobs, got, tc.want)
			continue
		}
		if got == "" {
			continue
		}
		ms, err := parser.NewParser(parser.Options{}).ParseMetricSelector(got)
		if err != nil {
			t.Fatalf("selector %s does not parse: %v", got, err)
		}
		for _, j := range tc.jobs {
			if !ms[0].Matches(j) {
				t.Errorf("selector %s does not match job %q", got, j)
			}
		}
		if ms[0].Matches("other") {
			t.Errorf("selector %s matches another job", got)
		}
	}
}

// TestFromTargetsAndConfig: the simulators of every server kind, scraped;
// the written configuration loads with the packs they need, even with
// job names and URLs that need quoting.
func TestFromTargetsAndConfig(t *testing.T) {
	want := map[simulator.Server]string{
		simulator.ServerVLLM: PackVLLM, simulator.ServerVLLMV0: PackVLLMV0, simulator.ServerTGI: PackTGI,
		simulator.ServerSGLang: PackSGLang, simulator.ServerTriton: PackTriton, simulator.ServerDCGM: PackDCGM, simulator.ServerGateway: PackGateway,
	}
	var addrs []string
	byAddr := map[string]string{}
	for _, kind := range simulator.Servers() {
		// Started ten minutes ago: the counters that appear with the
		// first request are there.
		// dcgm with the opt-in counters the pack's thermal and ECC alerts
		// read; the gateway with flow control, which its saturation alert
		// reads (off by default in GAIE, as in the simulator).
		sim, err := simulator.New(simulator.Options{Server: kind, Start: time.Now().Add(-10 * time.Minute),
			DCGMOptIn: kind == simulator.ServerDCGM, FlowControl: kind == simulator.ServerGateway})
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(sim.Handler())
		t.Cleanup(s.Close)
		a := strings.TrimPrefix(s.URL, "http://")
		addrs = append(addrs, a)
		byAddr[a] = want[kind]
	}
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("vllm:kv_cache_usage_perc{ 1\n\x00\xff"))
	}))
	t.Cleanup(garbage.Close)
	addrs = append(addrs, strings.TrimPrefix(garbage.URL, "http://"))

	inv := FromTargets(context.Background(), addrs, ScrapeOptions{Timeout: 5 * time.Second})
	for _, tg := range inv.Targets {
		if w, ok := byAddr[tg.Addr]; ok {
			if tg.Err != nil || tg.Job != w || !slices.Equal(tg.Packs, []string{w}) {
				t.Errorf("%s: job %q packs %v err %v, want %s", tg.Addr, tg.Job, tg.Packs, tg.Err, w)
			}
		} else if tg.Err == nil || !strings.Contains(tg.Err.Error(), "not a Prometheus exposition") {
			t.Errorf("garbage target: err %v", tg.Err)
		}
	}
	var packs []string
	for _, p := range inv.Packs {
		packs = append(packs, p.Pack)
	}
	if !slices.Equal(packs, []string{PackVLLM, PackVLLMV0, PackTGI, PackSGLang, PackTriton, PackDCGM, PackGateway}) {
		t.Errorf("packs %v", packs)
	}
	rep, err := inv.Check(context.Background(), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The simulators expose what their packs read.
	for _, f := range rep.Dead {
		t.Errorf("dead on its own simulator: %s %s %s (%s)", f.Pack, f.Rule, f.Checked, f.Hint)
	}
	if rep.Rules < 40 || rep.Selectors < 40 {
		t.Errorf("checked %d rules, %d selectors", rep.Rules, rep.Selectors)
	}

	content, err := inv.Config(ConfigOptions{Command: "paged init --scrape ...", File: "x.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(content, "x.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatalf("written configuration does not load: %v\n%s", err, content)
	}
	if len(cfg.Packs) != 7 || len(cfg.Datasource.Embedded.ScrapeConfigs) != 7 {
		t.Errorf("packs %d, scrape configs %d", len(cfg.Packs), len(cfg.Datasource.Embedded.ScrapeConfigs))
	}

	// A remote datasource, odd job names, an http_config.
	odd := &Inventory{Source: "http://prom:9090", Packs: []*PackFit{
		{Pack: PackVLLM, Title: packTitles[PackVLLM], Jobs: []Job{{Name: `vllm 'prod'`, Targets: 2}, {Name: "vllm.canary", Targets: 1}}},
	}, Notes: []string{"job x serves vllm and dcgm: a note long enough to be wrapped over more than one line of the file's header comment"}}
	content, err = odd.Config(ConfigOptions{Command: "paged init", PrometheusURL: "http://prom:9090/prefix?x=#1", Timeout: 5 * time.Second,
		HTTPConfig: []byte("http_headers:\n  X-Scope-OrgID:\n    values: [tenant-1]\n")})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = config.Parse(content, "paged.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatalf("written configuration does not load: %v\n%s", err, content)
	}
	if got := cfg.Packs[0].Overrides.Selector; got != `{job=~"vllm 'prod'|vllm\\.canary"}` {
		t.Errorf("selector %s", got)
	}
	if h := cfg.Datasource.Prometheus.HTTPConfig.HTTPHeaders; h == nil || h.Headers["X-Scope-OrgID"].Values[0] != "tenant-1" {
		t.Errorf("http_config headers %+v", h)
	}
	if cfg.Datasource.Prometheus.Timeout != 5*time.Second {
		t.Errorf("timeout %v", cfg.Datasource.Prometheus.Timeout)
	}
}

// TestFitNotes: a job that serves two kinds of server, series without a
// job.
func TestFitNotes(t *testing.T) {
	inv := &Inventory{}
	inv.fit(map[string]*jobNames{
		"kubernetes-pods": {names: []string{"vllm:kv_cache_usage_perc", "DCGM_FI_DEV_GPU_TEMP"}, targets: 4},
		"":                {names: []string{"tgi_queue_size"}, targets: 1},
	})
	if len(inv.Packs) != 3 || inv.Packs[0].Pack != PackVLLM || inv.Packs[1].Pack != PackTGI || inv.Packs[2].Pack != PackDCGM {
		t.Fatalf("packs %+v", inv.Packs)
	}
	if inv.Pack(PackTGI).Selector() != "" || inv.Pack(PackDCGM).Selector() != `{job="kubernetes-pods"}` {
		t.Errorf("selectors %q %q", inv.Pack(PackTGI).Selector(), inv.Pack(PackDCGM).Selector())
	}
	notes := strings.Join(inv.Notes, "\n")
	for _, want := range []string{"some tgi series carry no job label", "job kubernetes-pods serves vllm and dcgm"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// FuzzConfigJobs: whatever job names a Prometheus answers with, the
// written configuration loads and each pack's selector matches exactly
// its jobs.
func FuzzConfigJobs(f *testing.F) {
	f.Add("vllm-prod", "vllm canary", "http://prom:9090")
	f.Add(`a"b`, "x|y.*", "https://mimir.example/prometheus")
	f.Add("'", "\\", "http://[::1]:9090/")
	f.Add("${HOME}", "#", "http://p/?q=${X}")
	f.Fuzz(func(t *testing.T, a, b, u string) {
		if a == "" || b == "" || a == b {
			return
		}
		inv := &Inventory{Source: "fuzz", Packs: []*PackFit{
			{Pack: PackVLLM, Title: "vLLM", Jobs: []Job{{Name: a, Targets: 1}, {Name: b, Targets: 2}}},
			{Pack: PackTGI, Title: "TGI", Jobs: []Job{{Name: a, Targets: 1}}},
		}}
		promURL := "http://prom:9090"
		if pu, err := url.Parse(u); err == nil && (pu.Scheme == "http" || pu.Scheme == "https") && pu.Host != "" && pu.User == nil && utf8.ValidString(u) && !strings.ContainsAny(u, "\x00\r\n") {
			promURL = u
		}
		content, err := inv.Config(ConfigOptions{Command: "paged init", PrometheusURL: promURL})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse(content, "paged.yaml", func(string) string { return "" })
		if err != nil {
			// Job names that are not valid UTF-8 cannot be written into
			// YAML; Prometheus cannot hold them either.
			if !utf8.ValidString(a) || !utf8.ValidString(b) {
				return
			}
			t.Fatalf("jobs %q %q: written configuration does not load: %v\n%s", a, b, err, content)
		}
		ms, err := parser.NewParser(parser.Options{}).ParseMetricSelector(cfg.Packs[0].Overrides.Selector)
		if err != nil {
			t.Fatal(err)
		}
		if !ms[0].Matches(a) || !ms[0].Matches(b) || (ms[0].Matches(a+b) && a+b != a && a+b != b) {
			t.Errorf("selector %s for jobs %q, %q", cfg.Packs[0].Overrides.Selector, a, b)
		}
		if got := cfg.Datasource.Prometheus.URL.String(); promURL == "http://prom:9090" && got != promURL {
			t.Errorf("url %s", got)
		}
	})
}
