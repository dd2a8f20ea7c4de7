package simulator

import (
	"math"
	"time"
)

// vllm exposes vLLM's /metrics: the V1 engine (current releases: labels
// model_name and engine, _created series on) or the legacy V0 engine (about
// 0.7: label model_name only, no _created, the swap and CPU-cache gauges,
// time_per_output_token instead of inter_token_latency).
type vllm struct {
	v0    bool
	m     *model
	start time.Time
	lv    []string // model_name[, engine]
	list  familyList
	proc  *pythonProcess
	http  *fastapiHTTP

	running, waiting, waitingByReason, kvUsage, sleepState, cacheConfig *family
	swapped, cpuCache, cpuPrefixRate, gpuPrefixRate                     *family
	preemptions, promptTokens, generationTokens, success                *family
	prefixQueries, prefixHits, extQueries, extHits, mmQueries, mmHits   *family
	bySource, cachedTokens, admission                                   *family
	iteration, reqPrompt, reqGeneration, reqMaxGen, paramsN, paramsMax  *family
	ttft, itl, reqTPOT, tpot, e2e, queue, inference, prefill, decode    *family
	prefillKV                                                           *family
	drafts, draftTokens, acceptedTokens                                 *family // with Options.SpecDecode
	nixlFailed, nixlNotify, nixlExpired                                 *family // with Options.KVConnector
	corrupted                                                           *family // with Options.NaNCheck
	connector                                                           bool    // Options.KVConnector: the external prefix cache counts
}

func newVLLM(v0 bool, opts Options, m *model) *vllm {
	v := &vllm{v0: v0, m: m, start: opts.Start, connector: opts.KVConnector}
	l := &v.list
	labels := []string{"model_name", "engine"}
	v.lv = []string{opts.Model, "0"}
	if v0 {
		labels = labels[:1]
		v.lv = v.lv[:1]
	}
	v.proc = newPythonProcess(l, opts.Start)
	v.http = newFastapiHTTP(l)
	tokens := buckets125(opts.MaxModelLen)

	if v0 {
		v.defineV0(l, opts, labels, tokens)
	} else {
		v.defineV1(l, opts, labels, tokens)
	}
	return v
}

// defineV0 declares the legacy engine's families (vllm/engine/metrics.py,
// about 0.7).
func (v *vllm) defineV0(l *familyList, opts Options, labels []string, tokens []float64) {
	with := func(extra ...string) []string { return append(append([]string(nil), labels...), extra...) }
	l.gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
		"block_size", "cache_dtype", "cpu_kvcache_space_bytes", "enable_prefix_caching", "gpu_memory_utilization",
		"num_cpu_blocks", "num_gpu_blocks", "num_gpu_blocks_override", "sliding_window", "swap_space_bytes").
		with(opts.Start, "16", "auto", "4294967296", "True", "0.9", "2048", "7281", "None", "None", "4294967296").value = 1
	v.running = l.gauge("vllm:num_requests_running", "Number of requests currently running on GPU.", labels...)
	v.swapped = l.gauge("vllm:num_requests_swapped", "Number of requests swapped to CPU.", labels...)
	v.waiting = l.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", labels...)
	v.kvUsage = l.gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", labels...)
	v.cpuCache = l.gauge("vllm:cpu_cache_usage_perc", "CPU KV-cache usage. 1 means 100 percent usage.", labels...)
	v.cpuPrefixRate = l.gauge("vllm:cpu_prefix_cache_hit_rate", "CPU prefix cache block hit rate.", labels...)
	v.gpuPrefixRate = l.gauge("vllm:gpu_prefix_cache_hit_rate", "GPU prefix cache block hit rate.", labels...)
	v.preemptions = l.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", labels...)
	v.promptTokens = l.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", labels...)
	v.generationTokens = l.counter("vllm:generation_tokens_total", "Number of generation tokens processed.", labels...)
	v.iteration = l.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", vllmIteration, labels...)
	v.ttft = l.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", vllmV0TTFT, labels...)
	v.tpot = l.histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", vllmV0TPOT, labels...)
	v.e2e = l.histogram("vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", vllmV0Latency, labels...)
	v.queue = l.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", vllmV0Latency, labels...)
	v.inference = l.histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", vllmV0Latency, labels...)
	v.prefill = l.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", vllmV0Latency, labels...)
	v.decode = l.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", vllmV0Latency, labels...)
	v.reqPrompt = l.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokens, labels...)
	v.reqGeneration = l.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", tokens, labels...)
	v.reqMaxGen = l.histogram("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", tokens, labels...)
	v.paramsN = l.histogram("vllm:request_params_n", "Histogram of the n request parameter.", vllmParamsN, labels...)
	v.paramsMax = l.histogram("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", tokens, labels...)
	v.success = l.counter("vllm:request_success_total", "Count of successfully processed requests.", with("finished_reason")...)
	// V0 created its series when first set; all of these are set on the
	// first logging interval.
	for _, f := range l.list {
		if len(f.labels) == len(labels) && f.labels[0] == "model_name" {
			f.with(opts.Start, v.lv...)
		}
	}
}

