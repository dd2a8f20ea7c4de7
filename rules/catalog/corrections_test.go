package catalog

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Every correction in additions.yaml replaces an entry of the research
// catalogue (a misspelt name would silently correct nothing), says what it
// corrects and names its source.
func TestCorrectionsTargetCatalogEntries(t *testing.T) {
	var research rawFile
	if err := yaml.Unmarshal(embedded, &research); err != nil {
		t.Fatal(err)
	}
	adds, err := parseAdditions()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for key, srv := range adds.Servers {
		rs := research.Servers[key]
		var names []string
		for _, rm := range slices.Concat(rs.Metrics, rs.DefaultMetrics, rs.Removed) {
			names = append(names, splitNames(rm.Name)...)
		}
		for _, rm := range srv.Corrections {
			n++
			for _, name := range splitNames(rm.Name) {
				if !slices.Contains(names, name) {
					t.Errorf("%s: correction of %s, which catalog.yaml does not list", key, name)
				}
			}
			if rm.Source == "" {
				t.Errorf("%s: correction of %s has no source", key, rm.Name)
			}
			if _, ok := rm.Rest["corrects"]; !ok {
				t.Errorf("%s: correction of %s does not say what it corrects", key, rm.Name)
			}
		}
	}
	if n == 0 {
		t.Fatal("no corrections read from additions.yaml")
	}
}

// What pack-review-turn3.md found upstream, as the catalogue now says it.
func TestReviewTurn3(t *testing.T) {
	c := Default()
	for _, w := range []struct {
		name, replacedBy string
	}{
		{"vllm:prompt_tokens_recomputed_total", ""},
		{"sglang:num_prefill_prealloc_queue_reqs", "sglang:num_prefill_bootstrap_queue_reqs"},
		{"sglang:engine_startup_time", "sglang:startup_time_seconds (label phase: load_weight, kv_cache_allocation, scheduler_e2e, tokenizer_e2e)"},
		{"sglang:engine_load_weights_time", `sglang:startup_time_seconds{phase="load_weight"}`},
		{"sgl_router_cb_state", "smg_worker_cb_state"},
		{"sgl_router_retries_exhausted_total", "smg_worker_retries_exhausted_total"},
		{"inference_extension_scheduler_plugin_duration_seconds", "inference_extension_plugin_duration_seconds"},
	} {
		m := c.Metric(w.name)
		if m == nil || m.Status != Removed || m.ReplacedBy != w.replacedBy {
			t.Errorf("%s = %+v, want removed, replaced by %q", w.name, m, w.replacedBy)
		}
	}
	for _, w := range []struct {
		name   string
		typ    Type
		labels []string // that the metric must have
	}{
		{"sglang:kv_transfer_speed_gb_s", Histogram, nil},
		{"sglang:kv_transfer_latency_ms", Histogram, nil},
		{"sglang:kv_transfer_bootstrap_ms", Histogram, nil},
		{"sglang:num_prefill_retries_total", Counter, []string{"moe_ep_rank"}},
		{"sglang:num_queue_reqs", Gauge, []string{"priority", "moe_ep_rank", "tp_rank"}},
		{"sglang:num_prefill_bootstrap_queue_reqs", Gauge, []string{"priority"}},
		{"sglang:time_to_first_token_seconds", Histogram, []string{"is_streaming"}},
		{"sglang:cached_tokens_total", Counter, []string{"cache_source"}},
		{"sglang:startup_time_seconds", Gauge, []string{"phase"}},
		{"sglang:scheduler_idle_seconds_total", Counter, nil},
		{"sglang:hicache_dropped_tokens_total", Counter, []string{"reason", "pool", "cache_type"}},
		{"sglang:cuda_graph_passes_total", Counter, []string{"mode"}},
		{"vllm:nixl_post_time_seconds", Histogram, []string{"engine"}},
		{"vllm:kv_offload_total_bytes_total", Counter, []string{"transfer_type"}},
		{"smg_worker_cb_state", Gauge, []string{"worker"}},
		{"smg_router_request_errors_total", Counter, []string{"error_type", "backend_type"}},
		{"llm_d_inference_scheduler_datalayer_poll_errors_total", Counter, []string{"source_type"}},
	} {
		m := c.Metric(w.name)
		if m == nil || m.Status == Removed || m.Type != w.typ {
			t.Errorf("%s = %+v, want a current %s", w.name, m, w.typ)
			continue
		}
		for _, l := range w.labels {
			if !m.HasLabel(l) {
				t.Errorf("%s: no label %s in %v", w.name, l, m.Labels)
			}
		}
	}
	if m := c.Metric("sglang:prompt_tokens_total"); m == nil || !m.HasLabel("is_streaming") || m.HasLabel("priority") {
		t.Errorf("sglang:prompt_tokens_total labels = %v, want is_streaming and no priority", m.Labels)
	}
	// PR #55812: a reason label and no engine label.
	if m := c.Metric("vllm:admission_rejections_total"); m == nil || !slices.Equal(m.Labels, []string{"model_name", "reason"}) || m.Family != "vllm:admission_rejections" {
		t.Errorf("vllm:admission_rejections_total = %+v", m)
	}
	if m := c.Metric("sglang:max_total_num_tokens"); m == nil || m.Confidence != "high" || strings.Contains(m.Note, "absent") {
		t.Errorf("sglang:max_total_num_tokens = %+v, want the 1025622f entry", m)
	}
	if m := c.Metric("tgi_batch_max_total_tokens"); m == nil || !strings.HasPrefix(m.Since, "v2.3.1 ") {
		t.Errorf("tgi_batch_max_total_tokens since %q, want v2.3.1", m.Since)
	}
	if m := c.Metric("nv_inference_first_response_histogram_ms"); m == nil || !strings.Contains(m.Note, "#464") {
		t.Errorf("nv_inference_first_response_histogram_ms note %q, want core PR #464", m.Note)
	}
	if s := c.Server("gaie"); s == nil || !strings.Contains(s.Absent["1.6"], "no endpoint-picker metrics") {
		t.Errorf("gaie absent = %v, want the v1.6.0 statement", s.Absent)
	}
	for _, key := range []string{"sglang_gateway", "sglang_router"} {
		if s := c.Server(key); s == nil || s.Title != "SGLang model gateway" {
			t.Errorf("server %s = %+v", key, s)
		}
	}
	if c.ServerFor("smg_worker_health") != c.Server("sglang_gateway") || c.ServerFor("sgl_router_worker_health") != c.Server("sglang_router") {
		t.Error("gateway prefixes do not resolve to the gateway servers")
	}
}

// The inference gateway's prefix-indexer and latency-predictor families.
func TestGatewayPredictorAndIndexer(t *testing.T) {
	c := Default()
	for name, typ := range map[string]Type{
		"inference_extension_prefix_indexer_size":                      Gauge,
		"inference_extension_prefix_indexer_hit_ratio":                 Histogram,
		"inference_objective_request_predicted_ttft_seconds":           Histogram,
		"inference_objective_request_tpot_prediction_duration_seconds": Histogram,
	} {
		if m := c.Metric(name); m == nil || m.Type != typ || m.Server.Key != "gaie" {
			t.Errorf("%s = %+v, want a gaie %s", name, m, typ)
		}
	}
}
