package simulator

import (
	"slices"
)

// conditions is what a simulated server experiences at one moment of a
// scenario. Gauges are targets that the server state follows with a short
// lag; rates are per simulated second; latencies are medians in seconds.
type conditions struct {
	rate         float64 // request arrivals per second
	finishRate   float64 // requests finishing per second; 0 means rate
	running      float64 // requests in the running batch
	waiting      float64 // requests queued
	kv           float64 // GPU KV-cache usage, 0..1
	cpuKV        float64 // V0 CPU swap-space usage, 0..1
	swapped      float64 // V0 requests swapped to CPU
	preemptRate  float64 // preemptions per second
	ttft         float64 // time to first token
	ttftSigma    float64 // spread of TTFT (log-space sigma); 0 means 0.45
	itl          float64 // inter-token latency
	abortFrac    float64 // finished requests aborted (client gone, cancelled)
	errorFrac    float64 // finished requests failed in the engine
	http5xx      float64 // HTTP responses answered 5xx
	prefixHit    float64 // prefix-cache hit ratio, in tokens
	promptMean   float64 // prompt tokens per request
	genMean      float64 // generated tokens per request
	down         bool    // the endpoint answers 503
	specAccept   float64 // speculative decoding: share of draft tokens accepted (with Options.SpecDecode)
	xferFail     float64 // P/D: share of KV transfers that fail (with Options.KVConnector)
	asleep       bool    // vLLM sleep mode (POST /sleep?level=1): the engine processes nothing
	hung         bool    // the engine hangs but the server stays alive: requests arrive, none is scheduled or finished
	deferred     float64 // vLLM: waiting requests held back by the scheduler (LoRA budget, async KV load), not by capacity
	extHit       float64 // vLLM with Options.KVConnector: share of the tokens queried from the connector's cache it finds
	nanFrac      float64 // vLLM with Options.NaNCheck: share of finished requests with NaN logits
	bootstrapMs  float64 // SGLang P/D prefill worker: median KV bootstrap handshake, ms
	retryFrac    float64 // SGLang P/D prefill worker: share of requests whose optimistic prefill is retried
	schedStuck   bool    // SGLang: the scheduler idles while its queue holds requests
	grammarQueue float64 // SGLang: structured-output requests waiting for their grammar to compile
	pdPrealloc   float64 // SGLang P/D decode worker: requests waiting for KV memory to be reserved (with Options.KVConnector)
	pdTransfer   float64 // SGLang P/D decode worker: requests waiting for their KV from prefill; 0 means rate × TTFT

	// dcgm: faults of one GPU (dcgmAffected); the others stay healthy.
	gpuIdle      bool    // every GPU under 5% busy while the model stays loaded
	gpuHeat      float64 // °C above the temperature the load gives
	throttle     float64 // share of time the clocks are reduced for heat
	fbFull       float64 // framebuffer in use, 0..1 (0: the 90% vLLM reserves)
	xid          int     // XID the GPU reports (0: none)
	remapRows    float64 // rows remapped after uncorrectable errors, per second
	remapFailure bool    // the GPU has run out of spare rows
	pcieReplays  float64 // PCIe replays per second
	dbeRate      float64 // double-bit ECC errors per second (with Options.DCGMOptIn)
	xidRate      float64 // XID events per second of code xid after the first (with Options.DCGMOptIn: DCGM_EXP_XID_ERRORS_COUNT)
	nvlinkReplay float64 // NVLink replay errors per second; recoveries and CRC errors follow (with Options.DCGMOptIn)
	noPods       bool    // inference gateway: no pod of the pool has fresh metrics
	noPrefill    bool    // inference gateway with P/D: the prefill pool is gone, every request decode-only
	stalePod     bool    // inference gateway (llm-d): the picker cannot read one pod's metrics endpoint
}

// feature is an optional server feature a scenario needs to show.
type feature string

