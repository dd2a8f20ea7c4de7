package backtest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/internal/testbin"
)

// A quiet vLLM server (the simulator's idle scenario: 0.1 requests/s, a
// few percent of them slow) must not page: three hours of it, backtested
// with the whole vllm pack, produce no notification. The same data with
// the pack's old TTFT traffic guard (0.05 requests/s) does page, so the
// scenario is noisy enough for the test to fail if the guard regresses.
func TestQuietServerNeverPages(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm", "vllm.rules.yaml")
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	span := 3 * time.Hour
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
	fired := 0
	for _, r := range run(writeFile(t, t.TempDir(), "old-guard.rules.yaml", old)).Rules {
		if r.Name == "VLLMTimeToFirstTokenHigh" {
			fired = r.Fired
		}
	}
	if fired == 0 {
		t.Error("with the old 0.05 requests/s guard, VLLMTimeToFirstTokenHigh never fired on the idle scenario: the scenario no longer tests the guard")
	}
	t.Logf("old guard: VLLMTimeToFirstTokenHigh fired %d times in %s of an idle server; current pack: none", fired, span)
}
