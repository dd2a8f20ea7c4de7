package simulator

import (
	"errors"
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// timeline scrapes a simulator every 15 simulated seconds for total, with
// the scenario selected at the start.
type timeline struct {
	t     *testing.T
	every time.Duration
	snaps []map[string]*dto.MetricFamily
}

func runScenario(t *testing.T, server Server, scenario string, total time.Duration) *timeline {
	t.Helper()
	s, clk := newTestSim(t, Options{Server: server, Scenario: scenario, Seed: 11, SpecDecode: true, KVConnector: true, DCGMOptIn: true, NaNCheck: true})
	tl := &timeline{t: t, every: 15 * time.Second}
	for at := time.Duration(0); at <= total; at += tl.every {
		tl.snaps = append(tl.snaps, scrape(t, s))
		clk.advance(tl.every)
	}
	return tl
}

func (tl *timeline) at(d time.Duration) map[string]*dto.MetricFamily {
	i := int(d / tl.every)
	if i >= len(tl.snaps) {
		tl.t.Fatalf("no scrape at %v", d)
	}
	return tl.snaps[i]
}

// gauge reads a gauge (summed over matching series) at d.
func (tl *timeline) gauge(d time.Duration, name string, match map[string]string) float64 {
	v := value(tl.at(d), name, match)
	if math.IsNaN(v) {
		tl.t.Fatalf("%s missing at %v", name, d)
	}
	return v
}

// rate is the per-second increase of a counter between a and b.
// A counter with no series yet counts as 0, as after a restart.
func (tl *timeline) rate(a, b time.Duration, name string, match map[string]string) float64 {
	va, vb := value(tl.at(a), name, match), value(tl.at(b), name, match)
	if math.IsNaN(va) {
		va = 0
	}
	if math.IsNaN(vb) {
		tl.t.Fatalf("%s missing at %v", name, b)
	}
	return (vb - va) / (b - a).Seconds()
}

// countRate is the per-second increase of a histogram's count.
func (tl *timeline) countRate(a, b time.Duration, name string) float64 {
	ha, hb := histogram(tl.t, tl.at(a), name), histogram(tl.t, tl.at(b), name)
	return (hb.cum[len(hb.cum)-1] - ha.cum[len(ha.cum)-1]) / (b - a).Seconds()
}

// quantile is histogram_quantile over the increase between a and b.
func (tl *timeline) quantile(q float64, a, b time.Duration, name string) float64 {
	return histogram(tl.t, tl.at(b), name).minus(histogram(tl.t, tl.at(a), name)).quantile(q)
}

const sec = time.Second

func TestScenarioSteady(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "steady", 10*time.Minute)
	for d := 15 * sec; d <= 10*time.Minute; d += time.Minute {
		if kv := tl.gauge(d, "vllm:kv_cache_usage_perc", nil); kv < 0.2 || kv > 0.6 {
			t.Errorf("steady: kv cache usage %.3f at %v, want 0.2..0.6", kv, d)
		}
	}
	if r := tl.rate(0, 10*time.Minute, "vllm:num_preemptions_total", nil); r != 0 {
		t.Errorf("steady: %.3f preemptions/s, want none", r)
	}
	all := tl.rate(0, 10*time.Minute, "http_requests_total", nil)
	bad := tl.rate(0, 10*time.Minute, "http_requests_total", map[string]string{"status": "5xx"})
	if all < 2 || bad/all > 0.02 {
		t.Errorf("steady: %.2f req/s with 5xx ratio %.3f, want >= 2 req/s and < 2%% errors", all, bad/all)
	}
	if p99 := tl.quantile(0.99, 0, 10*time.Minute, "vllm:time_to_first_token_seconds"); p99 > 1.5 {
		t.Errorf("steady: TTFT p99 %.2fs, want < 1.5s", p99)
	}
}

