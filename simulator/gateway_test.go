package simulator

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/rules/catalog"
)

// The simulated endpoint picker serves, for every release, exactly the
// gateway families the catalogue says the release has, each with the
// catalogue's type and with labels among the catalogue's: the names,
// types and labels read in the extension's source
// (rules/catalog/additions.yaml).
func TestGatewayMatchesCatalog(t *testing.T) {
	c := catalog.Default()
	gaie := c.Server("gaie")
	if gaie == nil {
		t.Fatal("catalogue has no gaie server")
	}
	for _, rel := range c.Releases(string(ServerGateway)) {
		s, clk := newTestSim(t, Options{Server: ServerGateway, Version: rel, Seed: 2, KVConnector: true})
		clk.advance(10 * time.Minute)
		if err := s.SetScenario("error-burst"); err != nil {
			t.Fatal(err)
		}
		clk.advance(2 * time.Minute)
		mfs := scrape(t, s)
		for name, mf := range mfs {
			m := c.Metric(name)
			if m == nil || m.Server != gaie {
				t.Errorf("%s: %s is not a gateway metric of the catalogue", rel, name)
				continue
			}
			if m.Status == catalog.Removed && catalog.CompareReleases(rel, "1.1") >= 0 {
				t.Errorf("%s: serves %s, removed in 1.1", rel, name)
			}
			if !c.ExposedIn(string(ServerGateway), name, rel) {
				t.Errorf("%s: serves %s, which the release does not have", rel, name)
			}
			if got := strings.ToLower(mf.GetType().String()); got != string(m.Type) {
				t.Errorf("%s: %s has type %s, catalogue says %s", rel, name, got, m.Type)
			}
			for _, met := range mf.GetMetric() {
				for _, lp := range met.GetLabel() {
					if !slices.Contains(m.Labels, lp.GetName()) {
						t.Errorf("%s: %s has label %s, catalogue says %v", rel, name, lp.GetName(), m.Labels)
					}
				}
			}
		}
		for _, want := range []string{"inference_pool_ready_pods", "inference_pool_average_kv_cache_utilization", "inference_pool_average_queue_size"} {
			if mfs[want] == nil {
				t.Errorf("%s: %s not served", rel, want)
			}
		}
		objective := catalog.CompareReleases(rel, "1.1") >= 0
		if (mfs["inference_objective_request_total"] != nil) != objective || (mfs["inference_model_request_total"] != nil) == objective {
			t.Errorf("%s: objective names %v, model names %v; want the objective names from 1.1 only",
				rel, mfs["inference_objective_request_total"] != nil, mfs["inference_model_request_total"] != nil)
		}
		if has := mfs["inference_extension_scheduler_attempts_total"] != nil; has != (catalog.CompareReleases(rel, "1.3") >= 0) {
			t.Errorf("%s: scheduler attempts served %v, want from 1.3", rel, has)
		}
		pd, disagg := mfs["llm_d_inference_scheduler_pd_decision_total"] != nil, mfs["llm_d_inference_scheduler_disagg_decision_total"] != nil
		if wantPD, wantDisagg := catalog.CompareReleases(rel, "1.2") >= 0 && catalog.CompareReleases(rel, "1.4") < 0, catalog.CompareReleases(rel, "1.4") >= 0; pd != wantPD || disagg != wantDisagg {
			t.Errorf("%s: llm-d pd_decision_total %v, disagg_decision_total %v; want pd on 1.2-1.3 (llm-d 0.4-0.6), disagg from 1.4 (0.7)", rel, pd, disagg)
		}
	}
}

