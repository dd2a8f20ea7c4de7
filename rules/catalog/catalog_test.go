package catalog_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules/catalog"
)

// The embedded copy must be the research catalogue, byte for byte.
func TestEmbeddedMatchesShared(t *testing.T) {
	path := filepath.Join(testbin.SharedDir(t), "fixtures", "metrics", "catalog.yaml")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(catalog.Embedded(), want) {
		t.Fatalf("rules/catalog/catalog.yaml differs from %s: copy it again (cp %s rules/catalog/catalog.yaml)", path, path)
	}
}

func TestFacts(t *testing.T) {
	c := catalog.Default()
	m := c.Metric("vllm:num_preemptions_total")
	if m == nil || m.Type != catalog.Counter || m.Family != "vllm:num_preemptions" || !slices.Equal(m.Labels, []string{"model_name", "engine"}) {
		t.Fatalf("vllm:num_preemptions_total = %+v", m)
	}
	if m.Server.Title != "vLLM" || !m.Server.CounterTotal || !m.Server.Created {
		t.Errorf("vllm server = %+v", m.Server)
	}
	if s := c.Server("tgi"); s == nil || s.CounterTotal || s.Prefix != "tgi_" {
		t.Errorf("tgi server = %+v", s)
	}
	old := c.Metric("vllm:gpu_cache_usage_perc")
	if old == nil || old.Status != catalog.Removed || old.ReplacedBy != "vllm:kv_cache_usage_perc" || old.Until != "0.12 (removed by PR #29330, merged 2025-11-24)" {
		t.Errorf("vllm:gpu_cache_usage_perc = %+v", old)
	}
	ttft := c.Metric("vllm:time_to_first_token_seconds")
	if ttft == nil || len(ttft.Buckets) != 2 || len(ttft.Buckets[0]) != 22 || ttft.Buckets[0][21] != 2560 {
		t.Errorf("ttft buckets = %v", ttft.Buckets)
	}
	if m := c.Metric("vllm:cache_config_info"); m == nil || m.Labels != nil {
		t.Errorf("cache_config_info labels should be unknown: %+v", m)
	}
	if m := c.Metric("tgi_request_count"); m == nil || m.Type != catalog.Counter || len(m.Labels) != 0 || m.Labels == nil {
		t.Errorf("tgi_request_count = %+v", m)
	}
	if m := c.Metric("DCGM_FI_DEV_GPU_UTIL"); m == nil || !m.HasLabel("gpu") || !m.HasLabel("Hostname") || !m.HasLabel("GPU_I_ID") || m.HasLabel("model_name") {
		t.Errorf("DCGM_FI_DEV_GPU_UTIL = %+v", m)
	}
	if m := c.Metric("sglang:num_requests_waiting"); m == nil || m.Status != catalog.Removed {
		t.Errorf("sglang:num_requests_waiting = %+v", m)
	}
	if m := c.Metric("sglang:time_per_output_token_seconds"); m == nil || m.ReplacedBy != "sglang:inter_token_latency_seconds" {
		t.Errorf("sglang tpot = %+v", m)
	}
	if m := c.Metric("nv_trt_llm_kv_cache_block_metrics"); m == nil || m.Type != catalog.Gauge {
		t.Errorf("nv_trt_llm_kv_cache_block_metrics = %+v", m)
	}
	if m := c.Metric("vllm:spec_decode_efficiency"); m == nil || m.Status != catalog.Removed {
		t.Errorf("vllm:spec_decode_efficiency = %+v", m)
	}
	if m := c.Metric("http_requests_total"); m == nil || m.Server.Key != "vllm" || !slices.Equal(m.Labels, []string{"method", "status", "handler"}) {
		t.Errorf("http_requests_total = %+v", m)
	}
	for _, n := range []string{"vllm:num_gpu_blocks_free", "vllm:prefix_cache_hits", "vllm:kv_cache_usage", "vllm:waiting_requests"} {
		if _, ok := c.NotReal(n); !ok {
			t.Errorf("%s should be listed as never exported", n)
		}
	}
	if !c.KnownLabel("model_name") || !c.KnownLabel("finished_reason") || c.KnownLabel("pod") || c.KnownLabel("job") {
		t.Errorf("KnownLabel: model_name, finished_reason yes; pod, job no")
	}
}