func TestScenarioRamp(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "ramp", 10*time.Minute)
	early := tl.countRate(0, 2*time.Minute, "vllm:e2e_request_latency_seconds")
	late := tl.countRate(8*time.Minute, 10*time.Minute, "vllm:e2e_request_latency_seconds")
	if late < 3*early {
		t.Errorf("ramp: %.2f req/s early, %.2f late; want at least 3x more", early, late)
	}
	if a, b := tl.gauge(0, "vllm:kv_cache_usage_perc", nil), tl.gauge(10*time.Minute, "vllm:kv_cache_usage_perc", nil); b < a+0.3 {
		t.Errorf("ramp: kv cache usage %.2f -> %.2f, want a rise of 0.3 or more", a, b)
	}
	if w := tl.gauge(10*time.Minute, "vllm:num_requests_waiting", nil); w < 5 {
		t.Errorf("ramp: %v waiting at the end, want a queue", w)
	}
}

func TestScenarioKVSaturation(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "kv-saturation", 3*time.Minute)
	if kv := tl.gauge(15*sec, "vllm:kv_cache_usage_perc", nil); kv > 0.5 {
		t.Errorf("kv-saturation: usage %.3f before onset, want healthy (< 0.5)", kv)
	}
	end := tl.gauge(3*time.Minute, "vllm:kv_cache_usage_perc", nil)
	if end <= 0.95 || end > 1 {
		t.Errorf("kv-saturation: vllm:kv_cache_usage_perc %.3f after 3 minutes, want in (0.95, 1]", end)
	}
	if w := tl.gauge(3*time.Minute, "vllm:num_requests_waiting", nil); w < 20 {
		t.Errorf("kv-saturation: %v requests waiting, want a queue of 20 or more", w)
	}
	// The same scenario on SGLang fills its token pool.
	sg := runScenario(t, ServerSGLang, "kv-saturation", 3*time.Minute)
	if u := sg.gauge(3*time.Minute, "sglang:token_usage", nil); u <= 0.95 {
		t.Errorf("kv-saturation on sglang: token_usage %.2f, want > 0.95", u)
	}
	// And on Triton's TensorRT-LLM backend, the used/max block ratio.
	tr := runScenario(t, ServerTriton, "kv-saturation", 3*time.Minute)
	used := tr.gauge(3*time.Minute, "nv_trt_llm_kv_cache_block_metrics", map[string]string{"kv_cache_block_type": "used"})
	total := tr.gauge(3*time.Minute, "nv_trt_llm_kv_cache_block_metrics", map[string]string{"kv_cache_block_type": "max"})
	if used/total <= 0.95 {
		t.Errorf("kv-saturation on triton: %v of %v KV blocks used, want > 95%%", used, total)
	}
}

func TestScenarioPreemptionStorm(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "preemption-storm", 3*time.Minute)
	before := tl.rate(0, 30*sec, "vllm:num_preemptions_total", nil)
	during := tl.rate(2*time.Minute, 3*time.Minute, "vllm:num_preemptions_total", nil)
	if before != 0 || during < 2 {
		t.Errorf("preemption-storm: %.2f preemptions/s before onset, %.2f after; want 0 then >= 2", before, during)
	}
}

func TestScenarioSwapV0(t *testing.T) {
	tl := runScenario(t, ServerVLLMV0, "swap", 4*time.Minute)
	if c := tl.gauge(15*sec, "vllm:cpu_cache_usage_perc", nil); c != 0 {
		t.Errorf("swap: CPU cache usage %.3f before onset, want 0", c)
	}
	if c := tl.gauge(4*time.Minute, "vllm:cpu_cache_usage_perc", nil); c < 0.5 {
		t.Errorf("swap: CPU cache usage %.3f after 4 minutes, want > 0.5", c)
	}
	if n := tl.gauge(4*time.Minute, "vllm:num_requests_swapped", nil); n < 10 {
		t.Errorf("swap: %v requests swapped, want 10 or more", n)
	}
	if g := tl.gauge(4*time.Minute, "vllm:gpu_cache_usage_perc", nil); g < 0.9 {
		t.Errorf("swap: GPU cache usage %.3f, want > 0.9", g)
	}
	// V1 does not swap: the scenario does not exist there.
	_, err := New(Options{Server: ServerVLLM, Scenario: "swap"})
	var unknown *UnknownScenarioError
	if !errors.As(err, &unknown) {
		t.Errorf("swap on V1: error %v, want UnknownScenarioError", err)
	}
}

