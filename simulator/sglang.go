package simulator

import (
	"math"
	"time"
)

// sglang exposes SGLang's /metrics (--enable-metrics): prometheus_client in
// multiprocess mode, so no _created series and _sum before the buckets.
// Scheduler metrics carry model_name and tp_rank, tokenizer-side
// histograms model_name only (as in the 2026 capture). The grammar and
// per-stage bucket layouts are not in the catalogue; the ones here are
// plausible stand-ins.
type sglang struct {
	m     *model
	start time.Time
	list  familyList
	sched []string // model_name, tp_rank
	tok   []string // model_name

	maxTotalTokens float64

	httpActive, running, queued, usedTokens, tokenUsage, cacheHitRate, maxTotal, genThroughput *family
	utilization, retracted, paused, retractedTotal, retractedInput, retractedOutput            *family
	grammarQueue, prefillBootstrap, prefillInflight, decodePrealloc, decodeTransfer            *family
	promptTokens, generationTokens, cachedTokens, requests, aborted                            *family
	ttft, itl, e2e, queueTime, perStage                                                        *family
	specAcceptRate, specAcceptLength, transferFailed, bootstrapFailed                          *family
	httpRequests, httpResponses, realtimeTokens, schedulerIdle                                 *family
	bootstrapMs, prefillRetries                                                                *family
	specOn, pd, prefill                                                                        bool
	arrived                                                                                    int // requests counted by the HTTP middleware so far
}