func TestResolve(t *testing.T) {
	c := catalog.Default()
	for _, tc := range []struct {
		name, metric, suffix string
		typ                  catalog.Type
		valid                bool
	}{
		{"vllm:time_to_first_token_seconds_bucket", "vllm:time_to_first_token_seconds", "_bucket", catalog.Counter, true},
		{"vllm:time_to_first_token_seconds", "vllm:time_to_first_token_seconds", "", catalog.Histogram, false},
		{"tgi_request_count", "tgi_request_count", "", catalog.Counter, true},
		{"vllm:kv_cache_usage_perc_bucket", "vllm:kv_cache_usage_perc", "_bucket", catalog.Unknown, false},
		{"vllm:num_preemptions_created", "vllm:num_preemptions_total", "_created", catalog.Gauge, true},
		{"tgi_request_skipped_tokens", "tgi_request_skipped_tokens", "", catalog.Gauge, true},
		{"tgi_request_skipped_tokens_bucket", "tgi_request_skipped_tokens", "_bucket", catalog.Unknown, false},
		{"vllm:iteration_tokens_total_count", "vllm:iteration_tokens_total", "_count", catalog.Counter, true},
	} {
		s, ok := c.Resolve(tc.name)
		if !ok || s.Metric.Name != tc.metric || s.Suffix != tc.suffix || s.Type() != tc.typ || s.Valid() != tc.valid {
			t.Errorf("Resolve(%s) = %v %+v type %q valid %v", tc.name, ok, s, s.Type(), s.Valid())
		}
	}
	if _, ok := c.Resolve("vllm:num_preemptions"); ok {
		t.Errorf("vllm:num_preemptions must not resolve")
	}
}

func TestSuggest(t *testing.T) {
	c := catalog.Default()
	for in, want := range map[string]string{
		"vllm:kv_cache_usage_percent":         "vllm:kv_cache_usage_perc",
		"vllm:requests_running":               "vllm:num_requests_running",
		"vllm:time_to_first_token_bucket":     "vllm:time_to_first_token_seconds_bucket",
		"vllm:iteration_tokens_bucket":        "vllm:iteration_tokens_total_bucket",
		"tgi_request_durations_bucket":        "tgi_request_duration_bucket",
		"DCGM_FI_DEV_GPU_UTILS":               "DCGM_FI_DEV_GPU_UTIL",
		"vllm:something_entirely_different_x": "",
		"up":                                  "",
	} {
		if got := c.Suggest(in); got != want {
			t.Errorf("Suggest(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "schema_version: 2", "servers: [", "\x00\x01", "schema_version: 1\nservers: {x: {metrics: [{name: 5, labels: x}]}}"} {
		if _, err := catalog.Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q): no error", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(catalog.Embedded())
	f.Add([]byte("schema_version: 1\nservers: {v: {prefix: 'v:', metrics: [{name: 'v:x', type: counter, buckets: [1, 2]}]}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := catalog.Parse(b)
		if err == nil {
			c.Suggest("v:y")
			c.Resolve("v:x_bucket")
		}
	})
}

// The dcgm-exporter counters the dcgm pack uses beyond the defaults are
// known as counters that exist only when enabled (additions.yaml), and the
// replay counter is a default one.
func TestDCGMOptInCounters(t *testing.T) {
	c := catalog.Default()
	for _, name := range []string{"DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"} {
		m := c.Metric(name)
		if m == nil || m.Type != catalog.Counter || m.Status != catalog.Conditional || !m.HasLabel("gpu") {
			t.Errorf("%s = %+v, want a conditional counter with the exporter's labels", name, m)
		}
	}
	if m := c.Metric("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"); m == nil || m.Type != catalog.Counter || m.Status != catalog.Current {
		t.Errorf("DCGM_FI_DEV_PCIE_REPLAY_COUNTER = %+v, want a current counter", m)
	}
}