func TestScenarioTTFTSpike(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "ttft-spike", 3*time.Minute)
	before := tl.quantile(0.99, 0, 30*sec, "vllm:time_to_first_token_seconds")
	during := tl.quantile(0.99, 2*time.Minute, 3*time.Minute, "vllm:time_to_first_token_seconds")
	if before > 1.5 || during < 10 {
		t.Errorf("ttft-spike: TTFT p99 %.2fs before onset and %.2fs during, want < 1.5s then > 10s", before, during)
	}
	tr := runScenario(t, ServerTriton, "ttft-spike", 3*time.Minute)
	if p := tr.quantile(0.9, 2*time.Minute, 3*time.Minute, "nv_inference_first_response_histogram_ms"); p < 2000 {
		t.Errorf("ttft-spike on triton: first-response p90 %.0f ms, want > 2000", p)
	}
}

func TestScenarioErrorBurst(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "error-burst", 3*time.Minute)
	a, b := time.Minute, 3*time.Minute
	all := tl.rate(a, b, "http_requests_total", nil)
	bad := tl.rate(a, b, "http_requests_total", map[string]string{"status": "5xx"})
	if bad/all < 0.2 {
		t.Errorf("error-burst: 5xx ratio %.3f, want > 0.2", bad/all)
	}
	finished := tl.rate(a, b, "vllm:request_success_total", nil)
	abort := tl.rate(a, b, "vllm:request_success_total", map[string]string{"finished_reason": "abort"})
	failed := tl.rate(a, b, "vllm:request_success_total", map[string]string{"finished_reason": "error"})
	if abort/finished < 0.15 || failed/finished < 0.05 {
		t.Errorf("error-burst: abort ratio %.3f, error ratio %.3f; want > 0.15 and > 0.05", abort/finished, failed/finished)
	}
	base := tl.rate(0, 30*sec, "http_requests_total", map[string]string{"status": "5xx"})
	if base > 0.1 {
		t.Errorf("error-burst: %.2f 5xx/s before onset, want about none", base)
	}
	tg := runScenario(t, ServerTGI, "error-burst", 3*time.Minute)
	if r := tg.rate(a, b, "tgi_request_failure", nil); r < 0.5 {
		t.Errorf("error-burst on tgi: %.2f failures/s, want > 0.5", r)
	}
}

func TestScenarioFragmentation(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "fragmentation", 3*time.Minute)
	end := 3 * time.Minute
	kv := tl.gauge(end, "vllm:kv_cache_usage_perc", nil)
	running := tl.gauge(end, "vllm:num_requests_running", nil)
	waiting := tl.gauge(end, "vllm:num_requests_waiting", nil)
	if kv < 0.9 || running > 6 || waiting < 15 {
		t.Errorf("fragmentation: kv %.2f, running %v, waiting %v; want cache full, few running, a queue", kv, running, waiting)
	}
	before := tl.rate(0, 30*sec, "vllm:request_success_total", nil)
	after := tl.rate(2*time.Minute, end, "vllm:request_success_total", nil)
	if before < 2.5 || after > 1.5 {
		t.Errorf("fragmentation: throughput %.2f -> %.2f req/s, want a collapse", before, after)
	}
}

func TestScenarioOverprovisioned(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "overprovisioned", 3*time.Minute)
	kv := tl.gauge(3*time.Minute, "vllm:kv_cache_usage_perc", nil)
	running := tl.gauge(3*time.Minute, "vllm:num_requests_running", nil)
	if kv > 0.12 || running < 30 {
		t.Errorf("overprovisioned: kv %.3f with %v running, want < 0.12 under load (>= 30 running)", kv, running)
	}
}