const (
	featureSpecDecode  feature = "spec-decode"  // Options.SpecDecode
	featureKVConnector feature = "kv-connector" // Options.KVConnector
	featureDCGMOptIn   feature = "dcgm-opt-in"  // Options.DCGMOptIn
	featureNaNCheck    feature = "nan-check"    // Options.NaNCheck
	featureFlowControl feature = "flow-control" // Options.FlowControl
	// featurePrefillWorker is Options.KVConnector with Options.PrefillWorker.
	featurePrefillWorker feature = "kv-connector and prefill-worker"
)

// baseline is a healthy server under moderate load. The numbers hang
// together: running ≈ rate × e2e latency (Little's law).
func baseline() conditions {
	return conditions{
		rate:        4,
		running:     22,
		kv:          0.35,
		ttft:        0.18,
		itl:         0.025,
		abortFrac:   0.01,
		errorFrac:   0.001,
		http5xx:     0.002,
		prefixHit:   0.4,
		extHit:      0.3,
		bootstrapMs: 20,
		retryFrac:   0.002,
		promptMean:  600,
		genMean:     220,
		specAccept:  0.7,
	}
}

// Scenario describes one scenario for listings and errors.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// scenario is a timeline: at(t) gives the conditions t simulated seconds
// after the scenario was selected. Conditions change, then hold.
type scenario struct {
	Scenario
	only []Server // servers that support it; nil means every inference server (not dcgm)
	at   func(t float64) conditions
	// needs is the option the scenario's metrics exist only with.
	needs feature
}

// lerp moves from a to b between t0 and t1 (seconds) and holds after.
func lerp(t, t0, t1, a, b float64) float64 {
	switch {
	case t <= t0:
		return a
	case t >= t1:
		return b
	}
	return a + (b-a)*(t-t0)/(t1-t0)
}

// onsetStart and onsetEnd bound the change in most scenarios: a short
// healthy lead-in, then the condition builds up over a minute and a half.
const (
	onsetStart = 30.0
	onsetEnd   = 120.0
)

