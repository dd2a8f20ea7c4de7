package backtest_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/simulator"
)

// Each inference-gateway alert fires when the pack is backtested over the
// simulated endpoint picker in the scenario written for it, not during
// the steady lead-in, and the other alerts of the pack stay quiet where
// the scenario gives them no reason.
func TestGatewayScenariosFireAlerts(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "inference-gateway", "inference-gateway.rules.yaml")
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	all := []string{"InferenceGatewayEPPDown", "InferenceGatewayNoReadyPods", "InferenceGatewayHighErrorRate",
		"InferenceGatewayPoolKVCacheSaturated", "InferenceGatewayPoolQueueBacklog", "InferenceGatewaySchedulingFailures",
		"InferenceGatewayPDDisaggregationStopped"}
	for _, c := range []struct {
		scenario string
		alerts   []string
	}{
		{"steady", nil},
		{"down", []string{"InferenceGatewayEPPDown"}},
		{"no-ready-pods", []string{"InferenceGatewayNoReadyPods", "InferenceGatewayHighErrorRate", "InferenceGatewaySchedulingFailures"}},
		{"error-burst", []string{"InferenceGatewayHighErrorRate", "InferenceGatewaySchedulingFailures"}},
		{"kv-saturation", []string{"InferenceGatewayPoolKVCacheSaturated", "InferenceGatewayPoolQueueBacklog"}},
		{"pd-stopped", []string{"InferenceGatewayPDDisaggregationStopped"}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			span := 70 * time.Minute
			db := recordWith(t, simulator.Options{Server: simulator.ServerGateway, KVConnector: true}, t.TempDir(), start, span, 15*time.Second,
				[]phase{{0, "steady"}, {20 * time.Minute, c.scenario}})
			defer db.Close()
			rep, err := backtest.Run(context.Background(), backtest.Options{
				Source:             backtest.NewQueryable(newPromQL(), db),
				RuleFiles:          []string{pack},
				From:               start.Add(5 * time.Minute),
				To:                 start.Add(span),
				EvaluationInterval: 30 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			fired := map[string]time.Time{}
			for _, r := range rep.Rules {
				if r.Error != "" || r.EvalErrors > 0 {
					t.Errorf("%s: error %q, %d failed evaluations", r.Name, r.Error, r.EvalErrors)
				}
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
				case want && at.Before(start.Add(20*time.Minute)):
					t.Errorf("%s fired at %s, before the scenario began", a, at.Sub(start))
				case !want && ok:
					t.Errorf("%s fired at %s on %s", a, at.Sub(start), c.scenario)
				}
			}
		})
	}
}
