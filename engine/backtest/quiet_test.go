package backtest_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/simulator"
)

// A quiet vLLM server (the simulator's idle scenario: 0.1 requests/s with a
// long TTFT tail, within its SLOs) must not page: twelve hours of it,
// backtested with the whole vllm pack, SLO burn-rate alerts included,
// produce no notification, and the TTFT p99 alert is never even pending.
// With the pack's old TTFT traffic guard (0.05 requests/s) the same data
// makes it pending again and again (the slowest of 30 requests is the
// "p99"), so the scenario is noisy enough for the test to fail if the
// guard regresses. (Whether one of those pending periods lasts the full
// 10m depends on the evaluation phase, so firing is not asserted.)
func TestQuietServerNeverPages(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm", "vllm.rules.yaml")
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	span := 12 * time.Hour
	db := record(t, t.TempDir(), start, span, 15*time.Second, []phase{{0, "idle"}})
	defer db.Close()
	eng := newPromQL()
	run := func(files ...string) *backtest.Report {
		t.Helper()
		rep, err := backtest.Run(context.Background(), backtest.Options{
			Source:             backtest.NewQueryable(eng, db),
			RuleFiles:          files,
			From:               start.Add(10 * time.Minute),
			To:                 start.Add(span),
			EvaluationInterval: 30 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	for _, r := range run(pack).Rules {
		if r.Error != "" || r.EvalErrors > 0 {
			t.Errorf("%s: error %q, %d failed evaluations", r.Name, r.Error, r.EvalErrors)
		}
		if r.Fired > 0 || r.Notifications > 0 {
			t.Errorf("%s fired %d times (%d notifications) on a quiet server: %v", r.Name, r.Fired, r.Notifications, r.Firing)
		}
		if r.Name == "VLLMTimeToFirstTokenHigh" && len(r.Pending) > 0 {
			t.Errorf("VLLMTimeToFirstTokenHigh went pending %d times on a quiet server", len(r.Pending))
		}
	}

	orig, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	const guard = "(rate(vllm:time_to_first_token_seconds_count[5m])) > 1"
	if !strings.Contains(string(orig), guard) {
		t.Fatalf("the pack's TTFT guard is no longer %q; update this test", guard)
	}
	old := strings.Replace(string(orig), guard, "(rate(vllm:time_to_first_token_seconds_count[5m])) > 0.05", 1)
	pending, fired := 0, 0
	for _, r := range run(writeFile(t, t.TempDir(), "old-guard.rules.yaml", old)).Rules {
		if r.Name == "VLLMTimeToFirstTokenHigh" {
			pending, fired = len(r.Pending), r.Fired
		}
	}
	if pending < 5 {
		t.Errorf("with the old 0.05 requests/s guard, VLLMTimeToFirstTokenHigh went pending %d times on the idle scenario, want at least 5: the scenario no longer tests the guard", pending)
	}
	t.Logf("old guard: VLLMTimeToFirstTokenHigh pending %d times, fired %d times in %s of an idle server; current pack: never", pending, fired, span)
}

// Each scenario of the simulator written for a new alert fires it when the
// vllm and vllm-features packs are backtested over it, and the steady
// lead-in does not; steady load with every feature on fires none of them.
func TestScenariosFireNewAlerts(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm", "vllm.rules.yaml")
	features := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm-features", "vllm-features.rules.yaml")
	start := scenarioStart
	for _, c := range []struct {
		scenario string
		alerts   []string
		quiet    []string
	}{
		{"asleep", []string{"VLLMEngineAsleepWithRequestsWaiting"}, []string{"VLLMThroughputCollapse"}},
		{"spec-decode-collapse", []string{"VLLMSpecDecodeAcceptanceLow"}, nil},
		{"kv-transfer-failures", []string{"VLLMKVTransferFailures"}, nil},
		{"error-burst", []string{"VLLMErrorBudgetBurnFast", "VLLMHighErrorRate"}, nil},
		{"ttft-spike", []string{"VLLMTTFTBudgetBurnFast", "VLLMTimeToFirstTokenHigh"}, nil},
		{"queue-full", []string{"VLLMAdmissionRejections"}, []string{"VLLMRequestsDeferred"}},
		{"requests-deferred", []string{"VLLMRequestsDeferred"}, []string{"VLLMAdmissionRejections", "VLLMThroughputCollapse"}},
		{"external-cache-miss", []string{"VLLMExternalPrefixCacheNoHits"}, []string{"VLLMPrefixCacheHitRateLow"}},
		{"nan-logits", []string{"VLLMRequestsCorrupted"}, nil},
		{"steady", nil, []string{"VLLMAdmissionRejections", "VLLMRequestsDeferred", "VLLMExternalPrefixCacheNoHits", "VLLMRequestsCorrupted", "VLLMEngineHung"}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			span := 90 * time.Minute
			rep := backtestScenario(t, simulator.Options{SpecDecode: true, KVConnector: true, NaNCheck: true}, c.scenario, span, pack, features)
			fired := map[string]time.Time{}
			for _, r := range rep.Rules {
				if len(r.Firing) > 0 {
					fired[r.Name] = r.Firing[0].Start
				}
			}
			for _, a := range c.alerts {
				at, ok := fired[a]
				switch {
				case !ok:
					t.Errorf("%s did not fire; fired: %v", a, fired)
				case at.Before(start.Add(scenarioOnset)):
					t.Errorf("%s fired at %s, before the scenario began", a, at.Sub(start))
				}
			}
			for _, a := range c.quiet {
				if _, ok := fired[a]; ok {
					t.Errorf("%s fired on %s", a, c.scenario)
				}
			}
		})
	}
}

// Each GPU scenario of the dcgm simulator fires its alerts of the dcgm
// pack, on the broken GPU only and not before the scenario began; a
// steady node fires nothing.
func TestDCGMScenariosFireThePack(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "dcgm", "dcgm.rules.yaml")
	start := scenarioStart
	for _, c := range []struct {
		scenario string
		alerts   []string
	}{
		{"steady", nil},
		{"gpu-overheating", []string{"GPUTemperatureHigh"}},
		{"thermal-throttling", []string{"GPUTemperatureHigh", "GPUThermalThrottling"}},
		{"memory-pressure", []string{"GPUMemoryNearlyFull"}},
		{"xid-error", []string{"GPUXIDError"}},
		{"xid-hardware", []string{"GPUXIDHardwareError"}},
		{"row-remap-failure", []string{"GPURowRemapFailure", "GPUUncorrectableRemappedRows"}},
		{"pcie-replays", []string{"GPUPCIeReplays"}},
		{"ecc-double-bit", []string{"GPUDoubleBitECCErrors", "GPUHealthCheckFailed", "GPUXIDHardwareError"}},
		{"nvlink-errors", []string{"GPUHealthCheckFailed", "GPUNVLinkErrors"}},
		{"xid-storm", []string{"GPUXIDError", "GPUXIDErrorsRepeating"}},
		{"idle", []string{"GPUIdleWithModelLoaded"}},
		{"down", []string{"DCGMExporterDown"}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			span := 100 * time.Minute
			rep := backtestScenario(t, simulator.Options{Server: simulator.ServerDCGM, DCGMOptIn: true}, c.scenario, span, pack)
			var fired []string
			for _, r := range rep.Rules {
				if len(r.Firing) == 0 {
					continue
				}
				fired = append(fired, r.Name)
				for _, f := range r.Firing {
					if f.Start.Before(start.Add(scenarioOnset)) {
						t.Errorf("%s fired at %s, before the scenario began", r.Name, f.Start.Sub(start))
					}
					if gpu := f.Labels["gpu"]; c.scenario != "idle" && r.Name != "DCGMExporterDown" && gpu != "2" {
						t.Errorf("%s fired for GPU %q; the scenario breaks GPU 2 only", r.Name, gpu)
					}
				}
			}
			slices.Sort(fired)
			if !slices.Equal(fired, c.alerts) {
				t.Errorf("%s fired %v, want %v", c.scenario, fired, c.alerts)
			}
		})
	}
}