func TestScenarioDown(t *testing.T) {
	s, clk := newTestSim(t, Options{Server: ServerVLLM, Scenario: "down"})
	clk.advance(30 * sec)
	if err := s.WriteMetrics(new(discard)); !errors.Is(err, ErrDown) {
		t.Fatalf("down: WriteMetrics error %v, want ErrDown", err)
	}
	if err := s.SetScenario("steady"); err != nil {
		t.Fatal(err)
	}
	clk.advance(15 * sec)
	if v := value(scrape(t, s), "vllm:num_requests_running", nil); math.IsNaN(v) {
		t.Error("after recovery from down: no vllm:num_requests_running")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Every scenario runs on every server it is listed for without errors and
// keeps every gauge in range.
func TestEveryScenarioOnEveryServer(t *testing.T) {
	for _, server := range Servers() {
		for _, sc := range Scenarios(server) {
			if sc.Name == "down" {
				continue
			}
			s, clk := newTestSim(t, Options{Server: server, Scenario: sc.Name, Seed: 5, SpecDecode: true, KVConnector: true, DCGMOptIn: true, NaNCheck: true, PrefillWorker: true, FlowControl: true})
			clk.advance(5 * time.Minute)
			mfs := scrape(t, s)
			for _, name := range []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:cpu_cache_usage_perc", "sglang:token_usage"} {
				if v := value(mfs, name, nil); !math.IsNaN(v) && (v < 0 || v > 1) {
					t.Errorf("%s/%s: %s = %v, want 0..1", server, sc.Name, name, v)
				}
			}
			if len(mfs) < 10 {
				t.Errorf("%s/%s: only %d families", server, sc.Name, len(mfs))
			}
		}
	}
}

func TestScenarioAsleep(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "asleep", 4*time.Minute)
	if a := tl.gauge(15*sec, "vllm:engine_sleep_state", map[string]string{"sleep_state": "awake"}); a != 1 {
		t.Errorf("asleep: awake = %v before onset, want 1", a)
	}
	if a := tl.gauge(3*time.Minute, "vllm:engine_sleep_state", map[string]string{"sleep_state": "awake"}); a != 0 {
		t.Errorf("asleep: awake = %v after onset, want 0", a)
	}
	if l1 := tl.gauge(3*time.Minute, "vllm:engine_sleep_state", map[string]string{"sleep_state": "weights_offloaded"}); l1 != 1 {
		t.Errorf("asleep: weights_offloaded = %v, want 1", l1)
	}
	if w := tl.gauge(4*time.Minute, "vllm:num_requests_waiting", nil); w < 3 {
		t.Errorf("asleep: %v waiting, want a queue", w)
	}
	if r := tl.rate(3*time.Minute, 4*time.Minute, "vllm:generation_tokens_total", nil) + tl.rate(3*time.Minute, 4*time.Minute, "vllm:prompt_tokens_total", nil); r > 0 {
		t.Errorf("asleep: %.1f tokens/s while sleeping, want 0", r)
	}
}

func TestScenarioSpecDecodeCollapse(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "spec-decode-collapse", 5*time.Minute)
	acc := func(a, b time.Duration) float64 {
		return tl.rate(a, b, "vllm:spec_decode_num_accepted_tokens_total", nil) / tl.rate(a, b, "vllm:spec_decode_num_draft_tokens_total", nil)
	}
	if r := acc(0, 30*sec); r < 0.6 || r > 0.8 {
		t.Errorf("spec-decode-collapse: acceptance %.2f before onset, want about 0.7", r)
	}
	if r := acc(3*time.Minute, 5*time.Minute); r > 0.2 {
		t.Errorf("spec-decode-collapse: acceptance %.2f after onset, want about 0.12", r)
	}
	sg := runScenario(t, ServerSGLang, "spec-decode-collapse", 5*time.Minute)
	if r := sg.gauge(4*time.Minute, "sglang:spec_accept_rate", nil); r > 0.2 || r <= 0 {
		t.Errorf("spec-decode-collapse on sglang: spec_accept_rate %v, want about 0.12", r)
	}
	// Without the option the scenario is refused: its metrics would not exist.
	if _, err := New(Options{Server: ServerVLLM, Scenario: "spec-decode-collapse"}); err == nil {
		t.Error("spec-decode-collapse without SpecDecode: no error")
	}
}

