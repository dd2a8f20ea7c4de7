package embedded

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/simulator"
)

// TestReload removes a target and adds a job while scraping: the removed
// target's series get staleness markers (they vanish from instant queries
// at once), the new job is scraped, and an invalid reload changes nothing.
func TestReload(t *testing.T) {
	_, a := startSim(t, simulator.Options{Server: simulator.ServerVLLM, Seed: 1})
	_, b := startSim(t, simulator.Options{Server: simulator.ServerVLLM, Seed: 2})
	_, c := startSim(t, simulator.Options{Server: simulator.ServerTGI, Seed: 3})
	e, err := New(Options{
		StoragePath:    t.TempDir(),
		ScrapeInterval: 200 * time.Millisecond,
		ScrapeConfigs:  []ScrapeConfig{{JobName: "vllm", StaticConfigs: []StaticConfig{{Targets: []string{a, b}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, e)
	eventually(t, 20*time.Second, func() error {
		if v, _ := query(e, `vllm:kv_cache_usage_perc`); len(v) != 2 {
			return fmt.Errorf("kv cache series before reload: %v", v)
		}
		return nil
	})

	bad := []ScrapeConfig{{JobName: "vllm", StaticConfigs: []StaticConfig{{Targets: []string{"not a target"}}}}}
	if err := e.Reload(bad); err == nil || !strings.Contains(err.Error(), `"not a target" is not host:port`) {
		t.Fatalf("invalid reload: err = %v", err)
	}
	if got := e.Options().ScrapeConfigs[0].StaticConfigs[0].Targets; len(got) != 2 {
		t.Fatalf("invalid reload changed the targets to %v", got)
	}

	if err := e.Reload([]ScrapeConfig{
		{JobName: "vllm", StaticConfigs: []StaticConfig{{Targets: []string{a}}}},
		{JobName: "tgi", StaticConfigs: []StaticConfig{{Targets: []string{c}}}},
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() error {
		var problems []string
		if v, _ := query(e, `vllm:kv_cache_usage_perc`); len(v) != 1 || v[0].Metric.Get("instance") != a {
			problems = append(problems, fmt.Sprintf("kv cache series after removing %s: %v", b, v))
		}
		if v, _ := query(e, fmt.Sprintf(`up{instance=%q}`, b)); len(v) != 0 {
			problems = append(problems, fmt.Sprintf("up of the removed target is not stale: %v", v))
		}
		if v, _ := query(e, `up{job="tgi"} == 1`); len(v) != 1 {
			problems = append(problems, fmt.Sprintf("new job tgi: up == 1 gave %v", v))
		}
		var jobs []string
		for _, tg := range e.Targets() {
			jobs = append(jobs, tg.Job+"/"+tg.Labels.Get("instance"))
		}
		if want := fmt.Sprintf("[tgi/%s vllm/%s]", c, a); fmt.Sprint(jobs) != want {
			problems = append(problems, fmt.Sprintf("Targets() = %v, want %s", jobs, want))
		}
		return errf(problems)
	})
	// The series scraped from the removed target before the reload are
	// still in the TSDB.
	if v, _ := query(e, fmt.Sprintf(`count_over_time(up{instance=%q}[1h])`, b)); len(v) != 1 || v[0].F < 1 {
		t.Errorf("history of the removed target: %v", v)
	}
}
