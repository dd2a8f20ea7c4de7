package server

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/web"
)

// storedNames lists the metric names the embedded TSDB holds.
func storedNames(t *testing.T, s *Server) []string {
	t.Helper()
	a, ok := s.eng.(*engineAdapter)
	if !ok || a.emb == nil {
		t.Fatalf("engine %T is not embedded", s.eng)
	}
	q, err := a.emb.Queryable().Querier(0, time.Now().Add(time.Minute).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	names, _, err := q.LabelValues(context.Background(), "__name__", nil)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// waitNames waits until the stored metric names satisfy ok, for 20s.
func waitNames(t *testing.T, s *Server, what string, ok func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		names := storedNames(t, s)
		if ok(names) {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s; stored %v", what, names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func servePaged(t *testing.T, dir string) *Server {
	t.Helper()
	s, err := New(Options{ConfigFile: filepath.Join(dir, "paged.yaml"), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

const keepRules = `groups:
  - name: running
    interval: 1s
    rules:
      - alert: VLLMRunning
        expr: max by (instance) (vllm:num_requests_running) > 1000
`

const keepMoreRules = `groups:
  - name: cache
    interval: 1s
    rules:
      - alert: VLLMCacheFull
        expr: vllm:kv_cache_usage_perc > 0.99
`

func keepConfig(keep, target string) string {
	return fmt.Sprintf(`global: {evaluation_interval: 1s}
datasource:
  type: embedded
  embedded:
    scrape_interval: 500ms
    keep: %s
    scrape_configs:
      - job_name: vllm
        static_configs: [{targets: [%q]}]
rule_files: ["*.rules.yaml"]
storage: {path: state}
web: {listen_address: "127.0.0.1:0"}
`, keep, target)
}

// TestEmbeddedKeepReferenced: with keep: referenced (the default) the
// embedded TSDB stores only the metrics the loaded rules read, plus up and
// the scrape health series; a reload that adds a rule on a new metric
// starts storing it. keep: all stores every series the server exposes.
func TestEmbeddedKeepReferenced(t *testing.T) {
	sim := startCountingSim(t, 3)
	dir := t.TempDir()
	writeFile(t, dir, "a.rules.yaml", keepRules)
	writeFile(t, dir, "paged.yaml", keepConfig("referenced", sim.addr()))
	s := servePaged(t, dir)

	names := waitNames(t, s, "running and up stored", func(n []string) bool {
		return slices.Contains(n, "vllm:num_requests_running") && slices.Contains(n, "up") && slices.Contains(n, "scrape_samples_scraped")
	})
	for _, n := range names {
		if strings.HasPrefix(n, "vllm:") && n != "vllm:num_requests_running" {
			t.Errorf("keep: referenced stored %s, which no rule reads (stored: %v)", n, names)
		}
	}

	writeFile(t, dir, "b.rules.yaml", keepMoreRules)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	waitNames(t, s, "the new rule's metric stored after the reload", func(n []string) bool {
		return slices.Contains(n, "vllm:kv_cache_usage_perc")
	})

	all := t.TempDir()
	writeFile(t, all, "a.rules.yaml", keepRules)
	writeFile(t, all, "paged.yaml", keepConfig("all", sim.addr()))
	s2 := servePaged(t, all)
	names = waitNames(t, s2, "keep: all stores the cache metric", func(n []string) bool {
		return slices.Contains(n, "vllm:kv_cache_usage_perc") && slices.Contains(n, "vllm:num_requests_running")
	})
	vllm := 0
	for _, n := range names {
		if strings.HasPrefix(n, "vllm:") {
			vllm++
		}
	}
	if vllm < 10 {
		t.Errorf("keep: all stored only %d vllm metrics: %v", vllm, names)
	}
}

// TestEmbeddedReloadScrapeConfigs: a reload applies changed
// scrape_configs as Prometheus does (a new job is scraped, a removed one
// stops) while the rest of the datasource block still needs a restart.
func TestEmbeddedReloadScrapeConfigs(t *testing.T) {
	a, b := startCountingSim(t, 5), startCountingSim(t, 6)
	dir := t.TempDir()
	writeFile(t, dir, "a.rules.yaml", keepRules)
	writeFile(t, dir, "paged.yaml", keepConfig("referenced", a.addr()))
	s := servePaged(t, dir)
	active := func() string {
		tl, _ := s.eng.(web.TargetLister)
		ts, _, _, _ := tl.Targets()
		var out []string
		for _, t := range ts {
			out = append(out, t.Job+"="+t.URL)
		}
		return strings.Join(out, ",")
	}
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for active() != want {
			if time.Now().After(deadline) {
				t.Fatalf("targets %q, want %q", active(), want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	wait("vllm=" + a.srv.URL + "/metrics")

	writeFile(t, dir, "paged.yaml", strings.Replace(keepConfig("referenced", b.addr()), "job_name: vllm", "job_name: vllm-b", 1))
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	wait("vllm-b=" + b.srv.URL + "/metrics")

	writeFile(t, dir, "paged.yaml", strings.Replace(keepConfig("referenced", b.addr()), "scrape_interval: 500ms", "scrape_interval: 1s", 1))
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "datasource changed: restart paged") {
		t.Errorf("reload of datasource.embedded.scrape_interval = %v, want a restart-required error", err)
	}
}