// The TGI simulator's error-burst fails whole batches (a shard error fails
// every request of the running batch), which TGIBatchInferenceFailures
// reports; a steady server's rare request errors do not.
func TestTGIBatchFailuresFire(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "tgi", "tgi.rules.yaml")
	start := scenarioStart
	for scenario, want := range map[string]bool{"steady": false, "error-burst": true} {
		t.Run(scenario, func(t *testing.T) {
			span := 60 * time.Minute
			rep := backtestScenario(t, simulator.Options{Server: simulator.ServerTGI}, scenario, span, pack)
			found := false
			for _, r := range rep.Rules {
				if r.Name != "TGIBatchInferenceFailures" {
					continue
				}
				found = true
				if got := len(r.Firing) > 0; got != want {
					t.Errorf("%s: TGIBatchInferenceFailures fired %v (%d times), want %v", scenario, got, len(r.Firing), want)
				}
				if want && len(r.Firing) > 0 && r.Firing[0].Start.Before(start.Add(scenarioOnset)) {
					t.Errorf("fired at %s, before the error burst", r.Firing[0].Start.Sub(start))
				}
			}
			if !found {
				t.Error("the tgi pack has no TGIBatchInferenceFailures")
			}
		})
	}
}

// SGLang's grammar-backlog scenario fills the grammar queue, which
// SGLangGrammarQueueBacklog reports; steady does not.
func TestSGLangGrammarBacklogFires(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "sglang", "sglang.rules.yaml")
	start := scenarioStart
	for scenario, want := range map[string]bool{"steady": false, "grammar-backlog": true} {
		t.Run(scenario, func(t *testing.T) {
			span := 45 * time.Minute
			rep := backtestScenario(t, simulator.Options{Server: simulator.ServerSGLang}, scenario, span, pack)
			found := false
			for _, r := range rep.Rules {
				if r.Name != "SGLangGrammarQueueBacklog" {
					continue
				}
				found = true
				if got := len(r.Firing) > 0; got != want {
					t.Errorf("%s: SGLangGrammarQueueBacklog fired %v, want %v", scenario, got, want)
				}
				if len(r.Firing) > 0 && r.Firing[0].Start.Before(start.Add(scenarioOnset)) {
					t.Errorf("fired at %s, before the scenario", r.Firing[0].Start.Sub(start))
				}
			}
			if !found {
				t.Error("the sglang pack has no SGLangGrammarQueueBacklog")
			}
		})
	}
}

