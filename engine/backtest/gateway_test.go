package backtest_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/simulator"
)

// Each inference-gateway alert fires when the pack is backtested over the
// simulated endpoint picker (llm-d's scheduler with flow control on) in the
// scenario written for it, not during
// the steady lead-in, and the other alerts of the pack stay quiet where
// the scenario gives them no reason.
func TestGatewayScenariosFireAlerts(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "inference-gateway", "inference-gateway.rules.yaml")
	start := scenarioStart
	all := []string{"InferenceGatewayEPPDown", "InferenceGatewayNoReadyPods", "InferenceGatewayHighErrorRate",
		"InferenceGatewayPoolKVCacheSaturated", "InferenceGatewayPoolQueueBacklog", "InferenceGatewaySchedulingFailures",
		"InferenceGatewayPDDisaggregationStopped", "InferenceGatewayFlowControlSaturated", "InferenceGatewayDataLayerErrors"}
	for _, c := range []struct {
		scenario string
		alerts   []string
	}{
		{"steady", nil},
		{"down", []string{"InferenceGatewayEPPDown"}},
		{"no-ready-pods", []string{"InferenceGatewayNoReadyPods", "InferenceGatewayHighErrorRate", "InferenceGatewaySchedulingFailures"}},
		{"error-burst", []string{"InferenceGatewayHighErrorRate", "InferenceGatewaySchedulingFailures"}},
		{"kv-saturation", []string{"InferenceGatewayPoolKVCacheSaturated", "InferenceGatewayPoolQueueBacklog", "InferenceGatewayFlowControlSaturated"}},
		{"pd-stopped", []string{"InferenceGatewayPDDisaggregationStopped"}},
		{"stale-pod-metrics", []string{"InferenceGatewayDataLayerErrors"}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			span := 70 * time.Minute
			rep := backtestScenario(t, simulator.Options{Server: simulator.ServerGateway, KVConnector: true, FlowControl: true}, c.scenario, span, pack)
			fired := map[string]time.Time{}
			for _, r := range rep.Rules {
				if len(r.Firing) > 0 {
					fired[r.Name] = r.Firing[0].Start
				}
			}
			for _, a := range all {
				at, ok := fired[a]
				want := slices.Contains(c.alerts, a)
				switch {
				case want && !ok:
					t.Errorf("%s did not fire; fired: %v", a, fired)
				case want && at.Before(start.Add(scenarioOnset)):
					t.Errorf("%s fired at %s, before the scenario began", a, at.Sub(start))
				case !want && ok:
					t.Errorf("%s fired at %s on %s", a, at.Sub(start), c.scenario)
				}
			}
		})
	}
}