func TestScenarioKVTransferFailures(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "kv-transfer-failures", 5*time.Minute)
	a, b := 2*time.Minute, 5*time.Minute
	failed := tl.rate(a, b, "vllm:nixl_num_failed_transfers_total", nil)
	finished := tl.rate(a, b, "vllm:request_success_total", nil)
	if r := failed / finished; r < 0.04 || r > 0.12 {
		t.Errorf("kv-transfer-failures: %.3f of requests had a failed transfer, want about 0.08", r)
	}
	sg := runScenario(t, ServerSGLang, "kv-transfer-failures", 5*time.Minute)
	if r := sg.rate(a, b, "sglang:num_transfer_failed_reqs_total", nil) / sg.rate(a, b, "sglang:num_requests_total", nil); r < 0.04 || r > 0.12 {
		t.Errorf("kv-transfer-failures on sglang: %.3f transfer failures per request, want about 0.08", r)
	}
}

func TestScenarioGrammarBacklog(t *testing.T) {
	tl := runScenario(t, ServerSGLang, "grammar-backlog", 3*time.Minute)
	if q := tl.gauge(15*sec, "sglang:num_grammar_queue_reqs", nil); q != 0 {
		t.Errorf("grammar-backlog: %v in the grammar queue before onset, want 0", q)
	}
	if q := tl.gauge(3*time.Minute, "sglang:num_grammar_queue_reqs", nil); q < 30 {
		t.Errorf("grammar-backlog: %v in the grammar queue after 3 minutes, want about 40", q)
	}
}

// The two P/D imbalance scenarios fill one decode-worker queue each and
// leave the other as steady has it.
func TestScenarioPDImbalance(t *testing.T) {
	steady := runScenario(t, ServerSGLang, "steady", 3*time.Minute)
	if q := steady.gauge(3*time.Minute, "sglang:num_decode_transfer_queue_reqs", nil); q > 3 {
		t.Errorf("steady: %v in the decode transfer queue, want about 1 (rate × TTFT)", q)
	}
	if q := steady.gauge(3*time.Minute, "sglang:num_decode_prealloc_queue_reqs", nil); q != 0 {
		t.Errorf("steady: %v in the decode prealloc queue, want 0", q)
	}
	if q := steady.gauge(3*time.Minute, "sglang:num_prefill_bootstrap_queue_reqs", nil); q != 0 {
		t.Errorf("steady: %v in the prefill queue of a decode worker, want 0", q)
	}

	dec := runScenario(t, ServerSGLang, "pd-decode-bound", 4*time.Minute)
	if q := dec.gauge(4*time.Minute, "sglang:num_decode_prealloc_queue_reqs", nil); q < 20 {
		t.Errorf("pd-decode-bound: %v in the prealloc queue, want about 30", q)
	}
	if u := dec.gauge(4*time.Minute, "sglang:token_usage", nil); u < 0.85 {
		t.Errorf("pd-decode-bound: token_usage %v, want about 0.93", u)
	}
	if tr, run := dec.gauge(4*time.Minute, "sglang:num_decode_transfer_queue_reqs", nil), dec.gauge(4*time.Minute, "sglang:num_running_reqs", nil); tr > run {
		t.Errorf("pd-decode-bound: %v in the transfer queue, more than the %v running", tr, run)
	}

	pre := runScenario(t, ServerSGLang, "pd-prefill-bound", 4*time.Minute)
	tr, run := pre.gauge(4*time.Minute, "sglang:num_decode_transfer_queue_reqs", nil), pre.gauge(4*time.Minute, "sglang:num_running_reqs", nil)
	if tr < 25 || tr <= run {
		t.Errorf("pd-prefill-bound: %v in the transfer queue and %v running, want about 35 and 12", tr, run)
	}
	if q := pre.gauge(4*time.Minute, "sglang:num_decode_prealloc_queue_reqs", nil); q != 0 {
		t.Errorf("pd-prefill-bound: %v in the prealloc queue, want 0", q)
	}

	if _, err := New(Options{Server: ServerSGLang, Scenario: "pd-decode-bound"}); err == nil {
		t.Error("pd-decode-bound without KVConnector: no error")
	}
}

