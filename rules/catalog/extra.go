package catalog

// Facts that catalog.yaml writes as prose, or does not cover, kept here so
// the YAML stays a byte-for-byte copy of the research catalogue.

// prefixOverride widens a server's prefix: dcgm-exporter also exposes
// DCGM_EXP_* series besides the DCGM_FI_* fields.
var prefixOverride = map[string]string{
	"dcgm_exporter": "DCGM_",
}

// openServers expose any field the user configures, so an unknown name is
// not a bug by itself.
var openServers = map[string]bool{
	"dcgm_exporter": true,
}

// extraDefaultLabels: SGLang's scheduler metrics carry the parallelism
// ranks and the engine type besides model_name (SchedulerMetricsCollector.
// init_new at sgl-project/sglang@1025622f: model_name, engine_type,
// tp_rank, pp_rank, moe_ep_rank, dp_rank when set). The tokenizer's
// metrics have fewer; listing the ranks on every metric avoids false
// findings. priority (QueueCount gauges), is_streaming and cache_source
// are on the metrics that have them, in additions.yaml.
var extraDefaultLabels = map[string][]string{
	"sglang": {"tp_rank", "pp_rank", "moe_ep_rank", "dp_rank", "engine_type"},
}

// targetLabels are attached by the scrape configuration or Kubernetes
// service discovery, not by the server. A selector may use them on any
// metric; they never count as server labels.
var targetLabels = map[string]bool{
	"job": true, "instance": true, "namespace": true, "pod": true, "container": true,
	"node": true, "hostname": true, "Hostname": true, "service": true, "endpoint": true,
	"cluster": true, "__name__": true,
}

// extraServers have no section in catalog.yaml; their metrics, current
// and removed, are under servers: in additions.yaml. The Gateway API
// Inference Extension's endpoint picker (and the llm-d inference
// scheduler built on it) names its families inference_objective_*,
// inference_pool_* and inference_extension_*; before v1.1.0 the objective
// families were inference_model_* (PR #1567). Open: extensions and
// plugins add families of their own.
//
// SGLang's model gateway (sgl-model-gateway, earlier sgl-router) named its
// families sgl_router_* and renamed them smg_* with a new label scheme:
// two servers, so that a rule on an old name is reported as renamed. Open:
// only the families of observability/metrics.rs are listed (the mesh
// metrics and the tokenizer's sgl_tokenizer_* are not).
var extraServers = []Server{
	{Key: "gaie", Title: "Gateway API Inference Extension", Prefix: "inference_", Open: true},
	{Key: "sglang_gateway", Title: "SGLang model gateway", Prefix: "smg_", Open: true},
	{Key: "sglang_router", Title: "SGLang model gateway", Prefix: "sgl_router_", Open: true},
}

// replacements for removed names whose catalogue entry gives none: the
// first SGLang collector's names and their current equivalents (the
// catalogue's cross_engine_equivalents).
var replacements = map[string]string{
	"sglang:num_requests_running": "sglang:num_running_reqs",
	"sglang:num_requests_waiting": "sglang:num_queue_reqs",
	"sglang:queue_req":            "sglang:num_queue_reqs",
}

