package simulator

import (
	"math"
	"strconv"
	"time"

	"github.com/pagedhq/paged/rules/catalog"
)

// gateway exposes the endpoint picker (EPP) of an inference gateway: the
// Gateway API Inference Extension's EPP (pkg/epp/metrics/metrics.go,
// v0.3 to v1.5) in front of a pool of model servers, and, with
// Options.KVConnector, the P/D decision counters of llm-d's scheduler
// built on it (llm-d-inference-scheduler pkg/metrics/metrics.go). Go's
// client_golang writes the text format: counters end in _total as named,
// labels sorted with le last, buckets then _sum then _count, no _created.
//
// Both generations of the per-model families are declared
// (inference_model_* until 1.0, inference_objective_* from 1.1, PR #1567);
// New keeps the ones the release exposes, the newest without a Version.
type gateway struct {
	m     *model
	start time.Time
	list  familyList
	opts  Options
	pool  string
	pods  []string

	reqTotal, reqErr, reqDur, ntpot, inTok, outTok, running         *family
	oldTotal, oldErr, oldDur, oldNTPOT, oldInTok, oldOutTok, oldRun *family
	poolKV, poolQueue, poolRunning, poolReady, perPodQueue          *family
	schedE2E, schedAttempts, info                                   *family
	pdDecision, disaggDecision                                      *family
	flowSaturation, pollErrors, extractErrors                       *family
}

// gatewayPods is the size of the simulated InferencePool.
const gatewayPods = 2

// gatewayPDThreshold is the prompt length (tokens) from which llm-d's
// profile handler splits a request into prefill and decode.
const gatewayPDThreshold = 256

// Bucket layouts of pkg/epp/metrics/metrics.go.
var (
	gaieLatency = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6,
		8, 10, 15, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}
	gaieNTPOT     = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0}
	gaieInTokens  = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32778, 65536, 131072, 262144, 524288, 1048576}
	gaieOutTokens = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
	gaieScheduler = []float64{0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1}
)