// A hung engine keeps taking requests while nothing finishes: each server's
// arrival counter moves, its completion and token counters stand still,
// and running and waiting read 0 (vllm#39863). Before the hang the same
// counters move together.
func TestScenarioHung(t *testing.T) {
	before, a, b := 15*sec, 2*time.Minute, 5*time.Minute
	for _, c := range []struct {
		server          Server
		arrivals        string
		arrivalMatch    map[string]string
		done, progress  []string
		running, queued string
	}{
		{ServerVLLM, "http_requests_total", map[string]string{"status": "2xx"},
			[]string{"vllm:request_success_total"}, []string{"vllm:generation_tokens_total", "vllm:prompt_tokens_total"},
			"vllm:num_requests_running", "vllm:num_requests_waiting"},
		{ServerTGI, "tgi_request_count", nil,
			[]string{"tgi_request_success"}, []string{"tgi_batch_inference_count"},
			"tgi_batch_current_size", "tgi_queue_size"},
		{ServerSGLang, "sglang:http_requests_total", nil,
			[]string{"sglang:num_requests_total"}, []string{"sglang:realtime_tokens_total", "sglang:generation_tokens_total"},
			"sglang:num_running_reqs", "sglang:num_queue_reqs"},
	} {
		tl := runScenario(t, c.server, "hung", b)
		if r := tl.rate(a, b, c.arrivals, c.arrivalMatch); r < 2 {
			t.Errorf("%s hung: %s grows %.2f/s, want the ~4/s arriving", c.server, c.arrivals, r)
		}
		for _, name := range append(c.done, c.progress...) {
			if r := tl.rate(a, b, name, nil); r != 0 {
				t.Errorf("%s hung: %s grows %.2f/s, want 0", c.server, name, r)
			}
			if r := tl.rate(0, before, name, nil); r == 0 && name != "sglang:realtime_tokens_total" {
				t.Errorf("%s before the hang: %s does not grow", c.server, name)
			}
		}
		for _, g := range []string{c.running, c.queued} {
			if v := tl.gauge(b, g, nil); v != 0 {
				t.Errorf("%s hung: %s = %v, want 0", c.server, g, v)
			}
		}
	}
	sg := runScenario(t, ServerSGLang, "hung", b)
	if r := sg.rate(a, b, "sglang:scheduler_idle_seconds_total", nil); r != 0 {
		t.Errorf("sglang hung: the scheduler idles %.2f s/s; a hung scheduler is stuck in a step, not idle", r)
	}
	if _, err := New(Options{Server: ServerTriton, Scenario: "hung"}); err == nil {
		t.Error("hung on triton: no error (the scenario is for vLLM, TGI and SGLang)")
	}
}

// queue-full refuses requests at admission (a capped queue answers 503):
// vllm:admission_rejections_total grows to about 15% of the requests.
func TestScenarioQueueFull(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "queue-full", 5*time.Minute)
	a, b := 2*time.Minute, 5*time.Minute
	rej := tl.rate(a, b, "vllm:admission_rejections_total", nil)
	done := tl.rate(a, b, "vllm:request_success_total", nil)
	if r := rej / (rej + done); r < 0.1 || r > 0.2 {
		t.Errorf("queue-full: %.3f of requests rejected at admission, want about 0.15", r)
	}
	if w := tl.gauge(b, "vllm:num_requests_waiting", nil); w < 30 {
		t.Errorf("queue-full: %v waiting, want the capped queue of about 40", w)
	}
	steady := runScenario(t, ServerVLLM, "steady", 5*time.Minute)
	rej, done = steady.rate(a, b, "vllm:admission_rejections_total", nil), steady.rate(a, b, "vllm:request_success_total", nil)
	if r := rej / (rej + done); r > 0.01 {
		t.Errorf("steady: %.4f of requests rejected at admission, want about 0.002", r)
	}
}