// On an SGLang decode worker (--kv-connector) each P/D imbalance scenario
// fires the alert for its side and not the other; steady fires neither.
func TestSGLangPDImbalanceFires(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "sglang", "sglang.rules.yaml")
	start := scenarioStart
	for scenario, want := range map[string]string{"steady": "", "pd-decode-bound": "SGLangPDDecodeBottleneck", "pd-prefill-bound": "SGLangPDPrefillBottleneck"} {
		t.Run(scenario, func(t *testing.T) {
			span := 45 * time.Minute
			rep := backtestScenario(t, simulator.Options{Server: simulator.ServerSGLang, KVConnector: true}, scenario, span, pack)
			found := 0
			for _, r := range rep.Rules {
				if r.Name != "SGLangPDDecodeBottleneck" && r.Name != "SGLangPDPrefillBottleneck" {
					continue
				}
				found++
				if got := len(r.Firing) > 0; got != (r.Name == want) {
					t.Errorf("%s: %s fired %v, want %v", scenario, r.Name, got, r.Name == want)
				}
				if len(r.Firing) > 0 && r.Firing[0].Start.Before(start.Add(scenarioOnset)) {
					t.Errorf("%s fired at %s, before the scenario", r.Name, r.Firing[0].Start.Sub(start))
				}
			}
			if found != 2 {
				t.Errorf("the sglang pack has %d of the two P/D imbalance alerts", found)
			}
		})
	}
}