func newGateway(opts Options, m *model) *gateway {
	g := &gateway{m: m, start: opts.Start, opts: opts, pool: "vllm-llama3-8b-instruct"}
	for i := range gatewayPods {
		g.pods = append(g.pods, g.pool+"-"+strconv.Itoa(i))
	}
	l := &g.list
	mt := []string{"model_name", "target_model_name"}
	total := mt
	if opts.Version == "" || releaseAtLeast(opts.Version, "1.5") {
		total = []string{"model_name", "priority", "target_model_name"} // PR from v1.5: priority
	}
	errLabels := []string{"error_code", "model_name", "target_model_name"}
	g.reqTotal = l.counter("inference_objective_request_total", "[ALPHA] Counter of inference objective requests broken out for each model and target model.", total...)
	g.reqErr = l.counter("inference_objective_request_error_total", "[ALPHA] Counter of inference objective requests errors broken out for each model and target model.", errLabels...)
	g.reqDur = l.histogram("inference_objective_request_duration_seconds", "[ALPHA] Inference objective response latency distribution in seconds for each model and target model.", gaieLatency, mt...)
	g.ntpot = l.histogram("inference_objective_normalized_time_per_output_token_seconds", "[ALPHA] Inference objective latency divided by number of output tokens in seconds for each model and target model.", gaieNTPOT, mt...)
	g.inTok = l.histogram("inference_objective_input_tokens", "[ALPHA] Inference objective input token count distribution for requests in each model.", gaieInTokens, mt...)
	g.outTok = l.histogram("inference_objective_output_tokens", "[ALPHA] Inference objective output token count distribution for requests in each model.", gaieOutTokens, mt...)
	g.running = l.gauge("inference_objective_running_requests", "[ALPHA] Inference objective number of running requests in each model.", "model_name")
	g.oldTotal = l.counter("inference_model_request_total", "[ALPHA] Counter of inference model requests broken out for each model and target model.", mt...)
	g.oldErr = l.counter("inference_model_request_error_total", "[ALPHA] Counter of inference model requests errors broken out for each model and target model.", errLabels...)
	g.oldDur = l.histogram("inference_model_request_duration_seconds", "[ALPHA] Inference model response latency distribution in seconds for each model and target model.", gaieLatency, mt...)
	g.oldNTPOT = l.histogram("inference_model_normalized_time_per_output_token_seconds", "[ALPHA] Inference model latency divided by number of output tokens in seconds for each model and target model.", gaieNTPOT, mt...)
	g.oldInTok = l.histogram("inference_model_input_tokens", "[ALPHA] Inference model input token count distribution for requests in each model.", gaieInTokens, mt...)
	g.oldOutTok = l.histogram("inference_model_output_tokens", "[ALPHA] Inference model output token count distribution for requests in each model.", gaieOutTokens, mt...)
	g.oldRun = l.gauge("inference_model_running_requests", "[ALPHA] Inference model number of running requests in each model.", "model_name")
	g.poolKV = l.gauge("inference_pool_average_kv_cache_utilization", "[ALPHA] The average kv cache utilization for an inference server pool.", "name")
	g.poolQueue = l.gauge("inference_pool_average_queue_size", "[ALPHA] The average number of requests pending in the model server queue.", "name")
	g.poolRunning = l.gauge("inference_pool_average_running_requests", "[ALPHA] The average number of running requests across model servers in the pool.", "name")
	g.poolReady = l.gauge("inference_pool_ready_pods", "[ALPHA] The number of ready pods in the inference server pool.", "name")
	g.perPodQueue = l.gauge("inference_pool_per_pod_queue_size", "[ALPHA] The total number of requests pending in the model server queue for each underlying pod.", "model_server_pod", "name")
	g.info = l.gauge("inference_extension_info", "[ALPHA] General information of the current build of Inference Extension.", "build_ref", "commit")
	g.schedE2E = l.histogram("inference_extension_scheduler_e2e_duration_seconds", "[ALPHA] End-to-end scheduling latency distribution in seconds.", gaieScheduler)
	attempts := []string{"status"}
	if opts.Version == "" || releaseAtLeast(opts.Version, "1.5") {
		attempts = []string{"namespace", "pod_name", "port", "status", "target_model_name"} // PR #2545
	}
	g.schedAttempts = l.counter("inference_extension_scheduler_attempts_total", "[ALPHA] Total number of scheduling attempts.", attempts...)
	if opts.KVConnector {
		// llm-d's scheduler: the pd-profile-handler records
		// pd_decision_total (v0.4.0, on GAIE 1.2: decision_type only;
		// model_name from v0.5.0), the disagg profile handler that replaces
		// it from v0.7.0 (on GAIE 1.4) disagg_decision_total. A scheduler
		// runs one of them; this one runs the newest its release has.
		if opts.Version != "" && !releaseAtLeast(opts.Version, "1.4") {
			pd := []string{"decision_type", "model_name"}
			if opts.Version == "1.2" {
				pd = []string{"decision_type"}
			}
			g.pdDecision = l.counter("llm_d_inference_scheduler_pd_decision_total", "[ALPHA] Total number of P/D disaggregation decisions made", pd...)
		} else {
			g.disaggDecision = l.counter("llm_d_inference_scheduler_disagg_decision_total", "[ALPHA] Total number of disaggregation routing decisions made", "decision_type", "model_name")
		}
	}
	if opts.FlowControl {
		// The flow controller records the pool's saturation on every
		// dispatch cycle (pkg/epp/flowcontrol/controller/internal/
		// processor.go); v1.5.0 and later.
		g.flowSaturation = l.gauge("inference_extension_flow_control_pool_saturation", "[ALPHA] Current saturation level of the inference pool (0.0 = empty, 1.0 = fully saturated).", "inference_pool")
	}
	if opts.KVConnector {
		// llm-d's data layer polls every pod's endpoints and counts the
		// failures by plugin type (pkg/epp/datalayer/collector.go,
		// 6f468e24). Labelled: no series before the first error.
		g.pollErrors = l.counter("llm_d_inference_scheduler_datalayer_poll_errors_total", "[ALPHA] Data-source poll errors per source type.", "source_type")
		g.extractErrors = l.counter("llm_d_inference_scheduler_datalayer_extract_errors_total", "[ALPHA] Extract errors per source/extractor type.", "extractor_type", "source_type")
	}
	g.info.with(opts.Start, "v1.5.0", "df9f8909").value = 1
	return g
}

// releaseAtLeast compares dotted release numbers.
func releaseAtLeast(rel, min string) bool { return catalog.CompareReleases(rel, min) >= 0 }

func (g *gateway) families() []*family { return g.list.list }

func (g *gateway) exposition() exposition { return exposition{style: styleGo, format: formatGo} }