// requests-deferred moves waiting requests from capacity to deferred; the
// two reasons add up to vllm:num_requests_waiting.
func TestScenarioRequestsDeferred(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "requests-deferred", 4*time.Minute)
	at := 4 * time.Minute
	def := tl.gauge(at, "vllm:num_requests_waiting_by_reason", map[string]string{"reason": "deferred"})
	capy := tl.gauge(at, "vllm:num_requests_waiting_by_reason", map[string]string{"reason": "capacity"})
	if def < 20 || def <= tl.gauge(at, "vllm:num_requests_running", nil) {
		t.Errorf("requests-deferred: %v deferred, want about 30, more than the 8 running", def)
	}
	if w := tl.gauge(at, "vllm:num_requests_waiting", nil); def+capy != w {
		t.Errorf("requests-deferred: deferred %v + capacity %v != waiting %v", def, capy, w)
	}
	if kv := tl.gauge(at, "vllm:kv_cache_usage_perc", nil); kv > 0.5 {
		t.Errorf("requests-deferred: KV %v, want about 0.3 (not a capacity problem)", kv)
	}
	if d := tl.gauge(15*sec, "vllm:num_requests_waiting_by_reason", map[string]string{"reason": "deferred"}); d != 0 {
		t.Errorf("requests-deferred: %v deferred before onset, want 0", d)
	}
}

// With a KV connector the external prefix cache hits about 30% of the
// tokens the local cache missed; external-cache-miss takes that to 0.
func TestScenarioExternalCacheMiss(t *testing.T) {
	hit := func(tl *timeline, a, b time.Duration) float64 {
		return tl.rate(a, b, "vllm:external_prefix_cache_hits_total", nil) / tl.rate(a, b, "vllm:external_prefix_cache_queries_total", nil)
	}
	tl := runScenario(t, ServerVLLM, "external-cache-miss", 5*time.Minute)
	if r := hit(tl, 0, 30*sec); r < 0.2 || r > 0.4 {
		t.Errorf("external-cache-miss: hit rate %.3f before onset, want about 0.3", r)
	}
	if r := hit(tl, 2*time.Minute, 5*time.Minute); r > 0.01 {
		t.Errorf("external-cache-miss: hit rate %.3f after onset, want 0", r)
	}
	if q := tl.rate(2*time.Minute, 5*time.Minute, "vllm:external_prefix_cache_queries_total", nil); q < 500 {
		t.Errorf("external-cache-miss: %.0f tokens/s queried, want the prompts' misses (about 1400/s)", q)
	}
	if _, err := New(Options{Server: ServerVLLM, Scenario: "external-cache-miss"}); err == nil {
		t.Error("external-cache-miss without KVConnector: no error")
	}
}

// nan-logits counts requests with NaN logits, only where the server was
// started with the NaN check (the counter does not exist otherwise).
func TestScenarioNaNLogits(t *testing.T) {
	tl := runScenario(t, ServerVLLM, "nan-logits", 5*time.Minute)
	if r := tl.rate(0, 30*sec, "vllm:corrupted_requests_total", nil); r != 0 {
		t.Errorf("nan-logits: %.3f corrupted requests/s before onset, want 0", r)
	}
	c, done := tl.rate(time.Minute, 5*time.Minute, "vllm:corrupted_requests_total", nil), tl.rate(time.Minute, 5*time.Minute, "vllm:request_success_total", nil)
	if r := c / done; r < 0.005 || r > 0.05 {
		t.Errorf("nan-logits: %.4f of requests corrupted, want about 0.02", r)
	}
	plain, _ := newTestSim(t, Options{Server: ServerVLLM})
	if v := value(scrape(t, plain), "vllm:corrupted_requests_total", nil); !math.IsNaN(v) {
		t.Errorf("without NaNCheck vllm:corrupted_requests_total is served (%v)", v)
	}
	if _, err := New(Options{Server: ServerVLLM, Scenario: "nan-logits"}); err == nil {
		t.Error("nan-logits without NaNCheck: no error")
	}
}

