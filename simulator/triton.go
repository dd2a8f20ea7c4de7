package simulator

import "time"

// triton exposes Triton Inference Server's metrics (prometheus-cpp): no
// _total suffix, per-model labels model and version, GPU metrics by
// gpu_uuid, microsecond duration counters. The TTFT histogram
// nv_inference_first_response_histogram_ms needs
// --metrics-config histogram_latencies=true; the simulated server runs with
// it on. The model is served by the TensorRT-LLM backend, which adds the
// nv_trt_llm_* gauges (catalog: backend_metrics, medium confidence).
type triton struct {
	m     *model
	start time.Time
	list  familyList
	mv    []string // model, version
	gpu   []string // gpu_uuid

	success, failure, count, execCount, reqDur, queueDur, inDur, inferDur, outDur *family
	pending, firstResponse                                                        *family
	gpuUtil, gpuMemUsed, gpuPower, energy, cpuUtil, pinnedUsed                    *family
	trtRequests, trtKVBlocks, trtGeneral                                          *family
}

// trtMaxBlocks and trtMaxSequences size the simulated TensorRT-LLM engine.
const (
	trtMaxBlocks    = 11264
	trtMaxSequences = 256
)

func newTriton(opts Options, m *model) *triton {
	t := &triton{m: m, start: opts.Start, mv: []string{opts.Model, "1"}, gpu: []string{"GPU-5ac2b6a4-2f3c-7e1d-9b0a-3c4d5e6f7a8b"}}
	l := &t.list
	mv := []string{"model", "version"}
	t.success = l.counter("nv_inference_request_success", "Number of successful inference requests, all batch sizes", mv...)
	t.failure = l.counter("nv_inference_request_failure", "Number of failed inference requests, all batch sizes", "model", "reason", "version")
	t.count = l.counter("nv_inference_count", "Number of inferences performed (does not include cached requests)", mv...)
	t.execCount = l.counter("nv_inference_exec_count", "Number of model executions performed (does not include cached requests)", mv...)
	t.reqDur = l.counter("nv_inference_request_duration_us", "Cumulative inference request duration in microseconds (includes cached requests)", mv...)
	t.queueDur = l.counter("nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds (includes cached requests)", mv...)
	t.inDur = l.counter("nv_inference_compute_input_duration_us", "Cumulative compute input duration in microseconds (does not include cached requests)", mv...)
	t.inferDur = l.counter("nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds (does not include cached requests)", mv...)
	t.outDur = l.counter("nv_inference_compute_output_duration_us", "Cumulative inference compute output duration in microseconds (does not include cached requests)", mv...)
	t.pending = l.gauge("nv_inference_pending_request_count", "Instantaneous number of pending requests awaiting execution per-model.", mv...)
	t.firstResponse = l.histogram("nv_inference_first_response_histogram_ms", "Duration from request to first response in milliseconds", tritonFirstMS, mv...)
	load := l.gauge("nv_model_load_duration_secs", "Model load time in seconds", mv...)
	pinnedTotal := l.gauge("nv_pinned_memory_pool_total_bytes", "Pinned memory pool total memory size, in bytes")
	t.pinnedUsed = l.gauge("nv_pinned_memory_pool_used_bytes", "Pinned memory pool used memory size, in bytes")
	t.gpuUtil = l.gauge("nv_gpu_utilization", "GPU utilization rate [0.0 - 1.0)", "gpu_uuid")
	gpuMemTotal := l.gauge("nv_gpu_memory_total_bytes", "GPU total memory, in bytes", "gpu_uuid")
	t.gpuMemUsed = l.gauge("nv_gpu_memory_used_bytes", "GPU used memory, in bytes", "gpu_uuid")
	t.gpuPower = l.gauge("nv_gpu_power_usage", "GPU power usage in watts", "gpu_uuid")
	powerLimit := l.gauge("nv_gpu_power_limit", "GPU power management limit in watts", "gpu_uuid")
	t.energy = l.counter("nv_energy_consumption", "GPU energy consumption in joules since the Triton Server started", "gpu_uuid")
	t.cpuUtil = l.gauge("nv_cpu_utilization", "CPU utilization rate [0.0 - 1.0]")
	cpuTotal := l.gauge("nv_cpu_memory_total_bytes", "CPU total memory (RAM), in bytes")
	cpuUsed := l.gauge("nv_cpu_memory_used_bytes", "CPU used memory (RAM), in bytes")
	t.trtRequests = l.gauge("nv_trt_llm_request_metrics", "TRT LLM request metrics", "model", "request_type", "version")
	t.trtKVBlocks = l.gauge("nv_trt_llm_kv_cache_block_metrics", "TRT LLM KV cache block metrics", "kv_cache_block_type", "model", "version")
	runtimeMem := l.gauge("nv_trt_llm_runtime_memory_metrics", "TRT LLM runtime memory metrics", "memory_type", "model", "version")
	t.trtGeneral = l.gauge("nv_trt_llm_general_metrics", "General TRT LLM metrics", "general_type", "model", "version")

	at := opts.Start
	for _, f := range []*family{t.success, t.count, t.execCount, t.reqDur, t.queueDur, t.inDur, t.inferDur, t.outDur, t.pending, t.firstResponse} {
		f.with(at, t.mv...)
	}
	for _, r := range []string{"REJECTED", "CANCELED", "BACKEND", "OTHER"} {
		t.failure.with(at, opts.Model, r, "1")
	}
	load.with(at, t.mv...).value = 38.2
	pinnedTotal.with(at).value = 268435456
	t.pinnedUsed.with(at)
	gpuMemTotal.with(at, t.gpu...).value = 85899345920
	powerLimit.with(at, t.gpu...).value = 700
	t.energy.with(at, t.gpu...)
	cpuTotal.with(at).value = 270582939648
	cpuUsed.with(at).value = 31138512896
	for typ, v := range map[string]float64{"cpu": 0, "gpu": 2.68435456e9, "pinned": 0} {
		runtimeMem.with(at, typ, opts.Model, "1").value = v
	}
	t.record(&step{now: at, state: state{}})
	return t
}

