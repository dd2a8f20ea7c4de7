package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// buildPaged builds cmd/paged as `go install` would and returns the binary.
func buildPaged(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	bin := filepath.Join(t.TempDir(), "paged")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/paged")
	cmd.Dir = testbin.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// emptyDir is a fresh directory outside the repository, and the check that
// it is.
func emptyDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rel, err := filepath.Rel(testbin.RepoRoot(t), dir)
	if err != nil || !strings.HasPrefix(rel, "..") {
		t.Fatalf("%s is inside the repository", dir)
	}
	return dir
}

// What a new user gets from `go install`: the built binary alone, in an
// empty directory outside the repository. `paged packs list` lists every
// pack; a paged.yaml that loads the built-in vllm pack with every override
// key runs (scraping `paged simulate` itself), and /api/v1/rules shows the
// rewritten selectors, thresholds, for, severities and labels and no
// disabled rule; the built-in runbooks answer.
func TestBinaryOutsideRepository(t *testing.T) {
	bin := buildPaged(t)
	dir := emptyDir(t)

	cmd := exec.Command(bin, "packs", "list")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("paged packs list: %v\n%s", err, out)
	}
	for _, want := range []string{`(?m)^vllm +vllm +0\.9\+ +24 `, `(?m)^vllm-v0 +`, `(?m)^tgi +`, `(?m)^sglang +`, `(?m)^triton +`, `(?m)^dcgm +`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("paged packs list lacks %s:\n%s", want, out)
		}
	}

	simAddr := testbin.FreeAddr(t)
	testbin.Start(t, bin, dir, simAddr, "/metrics", "simulate", "--listen", simAddr)
	web := testbin.FreeAddr(t)
	config := fmt.Sprintf(`datasource:
  type: embedded
  embedded:
    scrape_interval: 1s
    scrape_configs:
      - job_name: vllm-prod
        static_configs: [{targets: [%q]}]
packs:
  - name: vllm
    selector: '{job="vllm-prod"}'
    set: {VLLMKVCacheSaturated: 0.9, VLLMTimeToFirstTokenHigh: 3}
    for: {VLLMKVCacheSaturated: 5m}
    severity: {VLLMQueueBacklog: critical}
    labels: {team: llm-platform}
    disable: [VLLMKVCacheOverprovisioned]
storage: {path: data}
web: {listen_address: %q}
`, simAddr, web)
	if err := os.WriteFile(filepath.Join(dir, "paged.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testbin.Start(t, bin, dir, web, "/-/ready", "run", "--config", "paged.yaml")

	body := get(t, p.URL+"/api/v1/rules")
	var ans struct {
		Data struct {
			Groups []struct {
				File  string `json:"file"`
				Rules []struct {
					Name     string            `json:"name"`
					Query    string            `json:"query"`
					Duration float64           `json:"duration"`
					Labels   map[string]string `json:"labels"`
					Health   string            `json:"health"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatal(err)
	}
	type rule struct {
		query    string
		duration float64
		labels   map[string]string
	}
	got := map[string]rule{}
	for _, g := range ans.Data.Groups {
		for _, r := range g.Rules {
			if g.File != "pack:vllm" {
				t.Errorf("group file %q, want pack:vllm", g.File)
			}
			got[r.Name] = rule{r.Query, r.Duration, r.Labels}
			if strings.Contains(r.Query, `job="vllm"`) || !strings.Contains(r.Query, `job="vllm-prod"`) || r.Labels["team"] != "llm-platform" {
				t.Errorf("%s: query %s, labels %v", r.Name, r.Query, r.Labels)
			}
		}
	}
	if len(got) != 23 {
		t.Errorf("%d rules, want the pack's 24 less the disabled one", len(got))
	}
	if _, ok := got["VLLMKVCacheOverprovisioned"]; ok {
		t.Error("the disabled VLLMKVCacheOverprovisioned is loaded")
	}
	kv, ttft, queue := got["VLLMKVCacheSaturated"], got["VLLMTimeToFirstTokenHigh"], got["VLLMQueueBacklog"]
	if kv.query != `max by (model_name, instance, job) (vllm:kv_cache_usage_perc{job="vllm-prod"}) > 0.9` || kv.duration != 300 {
		t.Errorf("VLLMKVCacheSaturated: %q for %vs", kv.query, kv.duration)
	}
	if !strings.Contains(ttft.query, `[5m]))) > 3 and`) || ttft.duration != 600 {
		t.Errorf("VLLMTimeToFirstTokenHigh: %q for %vs", ttft.query, ttft.duration)
	}
	if queue.labels["severity"] != "critical" || kv.labels["severity"] != "warning" {
		t.Errorf("severities: queue %q, kv %q", queue.labels["severity"], kv.labels["severity"])
	}
	if rb := get(t, p.URL+"/runbooks/vllm/VLLMQueueBacklog.md"); !strings.HasPrefix(rb, "# VLLMQueueBacklog") {
		t.Errorf("built-in runbook: %.80q", rb)
	}
}

// `paged demo` with the built binary alone, in an empty directory outside
// the repository: the KV-cache, TTFT and error-rate alerts fire and
// resolve, and a printed runbook link answers with the runbook.
func TestBinaryDemoOutsideRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes about a minute; run without -short")
	}
	bin := buildPaged(t)
	dir := emptyDir(t)
	out := &testbin.SyncBuffer{}
	cmd := exec.Command(bin, "demo", "--forever", "--listen", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(out.String(), "Still running (--forever)") {
		select {
		case <-exited:
			t.Fatalf("paged demo exited (%v) before its summary:\n%s", waitErr, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no summary after 3 minutes:\n%s", out.String())
		}
		time.Sleep(200 * time.Millisecond) // an external process: poll its output
	}
	text := out.String()
	if !strings.Contains(text, "config        built-in examples/demo.yaml") || !regexp.MustCompile(`(?m)^OK: `).MatchString(text) {
		t.Errorf("demo header or verdict:\n%s", text)
	}
	for _, name := range []string{"VLLMKVCacheSaturated", "VLLMTimeToFirstTokenHigh", "VLLMHighErrorRate"} {
		for _, state := range []string{"FIRING  ", "RESOLVED"} {
			if !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  ` + state + `  \S+\s+` + name + `\b`).MatchString(text) {
				t.Errorf("no %s line for %s", strings.TrimSpace(state), name)
			}
		}
	}
	link := regexp.MustCompile(`runbook: (http://127\.0\.0\.1:\d+/runbooks/vllm/VLLMHighErrorRate\.md)`).FindStringSubmatch(text)
	if link == nil {
		t.Fatalf("no runbook link for VLLMHighErrorRate:\n%s", text)
	}
	want, err := os.ReadFile(filepath.Join(testbin.RepoRoot(t), "examples", "runbooks", "vllm", "VLLMHighErrorRate.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, link[1]); got != string(want) {
		t.Errorf("GET %s: %d bytes, not the runbook (%d bytes)", link[1], len(got), len(want))
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("paged demo after Ctrl-C: %v\n%s", waitErr, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("paged demo did not stop after SIGINT")
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", url, resp.StatusCode, err, b)
	}
	return string(b)
}

// TestVersionStamped: the release build's -X main.version reaches
// `paged version` (scripts/release.sh and the Dockerfile stamp it so).
func TestVersionStamped(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	bin := filepath.Join(t.TempDir(), "paged")
	// Only the link step differs from a plain build (release builds add
	// -trimpath and CGO_ENABLED=0, which would rebuild every dependency).
	cmd := exec.Command(goBin, "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, "./cmd/paged")
	cmd.Dir = testbin.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "paged v9.8.7-test ") || !strings.Contains(string(out), runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("paged version = %q, %v", out, err)
	}
}