func newSGLang(opts Options, m *model) *sglang {
	g := &sglang{m: m, start: opts.Start, sched: []string{opts.Model, "0"}, tok: []string{opts.Model}, maxTotalTokens: 430839}
	l := &g.list
	sl := []string{"model_name", "tp_rank"}
	set := func(f *family, v float64) { f.with(opts.Start, g.sched...).value = v }
	g.httpActive = l.gauge("sglang:http_requests_active", "Number of currently active HTTP requests", "endpoint", "method")
	// add_prometheus_track_response_middleware (python/sglang/srt/utils/
	// common.py): requests counted when they arrive, responses when the
	// handler returns, by route template.
	g.httpRequests = l.counter("sglang:http_requests_total", "Total number of HTTP requests by endpoint and method", "endpoint", "method")
	g.httpResponses = l.counter("sglang:http_responses_total", "Total number of HTTP responses by endpoint and status code", "endpoint", "method", "status_code")
	g.running = l.gauge("sglang:num_running_reqs", "The number of running requests.", sl...)
	g.queued = l.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", sl...)
	g.usedTokens = l.gauge("sglang:num_used_tokens", "The number of used tokens.", sl...)
	g.tokenUsage = l.gauge("sglang:token_usage", "The token usage.", sl...)
	g.cacheHitRate = l.gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", sl...)
	g.maxTotal = l.gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", sl...)
	g.genThroughput = l.gauge("sglang:gen_throughput", "The generation throughput (token/s).", sl...)
	g.utilization = l.gauge("sglang:utilization", "The utilization.", sl...)
	set(l.gauge("sglang:is_cuda_graph", "Whether CUDA graph execution is active.", sl...), 1)
	g.promptTokens = l.counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", sl...)
	g.generationTokens = l.counter("sglang:generation_tokens_total", "Number of generation tokens processed.", sl...)
	g.cachedTokens = l.counter("sglang:cached_tokens_total", "Number of cached prompt tokens.", sl...)
	g.requests = l.counter("sglang:num_requests_total", "Number of requests processed.", sl...)
	set(l.counter("sglang:num_so_requests_total", "Number of structured output requests processed.", sl...), 0)
	g.aborted = l.counter("sglang:num_aborted_requests_total", "Number of requests aborted.", sl...)
	g.retracted = l.gauge("sglang:num_retracted_reqs", "The number of currently retracted requests.", sl...)
	g.retractedTotal = l.counter("sglang:num_retracted_requests_total", "Total number of retracted requests.", sl...)
	g.retractedInput = l.counter("sglang:num_retracted_input_tokens_total", "Total number of retracted input tokens.", sl...)
	g.retractedOutput = l.counter("sglang:num_retracted_output_tokens_total", "Total number of retracted output tokens.", sl...)
	set(l.counter("sglang:num_grammar_timeout_total", "Number of grammar timeouts.", sl...), 0)
	g.paused = l.gauge("sglang:num_paused_reqs", "The number of paused requests by async weight sync.", sl...)
	g.specOn, g.pd, g.prefill = opts.SpecDecode, opts.KVConnector, opts.KVConnector && opts.PrefillWorker
	g.specAcceptLength = l.gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding.", sl...)
	g.specAcceptRate = l.gauge("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch).", sl...)
	set(g.specAcceptLength, 0)
	set(g.specAcceptRate, 0)
	g.bootstrapFailed = l.counter("sglang:num_bootstrap_failed_reqs_total", "The number of bootstrap failed requests.", sl...)
	g.transferFailed = l.counter("sglang:num_transfer_failed_reqs_total", "The number of transfer failed requests.", sl...)
	set(g.bootstrapFailed, 0)
	set(g.transferFailed, 0)
	// The P/D queue gauges exist on every server; each reports 0 outside
	// its own mode (a prefill queue on a decode worker, all four on a
	// unified server). The simulator with --kv-connector is a decode worker.
	// The prefill one was num_prefill_prealloc_queue_reqs until 2026
	// (renamed after sgl-project/sglang@44cedc2b).
	g.prefillBootstrap = l.gauge("sglang:num_prefill_bootstrap_queue_reqs", "The number of requests in the prefill bootstrap queue.", sl...)
	g.prefillInflight = l.gauge("sglang:num_prefill_inflight_queue_reqs", "The number of requests in the prefill inflight queue.", sl...)
	g.decodePrealloc = l.gauge("sglang:num_decode_prealloc_queue_reqs", "The number of requests in the decode prealloc queue.", sl...)
	g.decodeTransfer = l.gauge("sglang:num_decode_transfer_queue_reqs", "The number of requests in the decode transfer queue.", sl...)
	for _, f := range []*family{g.prefillBootstrap, g.prefillInflight, g.decodePrealloc, g.decodeTransfer} {
		set(f, 0)
	}
	// Observed on a P/D prefill worker: the bootstrap handshake with the
	// decode worker (SchedulerReqTimeStats: bootstrap done minus entry to
	// the prefill bootstrap queue) and optimistic prefills thrown away and
	// requeued (disaggregation/prefill.py). Labelled: no series before the
	// first observation.
	g.bootstrapMs = l.histogram("sglang:kv_transfer_bootstrap_ms", "Histogram of KV transfer bootstrap time in ms.", []float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500}, sl...)
	g.prefillRetries = l.counter("sglang:num_prefill_retries_total", "Total number of prefill retries.", sl...)
	// The tokenizer's startup gauges by phase (emit_startup_time at
	// sgl-project/sglang@1025622f; before, engine_startup_time and
	// engine_load_weights_time).
	startup := l.gauge("sglang:startup_time_seconds", "Engine startup duration by phase in seconds.", "model_name", "phase")
	for _, p := range []struct {
		phase string
		secs  float64
	}{{"load_weight", 11.3}, {"kv_cache_allocation", 2.1}, {"scheduler_e2e", 38.9}, {"tokenizer_e2e", 42.7}} {
		startup.with(opts.Start, opts.Model, p.phase).value = p.secs
	}
	set(l.gauge("sglang:pending_prealloc_token_usage", "The token usage for pending preallocated tokens (not preallocated yet).", sl...), 0)
	set(l.gauge("sglang:swa_token_usage", "The token usage for SWA layers.", sl...), 0)
	g.grammarQueue = l.gauge("sglang:num_grammar_queue_reqs", "The number of requests in the grammar waiting queue.", sl...)
	set(g.grammarQueue, 0)
	set(l.gauge("sglang:num_running_reqs_offline_batch", "The number of running low-priority offline batch requests(label is 'batch').", sl...), 0)
	set(l.gauge("sglang:max_running_requests_under_SLO", "The maximum number of running requests under SLO.", sl...), 256)
	set(l.counter("sglang:num_grammar_cache_hit_total", "Number of grammar cache hits.", sl...), 0)
	set(l.counter("sglang:num_grammar_aborted_total", "Number of grammar aborted requests.", sl...), 0)
	set(l.counter("sglang:num_grammar_total", "Number of the total grammar requests.", sl...), 0)
	for _, h := range []struct {
		name, help string
		b          []float64
	}{
		{"sglang:grammar_compilation_time_seconds", "Histogram of grammar compilation time in seconds.", []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 40, 60, 90, 120, 240}},
		{"sglang:grammar_schema_count", "Histogram of grammar schema count.", []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500}},
		{"sglang:grammar_ebnf_size", "Histogram of grammar EBNF size.", []float64{0, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000}},
		{"sglang:grammar_tree_traversal_time_avg", "Histogram of average grammar tree traversal time in seconds.", []float64{0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1}},
		{"sglang:grammar_tree_traversal_time_max", "Histogram of max grammar tree traversal time in seconds.", []float64{0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1}},
	} {
		l.histogram(h.name, h.help, h.b, sl...).with(opts.Start, g.sched...)
	}
	// The scheduler's progress counters (SchedulerMetricsCollector at
	// sgl-project/sglang@1025622f): tokens by mode on each log interval,
	// and the wall time with nothing runnable or queued.
	g.realtimeTokens = l.counter("sglang:realtime_tokens_total", "Total number of tokens processed (updated on each log interval). mode: prefill_compute, prefill_cache, decode.", "model_name", "tp_rank", "mode")
	g.schedulerIdle = l.counter("sglang:scheduler_idle_seconds_total", "Total wall time while the scheduler has no runnable or queued work.", sl...)
	set(g.schedulerIdle, 0)
	g.perStage = l.histogram("sglang:per_stage_req_latency_seconds", "The latency of each stage of requests.", exponential(0.001, 1.62, 30), "model_name", "tp_rank", "stage")
	g.ttft = l.histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", sglangTTFT, "model_name")
	g.itl = l.histogram("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", sglangITL, "model_name")
	g.e2e = l.histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", sglangE2E, "model_name")
	g.queueTime = l.histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", sglangQueue, "model_name")
	for _, f := range []*family{g.running, g.queued, g.usedTokens, g.tokenUsage, g.cacheHitRate, g.genThroughput, g.utilization,
		g.promptTokens, g.generationTokens, g.cachedTokens, g.requests, g.aborted, g.retracted, g.paused,
		g.retractedTotal, g.retractedInput, g.retractedOutput} {
		f.with(opts.Start, g.sched...)
	}
	set(g.maxTotal, g.maxTotalTokens)
	for _, f := range []*family{g.ttft, g.itl, g.e2e, g.queueTime} {
		f.with(opts.Start, g.tok...)
	}
	g.httpActive.with(opts.Start, "/generate", "POST")
	return g
}