func (t *triton) families() []*family { return t.list.list }

func (t *triton) exposition() exposition { return exposition{style: styleCpp, format: formatCpp} }

func (t *triton) record(s *step) {
	at := t.start
	t.pending.with(at, t.mv...).value = s.state.waiting
	t.gpuUtil.with(at, t.gpu...).value = clamp(0.05+s.state.running/30, 0, 0.99)
	t.gpuMemUsed.with(at, t.gpu...).value = 85899345920 * (0.55 + 0.4*s.state.kv)
	power := 90 + 500*clamp(s.state.running/30, 0, 1)
	t.gpuPower.with(at, t.gpu...).value = power
	t.energy.with(at, t.gpu...).value += power * s.dt
	t.cpuUtil.with(at).value = clamp(0.02+s.state.running/400, 0, 1)
	t.pinnedUsed.with(at).value = 0
	m, v := t.mv[0], t.mv[1]
	t.trtRequests.with(at, m, "active", v).value = s.state.running + s.state.waiting
	t.trtRequests.with(at, m, "max", v).value = trtMaxSequences
	t.trtRequests.with(at, m, "scheduled", v).value = s.state.running
	t.trtRequests.with(at, m, "context", v).value = float64(min(len(s.finished), int(s.state.running)))
	t.trtRequests.with(at, m, "waiting", v).value = s.state.waiting
	used := float64(int(s.state.kv * trtMaxBlocks))
	t.trtKVBlocks.with(at, "max", m, v).value = trtMaxBlocks
	t.trtKVBlocks.with(at, "used", m, v).value = used
	t.trtKVBlocks.with(at, "free", m, v).value = trtMaxBlocks - used
	t.trtKVBlocks.with(at, "tokens_per", m, v).value = 64
	t.trtKVBlocks.with(at, "fraction", m, v).value = used / trtMaxBlocks
	t.trtGeneral.with(at, "iteration_counter", m, v).value += s.iterations
	t.trtGeneral.with(at, "timestamp", m, v).value = float64(s.now.UnixMicro())
	for _, r := range s.finished {
		switch {
		case r.rejected:
			t.failure.with(at, t.mv[0], "REJECTED", "1").value++
			continue
		case r.reason == "error":
			t.failure.with(at, t.mv[0], "BACKEND", "1").value++
			continue
		case r.reason == "abort":
			t.failure.with(at, t.mv[0], "CANCELED", "1").value++
			continue
		}
		t.success.with(at, t.mv...).value++
		t.count.with(at, t.mv...).value++
		t.execCount.with(at, t.mv...).value++
		t.reqDur.with(at, t.mv...).value += float64(int(r.e2e * 1e6))
		t.queueDur.with(at, t.mv...).value += float64(int(r.queue * 1e6))
		t.inDur.with(at, t.mv...).value += 120
		t.inferDur.with(at, t.mv...).value += float64(int((r.prefill + r.decode) * 1e6))
		t.outDur.with(at, t.mv...).value += 85
		t.firstResponse.observe(t.firstResponse.with(at, t.mv...), r.ttft*1000, 1)
	}
}
