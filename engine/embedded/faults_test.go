package embedded

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/rules"
	"github.com/pagedhq/paged/simulator"
)

// TestBadTargetsAreDownOthersEvaluated runs three hostile targets next to
// one good simulated vLLM server, with the real rule engine on top:
//
//   - garbage: 200 with text/plain and an HTML error page (a proxy or a
//     web UI on the metrics port),
//   - huge:    a valid exposition larger than the body size limit,
//   - hang:    never answers (longer than scrape_timeout).
//
// Each bad target is down with a reason in Targets() and up == 0 in the
// TSDB, and the engine fires TargetDown for exactly those three while it
// keeps evaluating the good one (KVCacheHigh fires for it).
func TestBadTargetsAreDownOthersEvaluated(t *testing.T) {
	_, good := startSim(t, simulator.Options{Server: simulator.ServerVLLM, Scenario: "kv-saturation", Speed: 60, Seed: 5})
	garbage := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("<html><body><h1>502 Bad Gateway</h1></body></html>\n"))
	}))
	const limit = 64 << 10
	huge := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		var b strings.Builder
		for i := 0; b.Len() <= 4*limit; i++ {
			fmt.Fprintf(&b, "filler_metric{i=\"%d\"} 1\n", i)
		}
		_, _ = w.Write([]byte(b.String()))
	}))
	release := make(chan struct{})
	hang := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release) }) // runs before the servers close

	e, err := New(Options{
		StoragePath:    t.TempDir(),
		ScrapeInterval: 500 * time.Millisecond,
		ScrapeTimeout:  300 * time.Millisecond,
		BodySizeLimit:  limit,
		ScrapeConfigs: []ScrapeConfig{
			{JobName: "vllm", StaticConfigs: []StaticConfig{{Targets: []string{good}}}},
			{JobName: "bad", StaticConfigs: []StaticConfig{{Targets: []string{garbage, huge, hang}}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}

	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(`groups:
  - name: embedded
    interval: 500ms
    rules:
      - alert: TargetDown
        expr: up == 0
      - alert: KVCacheHigh
        expr: vllm:kv_cache_usage_perc > 0.9
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		firing = map[string]bool{} // alertname/instance
	)
	eng, err := engine.New(engine.Options{
		Datasource:         e.Datasource(QueryOptions{}),
		DatasourceName:     "embedded",
		StoragePath:        t.TempDir(),
		EvaluationInterval: 500 * time.Millisecond,
		ResendDelay:        500 * time.Millisecond,
		Notify: func(_ context.Context, alerts []*rules.Alert) {
			mu.Lock()
			defer mu.Unlock()
			for _, a := range alerts {
				firing[a.Labels.Get("alertname")+"/"+a.Labels.Get("instance")] = a.EndsAt.IsZero() || a.EndsAt.After(time.Now())
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.ApplyRules([]string{rulesFile}, engine.RuleSettings{}); err != nil {
		t.Fatal(err)
	}
	run(t, e)
	engCtx, cancel := context.WithCancel(context.Background())
	engDone := make(chan error, 1)
	go func() { engDone <- eng.Run(engCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-engDone; err != nil {
			t.Errorf("engine Run: %v", err)
		}
		_ = eng.Close()
	})

	wantReason := map[string]string{
		garbage: "expected a valid start token", // the text parser's error
		huge:    "body size limit",
		hang:    "context deadline exceeded",
	}
	eventually(t, 30*time.Second, func() error {
		var problems []string
		for _, tg := range e.Targets() {
			inst := tg.Labels.Get("instance")
			if inst == good {
				if tg.Health != HealthUp || tg.LastError != "" {
					problems = append(problems, fmt.Sprintf("good target: %+v", tg))
				}
				continue
			}
			reason, known := wantReason[inst]
			if !known {
				problems = append(problems, "unexpected target "+inst)
				continue
			}
			if tg.Health != HealthDown || tg.LastError == "" || !strings.Contains(tg.LastError, reason) {
				problems = append(problems, fmt.Sprintf("%s: health %s, last error %q (want down, %q)", inst, tg.Health, tg.LastError, reason))
			}
		}
		v, err := query(e, `up == 0`)
		if err != nil {
			return err
		}
		var down []string
		for _, s := range v {
			down = append(down, s.Metric.Get("instance"))
		}
		slices.Sort(down)
		want := []string{garbage, huge, hang}
		slices.Sort(want)
		if !slices.Equal(down, want) {
			problems = append(problems, fmt.Sprintf("up == 0 for %v, want %v", down, want))
		}
		mu.Lock()
		defer mu.Unlock()
		for _, key := range []string{"TargetDown/" + garbage, "TargetDown/" + huge, "TargetDown/" + hang, "KVCacheHigh/" + good} {
			if !firing[key] {
				problems = append(problems, "not firing: "+key)
			}
		}
		if firing["TargetDown/"+good] {
			problems = append(problems, "TargetDown fired for the good target")
		}
		return errf(problems)
	})
	if t.Failed() {
		return
	}
	// The garbage target's reason is the parser's, not a transport error.
	for _, tg := range e.Targets() {
		if tg.Labels.Get("instance") == garbage && strings.Contains(tg.LastError, "deadline") {
			t.Errorf("garbage target failed on a timeout, not on parsing: %q", tg.LastError)
		}
	}
}