func (g *gateway) record(s *step) {
	at := g.start
	model := g.opts.Model
	ready := float64(gatewayPods)
	switch {
	case s.cond.noPods:
		ready = 0
	case s.cond.stalePod:
		// The pod whose metrics cannot be read is not fresh.
		ready--
	}
	if s.cond.stalePod && g.pollErrors != nil {
		// Every 50 ms refresh of that pod fails (defaultRefreshInterval,
		// pkg/epp/datalayer/runtime.go).
		g.pollErrors.with(s.now, "metrics-data-source").value += s.dt / 0.05
	}
	g.poolReady.with(at, g.pool).value = ready
	if ready > 0 {
		// The EPP leaves the averages as they were while no pod is ready.
		g.poolKV.with(at, g.pool).value = s.state.kv
		g.poolQueue.with(at, g.pool).value = s.state.waiting / ready
		g.poolRunning.with(at, g.pool).value = s.state.running / ready
		if g.flowSaturation != nil {
			// The utilization detector's roofline per pod, averaged:
			// max(queue / 5, KV / 0.8) with the default thresholds
			// (saturationdetector/utilization/config.go).
			g.flowSaturation.with(at, g.pool).value = math.Max(s.state.waiting/ready/5, s.state.kv/0.8)
		}
		for i, p := range g.pods {
			q := s.state.waiting / ready
			if i == 0 {
				q = float64(int(q + 0.5))
			} else {
				q = max(0, s.state.waiting-float64(int(s.state.waiting/ready+0.5)))
			}
			g.perPodQueue.with(at, p, g.pool).value = q
		}
	}
	running := s.state.running
	if ready == 0 {
		running = 0
	}
	g.running.with(at, model).value = running
	g.oldRun.with(at, model).value = running
	for i, r := range s.finished {
		code := ""
		switch {
		case ready == 0:
			code = "ServiceUnavailable"
		case r.status == "4xx" && r.rejected:
			code = "BadRequest"
		case r.rejected:
			// Shed before scheduling: no pod passed the saturation filter.
			code = "ServiceUnavailable"
		case r.status == "5xx" || r.reason == "error":
			code = "ModelServerError"
		}
		// The EPP counts a request once it is scheduled
		// (pkg/epp/handlers/server.go); one refused before is in the
		// error counter only.
		scheduled := code == "" || code == "ModelServerError"
		if code != "BadRequest" {
			g.schedE2E.observe(g.schedE2E.with(at), g.m.lognormal(0.0008, 0.4), 1)
			g.attempt(s.now, scheduled, i)
		}
		if !scheduled {
			target := model // resolved before scheduling; a request that does not parse has none
			if code == "BadRequest" {
				target = ""
			}
			g.reqErr.with(s.now, code, model, target).value++
			g.oldErr.with(s.now, code, model, target).value++
			continue
		}
		for _, f := range []*family{g.reqTotal, g.oldTotal} {
			if len(f.labels) == 3 {
				f.with(at, model, "0", model).value++
			} else {
				f.with(at, model, model).value++
			}
		}
		if code != "" {
			g.reqErr.with(s.now, code, model, model).value++
			g.oldErr.with(s.now, code, model, model).value++
		}
		if ready > 0 {
			g.decide(s, r)
		}
		for _, f := range []*family{g.reqDur, g.oldDur} {
			f.observe(f.with(at, model, model), r.e2e, 1)
		}
		for _, f := range []*family{g.ntpot, g.oldNTPOT} {
			f.observe(f.with(at, model, model), r.e2e/max(1, r.gen), 1)
		}
		for _, f := range []*family{g.inTok, g.oldInTok} {
			f.observe(f.with(at, model, model), r.prompt, 1)
		}
		for _, f := range []*family{g.outTok, g.oldOutTok} {
			f.observe(f.with(at, model, model), r.gen, 1)
		}
	}
}

// attempt counts one scheduling attempt (RecordSchedulerAttempt): from
// v1.5 success names the chosen pod, failure leaves the endpoint labels
// empty; both carry the target model.
func (g *gateway) attempt(now time.Time, ok bool, i int) {
	f := g.schedAttempts
	status := "failure"
	if ok {
		status = "success"
	}
	if len(f.labels) == 1 {
		f.with(now, status).value++
		return
	}
	if !ok {
		f.with(now, "", "", "", status, g.opts.Model).value++
		return
	}
	f.with(now, "llm", g.pods[i%len(g.pods)], "8000", status, g.opts.Model).value++
}

// decide counts llm-d's disaggregation decision for a request: prompts
// from gatewayPDThreshold tokens go to a prefill worker first, unless the
// scenario has taken the prefill pool away. model_name is the request's
// target model.
func (g *gateway) decide(s *step, r request) {
	d := "decode-only"
	if r.prompt >= gatewayPDThreshold && !s.cond.noPrefill {
		d = "prefill-decode"
	}
	switch {
	case g.disaggDecision != nil:
		g.disaggDecision.with(s.now, d, g.opts.Model).value++
	case g.pdDecision != nil && len(g.pdDecision.labels) == 1:
		g.pdDecision.with(s.now, d).value++
	case g.pdDecision != nil:
		g.pdDecision.with(s.now, d, g.opts.Model).value++
	}
}