// runScenarioWith is runScenario with the simulator options given (the
// scenario and seed are set here).
func runScenarioWith(t *testing.T, opts Options, scenario string, total time.Duration) *timeline {
	t.Helper()
	opts.Scenario, opts.Seed = scenario, 11
	s, clk := newTestSim(t, opts)
	tl := &timeline{t: t, every: 15 * time.Second}
	for at := time.Duration(0); at <= total; at += tl.every {
		tl.snaps = append(tl.snaps, scrape(t, s))
		clk.advance(tl.every)
	}
	return tl
}

// An SGLang P/D prefill worker observes the bootstrap handshake and counts
// optimistic prefill retries; the two scenarios move one each. A decode
// worker observes neither.
func TestScenarioSGLangPrefillWorker(t *testing.T) {
	prefill := Options{Server: ServerSGLang, KVConnector: true, PrefillWorker: true}
	a, b := 2*time.Minute, 5*time.Minute
	steady := runScenarioWith(t, prefill, "steady", b)
	if p99 := steady.quantile(0.99, a, b, "sglang:kv_transfer_bootstrap_ms"); p99 > 250 {
		t.Errorf("steady prefill worker: bootstrap p99 %.0f ms, want well under a second (median 20 ms)", p99)
	}
	if q := steady.gauge(b, "sglang:num_decode_transfer_queue_reqs", nil); q != 0 {
		t.Errorf("prefill worker: %v in the decode transfer queue, want 0", q)
	}
	slow := runScenarioWith(t, prefill, "kv-bootstrap-slow", b)
	if p99 := slow.quantile(0.99, a, b, "sglang:kv_transfer_bootstrap_ms"); p99 <= 1000 {
		t.Errorf("kv-bootstrap-slow: bootstrap p99 %.0f ms, want over 1000 (median 1.5 s)", p99)
	}
	retry := runScenarioWith(t, prefill, "prefill-retries", b)
	if r := retry.rate(a, b, "sglang:num_prefill_retries_total", nil) / retry.rate(a, b, "sglang:num_requests_total", nil); r < 0.06 || r > 0.14 {
		t.Errorf("prefill-retries: %.3f retries per request, want about 0.1", r)
	}
	decode := runScenario(t, ServerSGLang, "steady", b)
	for _, name := range []string{"sglang:kv_transfer_bootstrap_ms", "sglang:num_prefill_retries_total"} {
		if _, ok := decode.at(b)[name]; ok {
			t.Errorf("decode worker: %s is served; only the prefill worker observes it", name)
		}
	}
	if _, err := New(Options{Server: ServerSGLang, KVConnector: true, Scenario: "prefill-retries"}); err == nil {
		t.Error("prefill-retries on a decode worker: no error")
	}
}

// scheduler-stuck: the scheduler counts idle time while its queue gauge
// holds requests and nothing finishes; steady load leaves it busy.
func TestScenarioSchedulerStuck(t *testing.T) {
	tl := runScenario(t, ServerSGLang, "scheduler-stuck", 5*time.Minute)
	a, b := 2*time.Minute, 5*time.Minute
	if r := tl.rate(a, b, "sglang:scheduler_idle_seconds_total", nil); r < 0.99 {
		t.Errorf("scheduler-stuck: idle %.2f s/s, want 1", r)
	}
	if q := tl.gauge(b, "sglang:num_queue_reqs", nil); q < 10 {
		t.Errorf("scheduler-stuck: %v queued, want about 12", q)
	}
	if r := tl.rate(a, b, "sglang:num_requests_total", nil); r != 0 {
		t.Errorf("scheduler-stuck: %.2f requests/s finish, want 0", r)
	}
	if r := tl.rate(0, 30*sec, "sglang:scheduler_idle_seconds_total", nil); r != 0 {
		t.Errorf("before the scenario: idle %.2f s/s under steady load, want 0", r)
	}
}