// defineV1 declares the V1 engine's families (vllm/v1/metrics/loggers.py,
// 2026 revision).
func (v *vllm) defineV1(l *familyList, opts Options, labels []string, tokens []float64) {
	with := func(extra ...string) []string { return append(append([]string(nil), labels...), extra...) }
	v.running = l.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", labels...)
	v.waiting = l.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", labels...)
	v.waitingByReason = l.gauge("vllm:num_requests_waiting_by_reason", "Number of waiting requests by reason (capacity: waiting for KV cache or batch slots; deferred: held back by the scheduler). Sum of all reasons equals vllm:num_requests_waiting.", with("reason")...)
	v.kvUsage = l.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", labels...)
	v.sleepState = l.gauge("vllm:engine_sleep_state", "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.", with("sleep_state")...)
	v.preemptions = l.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", labels...)
	v.promptTokens = l.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", labels...)
	v.bySource = l.counter("vllm:prompt_tokens_by_source_total", "Number of prompt tokens by source.", with("source")...)
	v.cachedTokens = l.counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local + external).", labels...)
	v.generationTokens = l.counter("vllm:generation_tokens_total", "Number of generation tokens processed.", labels...)
	v.success = l.counter("vllm:request_success_total", "Count of successfully processed requests.", with("finished_reason")...)
	v.prefixQueries = l.counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", labels...)
	v.prefixHits = l.counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", labels...)
	v.extQueries = l.counter("vllm:external_prefix_cache_queries_total", "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.", labels...)
	v.extHits = l.counter("vllm:external_prefix_cache_hits_total", "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.", labels...)
	v.mmQueries = l.counter("vllm:mm_cache_queries_total", "Multi-modal cache queries, in terms of number of queried items.", labels...)
	v.mmHits = l.counter("vllm:mm_cache_hits_total", "Multi-modal cache hits, in terms of number of cached items.", labels...)
	// PR #55812: a reason label and no engine label.
	v.admission = l.counter("vllm:admission_rejections_total", "Number of requests rejected at admission, by reason.", "model_name", "reason")
	v.iteration = l.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", vllmIteration, labels...)
	v.reqPrompt = l.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokens, labels...)
	v.reqGeneration = l.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", tokens, labels...)
	v.reqMaxGen = l.histogram("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", tokens, labels...)
	v.paramsN = l.histogram("vllm:request_params_n", "Histogram of the n request parameter.", vllmParamsN, labels...)
	v.paramsMax = l.histogram("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", tokens, labels...)
	v.prefillKV = l.histogram("vllm:request_prefill_kv_computed_tokens", "Histogram of new KV tokens computed during prefill (excluding cached tokens).", tokens, labels...)
	v.ttft = l.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", vllmV1TTFT, labels...)
	v.itl = l.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", vllmV1ITL, labels...)
	v.reqTPOT = l.histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", vllmV1ITL, labels...)
	if opts.Version != "" {
		// Releases up to 0.14 still have the old per-step histogram
		// (deprecated in 0.11, hidden from 0.12, removed by PR #32661 after
		// 0.14 was cut); New filters it by release.
		v.tpot = l.histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", vllmV1ITL, labels...)
	}
	v.e2e = l.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", vllmV1Latency, labels...)
	v.queue = l.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", vllmV1Latency, labels...)
	v.inference = l.histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", vllmV1Latency, labels...)
	v.prefill = l.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", vllmV1Latency, labels...)
	v.decode = l.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", vllmV1Latency, labels...)
	if opts.SpecDecode {
		// vllm/v1/spec_decode/metrics.py; one draft of k tokens per step.
		v.drafts = l.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", labels...)
		v.draftTokens = l.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", labels...)
		v.acceptedTokens = l.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", labels...)
	}
	if opts.NaNCheck {
		// Registered only with VLLM_COMPUTE_NANS_IN_LOGITS=1 (PR #27306).
		v.corrupted = l.counter("vllm:corrupted_requests_total", "Corrupted requests, in terms of total number of requests with NaNs in logits.", labels...)
	}
	if opts.KVConnector {
		// NixlPromMetrics of the NIXL connector (nixl_connector.py).
		v.nixlFailed = l.counter("vllm:nixl_num_failed_transfers_total", "Number of failed NIXL KV Cache transfers.", labels...)
		v.nixlNotify = l.counter("vllm:nixl_num_failed_notifications_total", "Number of failed NIXL KV Cache notifications.", labels...)
		v.nixlExpired = l.counter("vllm:nixl_num_kv_expired_reqs_total", "Number of requests that had their KV expire. NOTE: This metric is tracked on the P instance.", labels...)
	}
	v.cacheConfig = l.gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
		"block_size", "cache_dtype", "calculate_kv_scales", "cpu_offload_gb", "enable_prefix_caching", "engine",
		"gpu_memory_utilization", "is_attention_free", "num_cpu_blocks", "num_gpu_blocks", "num_gpu_blocks_override",
		"prefix_caching_hash_algo", "sliding_window", "swap_space", "swap_space_bytes")
	v.cacheConfig.with(opts.Start, "16", "auto", "False", "0", "True", "0", "0.9", "False", "None", "7281", "None", "sha256", "None", "4", "4294967296").value = 1

	// V1 creates every per-engine child at startup, including one per
	// finished reason, so every series exists from the first scrape.
	for _, f := range l.list {
		if len(f.labels) == 2 && f.labels[0] == "model_name" && f.labels[1] == "engine" {
			f.with(opts.Start, v.lv...)
		}
	}
	for _, r := range []string{"capacity", "deferred"} {
		v.waitingByReason.with(opts.Start, v.lbl(r)...)
	}
	for _, s := range []string{"awake", "weights_offloaded", "discard_all"} {
		v.sleepState.with(opts.Start, v.lbl(s)...)
	}
	v.sleepState.with(opts.Start, v.lbl("awake")...).value = 1
	for _, s := range []string{"local_compute", "local_cache_hit", "external_kv_transfer"} {
		v.bySource.with(opts.Start, v.lbl(s)...)
	}
	for _, r := range []string{"stop", "length", "abort", "error", "repetition"} {
		v.success.with(opts.Start, v.lbl(r)...)
	}
	for _, r := range []string{"max_num_queued_reqs", "max_num_queued_tokens"} {
		v.admission.with(opts.Start, v.lv[0], r)
	}
}