func scenarios() []scenario {
	all := Servers()
	dcgm := []Server{ServerDCGM}
	return []scenario{
		{Scenario{"steady", "Healthy server under moderate load."}, all,
			func(float64) conditions { return baseline() }, ""},
		{Scenario{"ramp", "Load rises from 2 to 16 requests/s over ten minutes; cache, queue and TTFT follow."}, all,
			func(t float64) conditions {
				c := baseline()
				c.rate = lerp(t, 0, 600, 2, 16)
				c.ttft = 0.15 + max(0, c.rate-10)*0.3
				c.kv = min(0.92, 0.1+0.05*c.rate)
				c.waiting = max(0, c.rate-12) * 5
				c.running = c.rate * (c.ttft + c.genMean*c.itl)
				return c
			}, ""},
		{Scenario{"kv-saturation", "KV cache fills up to 99%: requests queue, TTFT rises, some preemptions."}, nil,
			func(t float64) conditions {
				c := baseline()
				c.rate = lerp(t, onsetStart, onsetEnd, 4, 9)
				c.kv = lerp(t, onsetStart, onsetEnd, 0.35, 0.99)
				c.running = lerp(t, onsetStart, onsetEnd, 22, 60)
				c.waiting = lerp(t, onsetStart, onsetEnd, 0, 35)
				c.ttft = lerp(t, onsetStart, onsetEnd, 0.18, 1.5)
				c.preemptRate = lerp(t, onsetStart, onsetEnd, 0, 0.5)
				c.cpuKV = lerp(t, onsetStart, onsetEnd, 0, 0.15)
				c.swapped = lerp(t, onsetStart, onsetEnd, 0, 3)
				return c
			}, ""},
		{Scenario{"preemption-storm", "Cache full and the scheduler preempts several requests a second."}, nil,
			func(t float64) conditions {
				c := baseline()
				c.rate = lerp(t, onsetStart, 90, 4, 7)
				c.kv = lerp(t, onsetStart, 90, 0.35, 0.97)
				c.running = lerp(t, onsetStart, 90, 22, 45)
				c.waiting = lerp(t, onsetStart, 90, 0, 25)
				c.preemptRate = lerp(t, onsetStart, 90, 0, 4)
				c.ttft = lerp(t, onsetStart, 90, 0.18, 2)
				c.itl = lerp(t, onsetStart, 90, 0.025, 0.06)
				return c
			}, ""},
		{Scenario{"swap", "V0 only: the GPU cache is full and requests are swapped to CPU; CPU cache usage rises."}, []Server{ServerVLLMV0},
			func(t float64) conditions {
				c := baseline()
				c.rate = lerp(t, onsetStart, 150, 4, 7)
				c.kv = lerp(t, onsetStart, 90, 0.35, 0.97)
				c.cpuKV = lerp(t, onsetStart, 150, 0, 0.8)
				c.swapped = lerp(t, onsetStart, 150, 0, 24)
				c.running = lerp(t, onsetStart, 90, 22, 40)
				c.waiting = lerp(t, onsetStart, 150, 0, 20)
				c.preemptRate = lerp(t, onsetStart, 90, 0, 2)
				c.ttft = lerp(t, onsetStart, 150, 0.18, 1.5)
				return c
			}, ""},
		{Scenario{"ttft-spike", "Time to first token jumps to about 8 s median (p99 well above 10 s) while requests queue."}, nil,
			func(t float64) conditions {
				c := baseline()
				c.ttft = lerp(t, onsetStart, 60, 0.18, 8)
				c.waiting = lerp(t, onsetStart, 60, 0, 30)
				c.kv = lerp(t, onsetStart, 60, 0.35, 0.6)
				return c
			}, ""},
		{Scenario{"error-burst", "A quarter of requests are aborted, one in eight fails, 30% of HTTP responses are 5xx."}, nil,
			func(t float64) conditions {
				c := baseline()
				c.abortFrac = lerp(t, onsetStart, 45, 0.01, 0.25)
				c.errorFrac = lerp(t, onsetStart, 45, 0.001, 0.12)
				c.http5xx = lerp(t, onsetStart, 45, 0.002, 0.3)
				return c
			}, ""},
		{Scenario{"fragmentation", "Cache full while only a few requests run: the queue grows and throughput collapses."}, nil,
			func(t float64) conditions {
				c := baseline()
				c.kv = lerp(t, onsetStart, 90, 0.35, 0.96)
				c.running = lerp(t, onsetStart, 90, 22, 3)
				c.waiting = lerp(t, onsetStart, 90, 0, 25)
				c.finishRate = lerp(t, onsetStart, 90, 4, 0.5)
				c.ttft = lerp(t, onsetStart, 90, 0.18, 3)
				return c
			}, ""},
		{Scenario{"overprovisioned", "Busy server whose KV cache stays nearly empty: memory is wasted."}, nil,
			func(t float64) conditions {
				c := baseline()
				c.rate = lerp(t, onsetStart, 90, 4, 8)
				c.running = lerp(t, onsetStart, 90, 22, 40)
				c.kv = lerp(t, onsetStart, 90, 0.35, 0.06)
				c.promptMean = lerp(t, onsetStart, 90, 600, 150)
				c.genMean = lerp(t, onsetStart, 90, 220, 120)
				return c
			}, ""},
		{Scenario{"idle", "A quiet server: 0.1 requests/s, TTFT median 0.35 s with a long tail (about 1% over 5 s, 5% over 2.5 s), 0.04% errors; within its SLOs, nothing should page. On dcgm: every GPU under 5% busy with the model loaded."}, all,
			func(float64) conditions {
				c := baseline()
				c.gpuIdle = true
				c.rate = 0.1
				c.running = 1
				c.kv = 0.05
				c.ttft = 0.35
				c.ttftSigma = 1.2
				c.http5xx, c.errorFrac = 0.0003, 0.0002 // within a 99.9% objective
				c.promptMean = 4000
				c.genMean = 300
				return c
			}, ""},
		{Scenario{"asleep", "vLLM V1 only: the engine is put to sleep (level 1) while requests keep arriving and queue."}, []Server{ServerVLLM},
			func(t float64) conditions {
				c := baseline()
				c.asleep = t > onsetStart
				if c.asleep {
					c.running, c.kv, c.finishRate = 0, 0, 1e-9
					c.waiting = lerp(t, onsetStart, onsetEnd, 0, 6)
				}
				return c
			}, ""},
		{Scenario{"hung", "vLLM, TGI, SGLang: the engine hangs while the server stays alive (vllm#39863): /health and /metrics answer, requests keep arriving, none finishes, no token is generated, running and waiting read 0. vLLM's HTTP layer counts the requests clients give up on as 2xx."}, []Server{ServerVLLM, ServerTGI, ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart {
					c.hung = true
					c.running, c.waiting, c.kv, c.finishRate = 0, 0, 0, 1e-9
				}
				return c
			}, ""},
		{Scenario{"queue-full", "vLLM V1: arrivals rise to 9 requests/s against a capped queue (--max-num-queued-reqs): 40 wait, KV 0.92, and by 2 min 15% of requests are refused with 503 (vllm:admission_rejections_total)."}, []Server{ServerVLLM},
			func(t float64) conditions {
				c := baseline()
				c.rate = lerp(t, onsetStart, onsetEnd, 4, 9)
				c.http5xx = lerp(t, onsetStart, onsetEnd, c.http5xx, 0.15)
				c.waiting = lerp(t, onsetStart, onsetEnd, 0, 40)
				c.running = lerp(t, onsetStart, onsetEnd, c.running, 48)
				c.kv = lerp(t, onsetStart, onsetEnd, c.kv, 0.92)
				c.ttft = lerp(t, onsetStart, onsetEnd, c.ttft, 3)
				return c
			}, ""},
		{Scenario{"requests-deferred", "vLLM V1: requests pile up deferred by the scheduler (a LoRA budget or async KV loads that never complete, vllm#53130): 30 deferred and 8 running by 2 min while the KV cache is 30% used."}, []Server{ServerVLLM},
			func(t float64) conditions {
				c := baseline()
				c.deferred = lerp(t, onsetStart, onsetEnd, 0, 30)
				c.waiting = c.deferred
				c.running = lerp(t, onsetStart, onsetEnd, c.running, 8)
				c.kv = lerp(t, onsetStart, onsetEnd, c.kv, 0.3)
				c.finishRate = lerp(t, onsetStart, onsetEnd, c.rate, 1.5)
				c.ttft = lerp(t, onsetStart, onsetEnd, c.ttft, 6)
				return c
			}, ""},
		{Scenario{"external-cache-miss", "vLLM with --kv-connector: the KV connector's external prefix cache stops finding anything (hit rate 30% to 0 by 2 min: the cache backend is gone or was wiped), so prompts are recomputed and TTFT rises."}, []Server{ServerVLLM},
			func(t float64) conditions {
				c := baseline()
				c.extHit = lerp(t, onsetStart, onsetEnd, c.extHit, 0)
				c.ttft = lerp(t, onsetStart, onsetEnd, c.ttft, 0.35)
				return c
			}, featureKVConnector},
		{Scenario{"nan-logits", "vLLM with --nan-check (VLLM_COMPUTE_NANS_IN_LOGITS=1): from 30 s 2% of requests have NaN logits (a faulty GPU or kernel); vllm:corrupted_requests_total counts them."}, []Server{ServerVLLM},
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart {
					c.nanFrac = 0.02
				}
				return c
			}, featureNaNCheck},
		{Scenario{"spec-decode-collapse", "Speculative decoding: the acceptance rate falls from 70% to 12% (a draft model that no longer fits the traffic). Needs --spec-decode."}, []Server{ServerVLLM, ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				c.specAccept = lerp(t, onsetStart, onsetEnd, 0.7, 0.12)
				return c
			}, featureSpecDecode},
		{Scenario{"kv-transfer-failures", "P/D disaggregation: 8% of KV-cache transfers to this decode worker fail. Needs --kv-connector."}, []Server{ServerVLLM, ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				c.xferFail = lerp(t, onsetStart, 60, 0, 0.08)
				return c
			}, featureKVConnector},
		{Scenario{"pd-decode-bound", "SGLang P/D decode worker out of KV memory: 30 requests wait in the prealloc queue by 2 min, the pool 93% used by 60 running requests. Needs --kv-connector."}, []Server{ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				c.pdPrealloc = lerp(t, onsetStart, onsetEnd, 0, 30)
				c.kv = lerp(t, onsetStart, onsetEnd, c.kv, 0.93)
				c.running = lerp(t, onsetStart, onsetEnd, c.running, 60)
				c.ttft = lerp(t, onsetStart, onsetEnd, c.ttft, 2.5)
				return c
			}, featureKVConnector},
		{Scenario{"pd-prefill-bound", "SGLang P/D decode worker starved by prefill: 35 requests wait for their KV by 2 min while 12 run. Needs --kv-connector."}, []Server{ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				c.pdTransfer = lerp(t, onsetStart, onsetEnd, 1, 35)
				c.running = lerp(t, onsetStart, onsetEnd, c.running, 12)
				c.ttft = lerp(t, onsetStart, onsetEnd, c.ttft, 4)
				return c
			}, featureKVConnector},
		{Scenario{"prefill-retries", "SGLang P/D prefill worker (--kv-connector --prefill-worker): optimistic prefills are thrown away and retried for 10% of requests by 2 min (sglang:num_prefill_retries_total), as decode workers are slow to bootstrap."}, []Server{ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				c.retryFrac = lerp(t, onsetStart, onsetEnd, c.retryFrac, 0.1)
				c.ttft = lerp(t, onsetStart, onsetEnd, c.ttft, 0.6)
				return c
			}, featurePrefillWorker},
		{Scenario{"kv-bootstrap-slow", "SGLang P/D prefill worker (--kv-connector --prefill-worker): the KV bootstrap handshake with the decode worker slows from about 20 ms to a 1.5 s median by 2 min (sglang:kv_transfer_bootstrap_ms)."}, []Server{ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				c.bootstrapMs = lerp(t, onsetStart, onsetEnd, c.bootstrapMs, 1500)
				c.ttft = lerp(t, onsetStart, onsetEnd, c.ttft, 1.8)
				return c
			}, featurePrefillWorker},
		{Scenario{"scheduler-stuck", "SGLang: from 30 s the scheduler idles (sglang:scheduler_idle_seconds_total grows 1 s/s) while 12 requests sit in its queue; nothing runs or finishes."}, []Server{ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart {
					c.schedStuck = true
					c.running, c.waiting, c.kv, c.finishRate = 0, 12, 0.05, 1e-9
				}
				return c
			}, ""},
		{Scenario{"grammar-backlog", "SGLang only: structured-output requests pile up waiting for grammar compilation (40 in the grammar queue by 2 min)."}, []Server{ServerSGLang},
			func(t float64) conditions {
				c := baseline()
				c.grammarQueue = lerp(t, onsetStart, onsetEnd, 0, 40)
				return c
			}, ""},
		{Scenario{"gpu-overheating", "dcgm: GPU 2 heats up to about 92 °C (a failed fan or blocked airflow); the others stay near 58 °C."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				c.gpuHeat = lerp(t, onsetStart, onsetEnd, 0, 34)
				return c
			}, ""},
		{Scenario{"thermal-throttling", "dcgm: GPU 2 at about 90 °C is clock-throttled for heat 30% of the time (DCGM_FI_DEV_THERMAL_VIOLATION, ns); its SM clock drops. Needs --dcgm-opt-in."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				c.gpuHeat = lerp(t, onsetStart, onsetEnd, 0, 32)
				c.throttle = lerp(t, onsetStart, onsetEnd, 0, 0.3)
				return c
			}, featureDCGMOptIn},
		{Scenario{"memory-pressure", "dcgm: GPU 2's framebuffer fills from 90% to over 99% (a second process, a leak)."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				c.fbFull = lerp(t, onsetStart, onsetEnd, 0.9, 0.995)
				return c
			}, ""},
		{Scenario{"xid-error", "dcgm: GPU 2 reports XID 13 (Graphics Engine Exception, an application fault) after 30 s."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart {
					c.xid = 13
				}
				return c
			}, ""},
		{Scenario{"xid-hardware", "dcgm: GPU 2 reports XID 74 (NVLink Error, hardware) after 30 s."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart {
					c.xid = 74
				}
				return c
			}, ""},
		{Scenario{"row-remap-failure", "dcgm: GPU 2 remaps a memory row a minute after uncorrectable errors from 30 s, then runs out of spare rows at 3 min."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart && t <= 180 {
					c.remapRows = 1.0 / 60
				}
				c.remapFailure = t > 180
				return c
			}, ""},
		{Scenario{"pcie-replays", "dcgm: GPU 2's PCIe link retries about 30 times a minute (a bad riser or slot)."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				c.pcieReplays = lerp(t, onsetStart, onsetEnd, 0, 0.5)
				return c
			}, ""},
		{Scenario{"ecc-double-bit", "dcgm: GPU 2 counts a double-bit (uncorrectable) ECC error every two minutes from 30 s and reports XID 48. Needs --dcgm-opt-in."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart {
					c.dbeRate = 1.0 / 120
					c.xid = 48
				}
				return c
			}, featureDCGMOptIn},
		{Scenario{"nvlink-errors", "dcgm: from 30 s GPU 2's NVLink link replays 12 times a minute, recovers every 2 minutes and counts a few CRC errors a second; DCGM's NVLink health watch fails it. Needs --dcgm-opt-in."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart {
					c.nvlinkReplay = 0.2
				}
				return c
			}, featureDCGMOptIn},
		{Scenario{"xid-storm", "dcgm: from 30 s GPU 2 reports XID 13 (Graphics Engine Exception) every 20 s: an application crash-looping on it. The last-XID gauge stays 13; DCGM_EXP_XID_ERRORS_COUNT counts 15 in its 5-minute window. Needs --dcgm-opt-in."}, dcgm,
			func(t float64) conditions {
				c := baseline()
				if t > onsetStart {
					c.xid = 13
					c.xidRate = 1.0 / 20
				}
				return c
			}, featureDCGMOptIn},
		{Scenario{"no-ready-pods", "Inference gateway: every model server of the pool drops out (no fresh metrics); the endpoint picker fails every request."}, []Server{ServerGateway},
			func(t float64) conditions {
				c := baseline()
				c.noPods = t > onsetStart
				return c
			}, ""},
		{Scenario{"pd-stopped", "Inference gateway with llm-d P/D: the prefill pool disappears and every request is sent decode-only. Needs --kv-connector."}, []Server{ServerGateway},
			func(t float64) conditions {
				c := baseline()
				c.noPrefill = t > onsetStart
				return c
			}, featureKVConnector},
		{Scenario{"stale-pod-metrics", "Inference gateway with --kv-connector (llm-d's scheduler): from 30 s the picker cannot read one pod's /metrics; every poll of it fails (20 a second at the 50 ms refresh) and the pool has one pod with fresh metrics."}, []Server{ServerGateway},
			func(t float64) conditions {
				c := baseline()
				c.stalePod = t > onsetStart
				return c
			}, featureKVConnector},
		{Scenario{"down", "The endpoint stops answering: every request gets 503."}, all,
			func(float64) conditions {
				c := baseline()
				c.down = true
				return c
			}, ""},
	}
}

// scenariosFor lists the scenarios a server supports, in a stable order.
func scenariosFor(s Server) []scenario {
	var out []scenario
	for _, sc := range scenarios() {
		only := sc.only
		if only == nil {
			only = inferenceServers
		}
		if slices.Contains(only, s) {
			out = append(out, sc)
		}
	}
	return out
}

// Scenarios lists the scenarios the given server supports.
func Scenarios(s Server) []Scenario {
	var out []Scenario
	for _, sc := range scenariosFor(s) {
		out = append(out, sc.Scenario)
	}
	return out
}
