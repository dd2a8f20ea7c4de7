package embedded

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/simulator"
)

// TestScrapeSimulatorThroughDatasource scrapes one simulated vLLM server
// and evaluates PromQL over the scraped data through the engine's
// datasource: the synthetic series are there, the target is up, and when
// the server goes down the target turns down with the reason and its series
// go stale (Prometheus 3 staleness), so an instant query no longer sees them.
func TestScrapeSimulatorThroughDatasource(t *testing.T) {
	sim, addr := startSim(t, simulator.Options{Server: simulator.ServerVLLM, Scenario: "kv-saturation", Speed: 60, Seed: 3})
	e, err := New(Options{
		StoragePath:    t.TempDir(),
		ScrapeInterval: 200 * time.Millisecond,
		ScrapeConfigs: []ScrapeConfig{{
			JobName:       "vllm",
			StaticConfigs: []StaticConfig{{Targets: []string{addr}, Labels: map[string]string{"cluster": "lab"}}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, e)

	eventually(t, 20*time.Second, func() error {
		var problems []string
		want := map[string]string{
			fmt.Sprintf(`up{job="vllm",instance=%q,cluster="lab"}`, addr): "== 1",
			`scrape_samples_scraped{job="vllm"}`:                          "> 100",
			`scrape_duration_seconds{job="vllm"}`:                         "> 0",
			`max(vllm:kv_cache_usage_perc{job="vllm",cluster="lab"})`:     "> 0.9",
			`count(vllm:request_success_total{job="vllm"})`:               "== 5",
		}
		for expr, cond := range want {
			v, err := query(e, expr+" "+cond)
			if err != nil {
				t.Fatalf("query %s: %v", expr, err)
			}
			if len(v) != 1 {
				problems = append(problems, fmt.Sprintf("%s %s: got %v", expr, cond, v))
			}
		}
		return errf(problems)
	})

	ts := e.Targets()
	if len(ts) != 1 {
		t.Fatalf("Targets() = %+v, want one", ts)
	}
	got := ts[0]
	if got.Job != "vllm" || got.URL != "http://"+addr+"/metrics" || got.Health != HealthUp || got.LastError != "" ||
		got.LastScrape.IsZero() || got.LastScrapeDuration <= 0 || got.Labels.Get("cluster") != "lab" || got.Labels.Get("instance") != addr {
		t.Errorf("Targets()[0] = %+v", got)
	}

	if err := sim.SetScenario("down"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() error {
		ts := e.Targets()
		if ts[0].Health != HealthDown || !strings.Contains(ts[0].LastError, "503") {
			return fmt.Errorf("target after the server went down: %+v", ts[0])
		}
		if v, _ := query(e, `up{job="vllm"} == 0`); len(v) != 1 {
			return fmt.Errorf("up == 0: got %v", v)
		}
		if v, _ := query(e, `vllm:kv_cache_usage_perc`); len(v) != 0 {
			return fmt.Errorf("series of a down target are not stale: %v", v)
		}
		return nil
	})
}