func (g *sglang) families() []*family { return g.list.list }

func (g *sglang) exposition() exposition {
	return exposition{style: stylePythonMultiprocess, format: formatPython}
}

func (g *sglang) record(s *step) {
	at := g.start
	set := func(f *family, v float64) { f.with(at, g.sched...).value = v }
	add := func(f *family, v float64) { f.with(at, g.sched...).value += v }
	set(g.running, s.state.running)
	set(g.queued, s.state.waiting)
	set(g.tokenUsage, float64(int(s.state.kv*100))/100)
	set(g.usedTokens, float64(int(s.state.kv*g.maxTotalTokens)))
	set(g.cacheHitRate, s.state.prefixHit)
	set(g.utilization, clamp(s.state.running/64, 0, 1))
	// Retraction is SGLang's preemption: retracted requests show as a gauge.
	if g.specOn {
		// 3 draft tokens per step: accept length = 1 + 3 * accept rate.
		set(g.specAcceptRate, float64(int(s.cond.specAccept*1000))/1000)
		set(g.specAcceptLength, 1+3*float64(int(s.cond.specAccept*1000))/1000)
	}
	set(g.retracted, float64(s.preemptions))
	set(g.grammarQueue, math.Round(s.cond.grammarQueue*(1+0.05*g.m.rng.NormFloat64())))
	if g.prefill {
		// Requests wait for the handshake, then for their KV to be sent.
		set(g.prefillBootstrap, math.Round(s.cond.rate*s.cond.bootstrapMs/1000*(1+0.05*g.m.rng.NormFloat64())))
		set(g.prefillInflight, math.Round(s.cond.rate*0.05))
	} else if g.pd {
		// A request waits for its KV about as long as its prefill takes
		// (Little's law), unless the scenario says otherwise.
		transfer := s.cond.pdTransfer
		if transfer == 0 {
			transfer = s.cond.rate * s.cond.ttft
		}
		set(g.decodePrealloc, math.Round(s.cond.pdPrealloc*(1+0.05*g.m.rng.NormFloat64())))
		set(g.decodeTransfer, math.Round(transfer*(1+0.05*g.m.rng.NormFloat64())))
	}
	add(g.retractedTotal, float64(s.preemptions))
	// A retracted request gives back its prompt and the tokens generated
	// so far; the simulator charges a mean-sized request for each.
	add(g.retractedInput, float64(s.preemptions)*s.cond.promptMean)
	add(g.retractedOutput, float64(s.preemptions)*s.cond.genMean/2)
	if s.cond.itl > 0 {
		set(g.genThroughput, s.state.running/s.cond.itl)
	}
	g.httpActive.with(at, "/generate", "POST").value = s.state.running + s.state.waiting
	for range s.arrivals {
		// One request in five to the completions route, as the model's
		// finished requests.
		ep := "/v1/chat/completions"
		if g.arrived%5 == 4 {
			ep = "/v1/completions"
		}
		g.arrived++
		g.httpRequests.with(s.now, ep, "POST").value++
	}
	// A hung scheduler is inside a step, not idle; otherwise it idles
	// while it has nothing running or queued, or, stuck, whatever its
	// queue holds.
	if s.cond.schedStuck || !s.cond.hung && s.state.running == 0 && s.state.waiting == 0 {
		add(g.schedulerIdle, s.dt)
	}
	for _, r := range s.finished {
		code := "200"
		switch {
		case r.status == "4xx":
			code = "400"
		case r.status == "5xx" && r.rejected:
			code = "503"
		case r.status == "5xx":
			code = "500"
		}
		g.httpResponses.with(s.now, r.handler, "POST", code).value++
		if r.rejected {
			continue
		}
		add(g.requests, 1)
		if g.prefill {
			g.bootstrapMs.observe(g.bootstrapMs.with(at, g.sched...), g.m.lognormal(s.cond.bootstrapMs, 0.5), 1)
			if g.m.rng.Float64() < s.cond.retryFrac {
				g.prefillRetries.with(at, g.sched...).value++
			}
		}
		for _, m := range []struct {
			mode string
			n    float64
		}{{"prefill_compute", r.prompt - r.cached}, {"prefill_cache", r.cached}, {"decode", r.gen}} {
			if m.n > 0 {
				g.realtimeTokens.with(s.now, append(append([]string(nil), g.sched...), m.mode)...).value += m.n
			}
		}
		if g.pd && g.m.rng.Float64() < s.cond.xferFail {
			add(g.transferFailed, 1)
		}
		add(g.promptTokens, r.prompt)
		add(g.generationTokens, r.gen)
		add(g.cachedTokens, r.cached)
		if r.reason == "abort" || r.reason == "error" {
			add(g.aborted, 1)
		}
		obs := func(f *family, x float64) { f.observe(f.with(at, g.tok...), x, 1) }
		obs(g.ttft, r.ttft)
		obs(g.e2e, r.e2e)
		obs(g.queueTime, r.queue)
		spread(g.m, g.itl, g.itl.with(at, g.tok...), r.itl, r.gen-1)
		for _, st := range []struct {
			stage string
			v     float64
		}{{"prefill_waiting", r.queue}, {"prefill_forward", r.prefill}, {"decode_forward", r.decode}} {
			g.perStage.observe(g.perStage.with(s.now, append(append([]string(nil), g.sched...), st.stage)...), st.v, 1)
		}
	}
}