// The Go text format: no _created series, client_golang's float spelling.
func TestGatewayExposition(t *testing.T) {
	s, clk := newTestSim(t, Options{Server: ServerGateway, Seed: 2})
	clk.advance(3 * time.Minute)
	out := scrapeText(t, s)
	for _, want := range []string{
		"# TYPE inference_objective_request_total counter\n",
		`inference_objective_request_duration_seconds_bucket{model_name="meta-llama/Llama-3.1-8B-Instruct",target_model_name="meta-llama/Llama-3.1-8B-Instruct",le="3600"}`,
		`inference_pool_ready_pods{name="vllm-llama3-8b-instruct"} 2` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	for _, bad := range []string{"_created", "inference_model_", "llm_d_"} {
		if strings.Contains(out, bad) {
			t.Errorf("exposition of the newest release without --kv-connector has %q", bad)
		}
	}
}

// Each gateway scenario moves the metrics its alert reads.
func TestGatewayScenarios(t *testing.T) {
	nr := runScenario(t, ServerGateway, "no-ready-pods", 4*time.Minute)
	if v := nr.gauge(15*sec, "inference_pool_ready_pods", nil); v != 2 {
		t.Errorf("no-ready-pods: %v ready before onset, want 2", v)
	}
	if v := nr.gauge(3*time.Minute, "inference_pool_ready_pods", nil); v != 0 {
		t.Errorf("no-ready-pods: %v ready after onset, want 0", v)
	}
	fails := nr.rate(2*time.Minute, 4*time.Minute, "inference_extension_scheduler_attempts_total", map[string]string{"status": "failure"})
	if all := nr.rate(2*time.Minute, 4*time.Minute, "inference_extension_scheduler_attempts_total", nil); all == 0 || fails/all < 0.99 {
		t.Errorf("no-ready-pods: %.2f of %.2f attempts/s failed, want all", fails, all)
	}

	// Refused requests are errors only: request_total counts scheduled ones.
	if v := nr.rate(2*time.Minute, 4*time.Minute, "inference_objective_request_total", nil); v != 0 {
		t.Errorf("no-ready-pods: %.2f requests/s counted in request_total with no pod to schedule on, want 0", v)
	}
	if v := nr.rate(2*time.Minute, 4*time.Minute, "inference_objective_request_error_total", map[string]string{"error_code": "ServiceUnavailable"}); v < 2 {
		t.Errorf("no-ready-pods: %.2f ServiceUnavailable errors/s, want every request", v)
	}

	eb := runScenario(t, ServerGateway, "error-burst", 4*time.Minute)
	var errs float64
	for _, code := range []string{"ModelServerError", "ServiceUnavailable"} {
		errs += eb.rate(2*time.Minute, 4*time.Minute, "inference_objective_request_error_total", map[string]string{"error_code": code})
	}
	refused := eb.rate(2*time.Minute, 4*time.Minute, "inference_objective_request_error_total", map[string]string{"error_code": "ServiceUnavailable"})
	if r := errs / (eb.rate(2*time.Minute, 4*time.Minute, "inference_objective_request_total", nil) + refused); r < 0.2 {
		t.Errorf("error-burst: error ratio %.3f, want above 0.2", r)
	}

	kv := runScenario(t, ServerGateway, "kv-saturation", 4*time.Minute)
	if v := kv.gauge(3*time.Minute, "inference_pool_average_kv_cache_utilization", nil); v < 0.95 {
		t.Errorf("kv-saturation: pool KV average %.2f, want above 0.95", v)
	}
	if v := kv.gauge(3*time.Minute, "inference_pool_average_queue_size", nil); v < 12 {
		t.Errorf("kv-saturation: pool queue average %.1f, want above 12", v)
	}

	pd := runScenario(t, ServerGateway, "pd-stopped", 4*time.Minute)
	split := func(a, b time.Duration) float64 {
		return pd.rate(a, b, "llm_d_inference_scheduler_disagg_decision_total", map[string]string{"decision_type": "prefill-decode"})
	}
	if split(0, 30*sec) == 0 {
		t.Error("pd-stopped: no prefill-decode decisions before onset")
	}
	if v := split(2*time.Minute, 4*time.Minute); v != 0 {
		t.Errorf("pd-stopped: %.2f prefill-decode decisions/s after onset, want 0", v)
	}
	if v := pd.rate(2*time.Minute, 4*time.Minute, "llm_d_inference_scheduler_disagg_decision_total", nil); v < 2 {
		t.Errorf("pd-stopped: %.2f decisions/s after onset, want traffic", v)
	}
}

// With flow control on, the picker's pool saturation (the utilization
// detector's max(queue/5, KV/0.8)) stays under 1 on steady load and goes
// above it when the pool saturates. stale-pod-metrics fails every 50 ms
// poll of one pod (llm-d's data layer) and leaves one fresh pod.
func TestGatewayFlowControlAndDataLayer(t *testing.T) {
	opts := Options{Server: ServerGateway, FlowControl: true, KVConnector: true}
	steady := runScenarioWith(t, opts, "steady", 3*time.Minute)
	if v := steady.gauge(3*time.Minute, "inference_extension_flow_control_pool_saturation", nil); v >= 0.8 {
		t.Errorf("steady: pool saturation %.2f, want about 0.44", v)
	}
	kv := runScenarioWith(t, opts, "kv-saturation", 4*time.Minute)
	if v := kv.gauge(3*time.Minute, "inference_extension_flow_control_pool_saturation", nil); v < 1 {
		t.Errorf("kv-saturation: pool saturation %.2f, want at least 1", v)
	}
	stale := runScenarioWith(t, opts, "stale-pod-metrics", 3*time.Minute)
	if r := stale.rate(time.Minute, 3*time.Minute, "llm_d_inference_scheduler_datalayer_poll_errors_total", map[string]string{"source_type": "metrics-data-source"}); r < 19 || r > 21 {
		t.Errorf("stale-pod-metrics: %.1f poll errors/s, want 20 (one pod, 50 ms)", r)
	}
	if v := stale.gauge(3*time.Minute, "inference_pool_ready_pods", nil); v != 1 {
		t.Errorf("stale-pod-metrics: %v pods with fresh metrics, want 1", v)
	}
	if _, ok := steady.at(3 * time.Minute)["llm_d_inference_scheduler_datalayer_poll_errors_total"]; ok {
		t.Error("steady: the poll error counter has a series before any error")
	}
	plain, _ := newTestSim(t, Options{Server: ServerGateway})
	if v := value(scrape(t, plain), "inference_extension_flow_control_pool_saturation", nil); !math.IsNaN(v) {
		t.Errorf("without FlowControl the saturation gauge is served (%v)", v)
	}
}