// A hung engine behind a live server (the simulator's hung scenario:
// requests arrive, none finishes, running and waiting read 0) fires the
// hung-engine alert of each server's pack, after the hang began; steady
// load does not. vLLM's VLLMThroughputCollapse, which needs a queue,
// stays silent on it: the gap VLLMEngineHung closes.
func TestHungEngineFires(t *testing.T) {
	for _, c := range []struct {
		server      simulator.Server
		pack, alert string
		silent      string
	}{
		{simulator.ServerVLLM, "vllm", "VLLMEngineHung", "VLLMThroughputCollapse"},
		{simulator.ServerTGI, "tgi", "TGIEngineHung", ""},
		{simulator.ServerSGLang, "sglang", "SGLangEngineHung", ""},
	} {
		pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", c.pack, c.pack+".rules.yaml")
		for _, scenario := range []string{"steady", "hung"} {
			t.Run(c.pack+"/"+scenario, func(t *testing.T) {
				rep := backtestScenario(t, simulator.Options{Server: c.server}, scenario, 60*time.Minute, pack)
				fired := map[string]time.Time{}
				for _, r := range rep.Rules {
					if len(r.Firing) > 0 {
						fired[r.Name] = r.Firing[0].Start
					}
				}
				at, ok := fired[c.alert]
				switch {
				case scenario == "hung" && !ok:
					t.Errorf("%s did not fire on a hung engine; fired: %v", c.alert, fired)
				case scenario == "hung" && at.Before(scenarioStart.Add(scenarioOnset)):
					t.Errorf("%s fired at %s, before the hang", c.alert, at.Sub(scenarioStart))
				case scenario == "steady" && ok:
					t.Errorf("%s fired on steady load at %s", c.alert, at.Sub(scenarioStart))
				}
				if _, ok := fired[c.silent]; ok && c.silent != "" {
					t.Errorf("%s fired on %s; it needs a queue the hung engine does not show", c.silent, scenario)
				}
			})
		}
	}
}

// SGLang's P/D prefill-worker scenarios (--kv-connector --prefill-worker)
// and scheduler-stuck each fire their alert, after the scenario began, and
// none of the three fires on steady load, on a prefill or a unified server.
func TestSGLangNewAlertsFire(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "sglang", "sglang.rules.yaml")
	prefill := simulator.Options{Server: simulator.ServerSGLang, KVConnector: true, PrefillWorker: true}
	unified := simulator.Options{Server: simulator.ServerSGLang}
	all := []string{"SGLangPrefillRetries", "SGLangKVBootstrapSlow", "SGLangSchedulerStuck"}
	for _, c := range []struct {
		name, scenario string
		opts           simulator.Options
		want           string
	}{
		{"prefill/steady", "steady", prefill, ""},
		{"prefill/prefill-retries", "prefill-retries", prefill, "SGLangPrefillRetries"},
		{"prefill/kv-bootstrap-slow", "kv-bootstrap-slow", prefill, "SGLangKVBootstrapSlow"},
		{"unified/steady", "steady", unified, ""},
		{"unified/scheduler-stuck", "scheduler-stuck", unified, "SGLangSchedulerStuck"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := backtestScenario(t, c.opts, c.scenario, 50*time.Minute, pack)
			fired := map[string]time.Time{}
			for _, r := range rep.Rules {
				if len(r.Firing) > 0 {
					fired[r.Name] = r.Firing[0].Start
				}
			}
			for _, a := range all {
				at, ok := fired[a]
				switch {
				case a == c.want && !ok:
					t.Errorf("%s did not fire on %s; fired: %v", a, c.scenario, fired)
				case a == c.want && at.Before(scenarioStart.Add(scenarioOnset)):
					t.Errorf("%s fired at %s, before the scenario", a, at.Sub(scenarioStart))
				case a != c.want && ok:
					t.Errorf("%s fired at %s on %s", a, at.Sub(scenarioStart), c.name)
				}
			}
		})
	}
}