// lbl returns the default label values followed by extra ones.
func (v *vllm) lbl(extra ...string) []string {
	return append(append([]string(nil), v.lv...), extra...)
}

func (v *vllm) families() []*family { return v.list.list }

func (v *vllm) exposition() exposition {
	return exposition{style: stylePython, created: !v.v0, format: formatPython}
}

func (v *vllm) record(s *step) {
	v.proc.record(s)
	v.http.record(s)
	at := v.start
	v.running.with(at, v.lv...).value = s.state.running
	v.waiting.with(at, v.lv...).value = s.state.waiting
	v.kvUsage.with(at, v.lv...).value = s.state.kv
	if v.v0 {
		v.swapped.with(at, v.lv...).value = s.state.swapped
		v.cpuCache.with(at, v.lv...).value = s.state.cpuKV
		v.gpuPrefixRate.with(at, v.lv...).value = s.state.prefixHit
		v.cpuPrefixRate.with(at, v.lv...).value = 0
	} else {
		// The reasons add up to num_requests_waiting (PR #38435).
		deferred := min(s.state.waiting, math.Round(s.cond.deferred))
		v.waitingByReason.with(at, v.lbl("capacity")...).value = s.state.waiting - deferred
		v.waitingByReason.with(at, v.lbl("deferred")...).value = deferred
		awake := 1.0
		if s.cond.asleep {
			awake = 0
		}
		v.sleepState.with(at, v.lbl("awake")...).value = awake
		v.sleepState.with(at, v.lbl("weights_offloaded")...).value = 1 - awake
	}
	v.preemptions.with(at, v.lv...).value += float64(s.preemptions)

	var promptInStep float64
	for _, r := range s.finished {
		if r.rejected {
			// Answered before the engine saw it; a V1 server counts the
			// 503s of a full queue as admission rejections.
			if !v.v0 && r.status == "5xx" {
				v.admission.with(at, v.lv[0], "max_num_queued_reqs").value++
			}
			continue
		}
		promptInStep += r.prompt
		v.promptTokens.with(at, v.lv...).value += r.prompt
		v.generationTokens.with(at, v.lv...).value += r.gen
		v.success.with(s.now, v.lbl(r.reason)...).value++
		obs := func(f *family, x float64) { f.observe(f.with(at, v.lv...), x, 1) }
		obs(v.ttft, r.ttft)
		obs(v.e2e, r.e2e)
		obs(v.queue, r.queue)
		obs(v.inference, r.prefill+r.decode)
		obs(v.prefill, r.prefill)
		obs(v.decode, r.decode)
		obs(v.reqPrompt, r.prompt)
		obs(v.reqGeneration, r.gen)
		obs(v.reqMaxGen, r.maxTokens)
		obs(v.paramsN, 1)
		obs(v.paramsMax, r.maxTokens)
		perToken := v.itl
		if v.v0 {
			perToken = v.tpot
		} else {
			v.prefixQueries.with(at, v.lv...).value += r.prompt
			v.prefixHits.with(at, v.lv...).value += r.cached
			if v.connector {
				// The connector is asked for the tokens the local cache
				// did not have (PR #30522) and finds a share of them.
				miss := r.prompt - r.cached
				v.extQueries.with(at, v.lv...).value += miss
				v.extHits.with(at, v.lv...).value += math.Floor(miss * s.cond.extHit)
			}
			v.bySource.with(at, v.lbl("local_cache_hit")...).value += r.cached
			v.bySource.with(at, v.lbl("local_compute")...).value += r.prompt - r.cached
			v.cachedTokens.with(at, v.lv...).value += r.cached
			obs(v.prefillKV, r.prompt-r.cached)
			if r.gen > 1 {
				obs(v.reqTPOT, r.itl)
			}
		}
		if v.drafts != nil && r.gen > 1 {
			// k = 3 draft tokens per step; each step emits the accepted
			// ones plus one verified token.
			const k = 3
			steps := math.Ceil((r.gen - 1) / (1 + k*s.cond.specAccept))
			v.drafts.with(at, v.lv...).value += steps
			v.draftTokens.with(at, v.lv...).value += k * steps
			v.acceptedTokens.with(at, v.lv...).value += math.Round(k * steps * s.cond.specAccept)
		}
		if v.corrupted != nil && s.cond.nanFrac > 0 && v.m.rng.Float64() < s.cond.nanFrac {
			v.corrupted.with(at, v.lv...).value++
		}
		if v.nixlFailed != nil && v.m.rng.Float64() < s.cond.xferFail {
			v.nixlFailed.with(at, v.lv...).value++
		}
		spread(v.m, perToken, perToken.with(at, v.lv...), r.itl, r.gen-1)
		if !v.v0 && v.tpot != nil {
			spread(v.m, v.tpot, v.tpot.with(at, v.lv...), r.itl, r.gen-1)
		}
	}
	if s.iterations > 0 {
		per := s.state.running + promptInStep/s.iterations
		v.iteration.observe(v.iteration.with(at, v.lv...), per, uint64(s.iterations))
	}
}