// appearsOn lists the metrics that have no series at all until the first
// event they count, with that event. prometheus_client and
// metrics-exporter-prometheus create a labelled series when it is first
// incremented; the servers create most of theirs at start, these not.
// The no-series check (PagedRuleNoSeries, paged init) does not count
// their absence against a rule.
var appearsOn = map[string]string{
	// catalog.yaml: "the series appears only after the first failure".
	"tgi_request_failure": "the first failed request",
	// Labelled by method and reason; the simulator and the captures show
	// them only once a batch failed or was concatenated.
	"tgi_batch_inference_failure": "the first failed batch",
	"tgi_batch_concat":            "the first batch concatenation",
	// prometheus-fastapi-instrumentator labels these by handler (and
	// method, status): nothing exists before the first API request, and
	// /metrics and /health requests are not counted.
	"http_requests_total":           "the first API request",
	"http_request_size_bytes":       "the first API request",
	"http_response_size_bytes":      "the first API request",
	"http_request_duration_seconds": "the first API request",
	// SGLang's --enable-metrics HTTP middleware and the scheduler's token
	// counter (prometheus_client, labelled): nothing before the first
	// request or the first token.
	"sglang:http_requests_total":   "the first HTTP request",
	"sglang:http_responses_total":  "the first HTTP response",
	"sglang:realtime_tokens_total": "the first token processed",
	// P/D prefill worker: labelled, so nothing before the first
	// optimistic prefill retry or the first bootstrap handshake.
	"sglang:num_prefill_retries_total": "the first prefill retry",
	"sglang:kv_transfer_bootstrap_ms":  "the first P/D bootstrap",
	// client_golang CounterVec: a labelled series exists once incremented.
	// The EPP counts an error with its error_code when it happens.
	"inference_objective_request_error_total":         "the first failed request",
	"inference_model_request_error_total":             "the first failed request",
	"llm_d_inference_scheduler_pd_decision_total":     "the first scheduling decision",
	"llm_d_inference_scheduler_disagg_decision_total": "the first scheduling decision",
	// llm-d's data layer counts poll and extract failures by plugin type.
	"llm_d_inference_scheduler_datalayer_poll_errors_total":    "the first failed poll of a pod",
	"llm_d_inference_scheduler_datalayer_extract_errors_total": "the first failed extraction",
}

// units the catalogue gives in prose or not at all. Names that end in
// _seconds, _ms, _us or _bytes say theirs; these do not.
var units = map[string]string{
	// The pool usage, max(full, swa, mamba), 0..1 (SchedulerMetricsCollector
	// at sgl-project/sglang@1025622f; pack-review-turn3 section 1, sglang).
	"sglang:token_usage": "fraction 0..1",
	// Accepted over proposed draft tokens (same revision).
	"sglang:spec_accept_rate": "fraction 0..1",
	// vLLM's removed V0/early-V1 usage gauges: "1 means 100 percent usage"
	// (their HELP in catalog.yaml).
	"vllm:gpu_cache_usage_perc": "fraction 0..1",
	"vllm:cpu_cache_usage_perc": "fraction 0..1",
	// Triton's HELP: "GPU utilization rate [0.0 - 1.0)" (catalog.yaml).
	"nv_gpu_utilization": "fraction 0..1",
	// The mean of the pods' KV-cache usage as the engines report it, 0..1
	// (kubernetes-sigs/gateway-api-inference-extension@v1.5.0:
	// pkg/epp/backend/metrics/logger.go:105, RecordInferencePoolAvgKVCache).
	"inference_pool_average_kv_cache_utilization": "fraction 0..1",
	// TGI observes durations with as_secs_f64 (huggingface/text-generation-
	// inference@db931fc router/src/server.rs; pack-review-turn3, tgi).
	"tgi_request_duration":                     "seconds",
	"tgi_request_validation_duration":          "seconds",
	"tgi_request_queue_duration":               "seconds",
	"tgi_request_inference_duration":           "seconds",
	"tgi_request_mean_time_per_token_duration": "seconds",
	"tgi_batch_forward_duration":               "seconds",
	"tgi_batch_decode_duration":                "seconds",
	"tgi_batch_filter_duration":                "seconds",
	"tgi_batch_inference_duration":             "seconds",
	"tgi_batch_concat_duration":                "seconds",
	// Triton: nv_model_load_duration_secs is in seconds (its name).
	"nv_model_load_duration_secs": "seconds",
}

func addExtra(c *Catalog) {
	for name, u := range units {
		if m := c.metrics[name]; m != nil && m.Unit == "" {
			m.Unit = u
		}
	}
	for name, event := range appearsOn {
		if m := c.metrics[name]; m != nil {
			m.AppearsOn = event
		}
	}
	for name, repl := range replacements {
		if m := c.metrics[name]; m != nil && m.ReplacedBy == "" {
			m.ReplacedBy = repl
		}
	}
}
