package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/packs"
	"github.com/pagedhq/paged/simulator"
)

// vllm010 serves a simulated vLLM V1 as release 0.10 exposed it: the
// inter-token latency histogram still under its old name,
// vllm:time_per_output_token_seconds (renamed in 0.11).
// deadOn010 lists the vllm pack's alerts that pack.yaml declares
// unavailable on 0.10 (sorted, as pack.yaml lists them in no order), and
// the rule count of the vllm and tgi packs together.
func deadOn010(t *testing.T) (dead []string, rules int) {
	t.Helper()
	for _, name := range []string{"vllm", "tgi"} {
		p, err := packs.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		rules += len(p.Alerts())
		for alert, u := range p.Unavailable {
			if slices.Contains(u.Releases, "0.10") {
				dead = append(dead, alert)
			}
		}
	}
	slices.Sort(dead)
	if len(dead) == 0 {
		t.Fatal("the vllm pack declares no alert unavailable on 0.10")
	}
	return dead, rules
}

// reportedDead is the sorted, distinct alerts of the "matches no series"
// lines of paged init's output.
func reportedDead(stdout string) []string {
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^  \S+ (\S+): .* matches no series`).FindAllStringSubmatch(stdout, -1) {
		if !slices.Contains(got, m[1]) {
			got = append(got, m[1])
		}
	}
	slices.Sort(got)
	return got
}

func vllm010(t *testing.T) *httptest.Server {
	t.Helper()
	sim, err := simulator.New(simulator.Options{Server: simulator.ServerVLLM, Version: "0.10", Start: time.Now().Add(-10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(sim.Handler())
	t.Cleanup(s.Close)
	return s
}

// simServer serves a simulator that started ten minutes ago, so that the
// series that appear with the first request (TGI's counters) are there.
func simServer(t *testing.T, kind simulator.Server) *httptest.Server {
	t.Helper()
	sim, err := simulator.New(simulator.Options{Server: kind, Start: time.Now().Add(-10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(sim.Handler())
	t.Cleanup(s.Close)
	return s
}

func hostPort(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

// runMain runs a command line in-process and returns its exit code and
// output.
func runMain(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestInitAgainstPrometheus: Debian's Prometheus scrapes a vLLM (as 0.10
// names its metrics) and a TGI simulator. paged init finds exactly those
// two, writes a paged.yaml with the vllm and tgi packs narrowed to their
// jobs that check-config accepts, and reports the pack rules that match
// nothing there (exactly those pack.yaml declares unavailable on 0.10) with
// the catalogue's reason. It never replaces
// the file without --force.
func TestInitAgainstPrometheus(t *testing.T) {
	vllm, tgi := vllm010(t), simServer(t, simulator.ServerTGI)
	prom := testbin.StartPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s}
scrape_configs:
  - job_name: vllm-prod
    static_configs: [{targets: [%q]}]
  - job_name: tgi
    static_configs: [{targets: [%q]}]
`, hostPort(vllm), hostPort(tgi)))
	waitScraped(t, prom.URL, 2)

	dead, total := deadOn010(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "paged.yaml")
	code, stdout, stderr := runMain("init", "--prometheus", prom.URL, "-o", out)
	if code != 0 {
		t.Fatalf("paged init: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		`vllm     vLLM (V1 engine): job vllm-prod (1 target); selector {job="vllm-prod"}`,
		`tgi      TGI: job tgi (1 target); selector {job="tgi"}`,
		"Wrote " + out + ": packs vllm, tgi.",
		// vLLM 0.10: no sleep-state metric yet.
		`vllm VLLMEngineAsleepWithRequestsWaiting: vllm:engine_sleep_state{job="vllm-prod",sleep_state="awake"} matches no series (counted as vllm:engine_sleep_state{job="vllm-prod"})` + "\n",
		// VLLMInterTokenLatencyHigh reads ITL or, on 0.10, TPOT: not dead.
		"vllm:inter_token_latency_seconds_bucket{job=\"vllm-prod\"}: a side of `new or old` over a renamed metric",
		fmt.Sprintf("%d of %d rules match nothing", len(dead), total),
		"tgi_request_failure{err!~\"validation|template\",job=\"tgi\"}: has no series until the first failed request",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if got := reportedDead(stdout); !slices.Equal(got, dead) {
		t.Errorf("alerts reported matching nothing %v, want the ones pack.yaml declares unavailable on 0.10 %v", got, dead)
	}

	// The file loads, with exactly those packs and selectors.
	cfg, err := config.Load(out, func(string) string { return "" })
	if err != nil {
		t.Fatalf("written file does not load: %v", err)
	}
	var got []string
	for _, p := range cfg.Packs {
		got = append(got, p.Name+" "+p.Overrides.Selector)
	}
	if strings.Join(got, "; ") != `vllm {job="vllm-prod"}; tgi {job="tgi"}` {
		t.Errorf("packs %q", got)
	}
	if cfg.Datasource.Type != config.DatasourcePrometheus || cfg.Datasource.Prometheus.URL.String() != prom.URL || cfg.Global.NoSeriesAfter != 30*time.Minute {
		t.Errorf("datasource %+v, no_series_after %v", cfg.Datasource, cfg.Global.NoSeriesAfter)
	}
	if code, stdout, _ := runMain("check-config", out); code != 0 || !strings.Contains(stdout, "valid (0 rule files, 2 packs") {
		t.Errorf("check-config: exit %d: %s", code, stdout)
	}
	checkNotifierStub(t, out)

	// An http_config for the questions (Mimir's tenant header here),
	// copied into the written datasource.
	httpFile := filepath.Join(dir, "http.yml")
	os.WriteFile(httpFile, []byte("http_headers:\n  X-Scope-OrgID:\n    values: [tenant-1]\n"), 0o644)
	withHTTP := filepath.Join(dir, "tenant.yaml")
	if code, stdout, stderr := runMain("init", "--prometheus", prom.URL, "--http-config", httpFile, "-o", withHTTP); code != 0 {
		t.Fatalf("--http-config: exit %d\n%s%s", code, stdout, stderr)
	}
	tcfg, err := config.Load(withHTTP, func(string) string { return "" })
	if err != nil {
		t.Fatalf("written file does not load: %v", err)
	}
	if h := tcfg.Datasource.Prometheus.HTTPConfig.HTTPHeaders; h == nil || len(h.Headers["X-Scope-OrgID"].Values) != 1 || h.Headers["X-Scope-OrgID"].Values[0] != "tenant-1" {
		t.Errorf("http_config not carried over: %+v", tcfg.Datasource.Prometheus.HTTPConfig)
	}

	// Never over an existing file without --force.
	before, _ := os.ReadFile(out)
	os.WriteFile(out, []byte("# mine\n"), 0o644)
	code, _, stderr = runMain("init", "--prometheus", prom.URL, "-o", out)
	if mine, _ := os.ReadFile(out); code != 2 || string(mine) != "# mine\n" || !strings.Contains(stderr, "exists: not overwritten (give --force") {
		t.Errorf("without --force: exit %d, file %q, stderr %s", code, mine, stderr)
	}
	if code, _, stderr := runMain("init", "--prometheus", prom.URL, "-o", out, "--force"); code != 0 {
		t.Errorf("--force: exit %d %s", code, stderr)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(dropDate(after), dropDate(before)) {
		t.Errorf("--force wrote another file:\n%s\nfirst:\n%s", after, before)
	}
}

// TestInitScrape: paged init --scrape reads the servers' /metrics itself
// and writes an embedded-mode configuration with those targets, each in
// the job of its server, and reports the same dead rules.
func TestInitScrape(t *testing.T) {
	vllm, tgi := vllm010(t), simServer(t, simulator.ServerTGI)
	dead := testbin.FreeAddr(t)
	out := filepath.Join(t.TempDir(), "embedded.yaml")
	code, stdout, stderr := runMain("init", "--scrape", hostPort(vllm)+","+hostPort(tgi), "--scrape", dead, "-o", out)
	if code != 0 {
		t.Fatalf("paged init --scrape: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		hostPort(vllm) + ": vllm (",
		hostPort(tgi) + ": tgi (",
		dead + ": Get ",
		`vllm VLLMEngineAsleepWithRequestsWaiting: vllm:engine_sleep_state{job="vllm",sleep_state="awake"} matches no series`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if dead, _ := deadOn010(t); !slices.Equal(reportedDead(stdout), dead) {
		t.Errorf("alerts reported matching nothing %v, want the ones pack.yaml declares unavailable on 0.10 %v", reportedDead(stdout), dead)
	}
	cfg, err := config.Load(out, func(string) string { return "" })
	if err != nil {
		t.Fatalf("written file does not load: %v", err)
	}
	e := cfg.Datasource.Embedded
	if cfg.Datasource.Type != config.DatasourceEmbedded || len(e.ScrapeConfigs) != 2 ||
		e.ScrapeConfigs[0].JobName != "vllm" || strings.Join(config.StaticTargets(e.ScrapeConfigs[0]), ",") != hostPort(vllm) ||
		e.ScrapeConfigs[1].JobName != "tgi" || strings.Join(config.StaticTargets(e.ScrapeConfigs[1]), ",") != hostPort(tgi) {
		t.Errorf("embedded datasource %+v", e)
	}
	if len(cfg.Packs) != 2 || cfg.Packs[0].Overrides.Selector != `{job="vllm"}` || cfg.Packs[1].Overrides.Selector != `{job="tgi"}` {
		t.Errorf("packs %+v", cfg.Packs)
	}
	if code, stdout, _ := runMain("check-config", out); code != 0 {
		t.Errorf("check-config: exit %d: %s", code, stdout)
	}
}

// checkNotifierStub uncomments the written notifier block: it must load
// as it is, once its token file exists.
func checkNotifierStub(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "# notifier:")
	if i < 0 {
		t.Fatalf("no notifier stub in:\n%s", text)
	}
	var lines []string
	for _, l := range strings.Split(text[i:], "\n") {
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
	}
	dir := filepath.Dir(file)
	os.MkdirAll(filepath.Join(dir, "secrets"), 0o700)
	os.WriteFile(filepath.Join(dir, "secrets", "slack-bot-token"), []byte("xoxb-test\n"), 0o600)
	stub := filepath.Join(dir, "stub.yaml")
	os.WriteFile(stub, []byte(text[:i]+strings.Join(lines, "\n")), 0o644)
	cfg, err := config.Load(stub, func(string) string { return "" })
	if err != nil {
		t.Fatalf("the notifier stub, uncommented, does not load: %v", err)
	}
	if cfg.NotifierConfig == nil {
		t.Fatal("the uncommented stub has no notifier")
	}
}

// dropDate removes the date of the header line.
func dropDate(b []byte) []byte {
	return regexp.MustCompile(` on \d{4}-\d{2}-\d{2}\.`).ReplaceAll(b, nil)
}

// waitScraped polls Prometheus (an external process) until n targets are
// up and their names are listed.
func waitScraped(t *testing.T, promURL string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(promURL + "/api/v1/query?query=" + url.QueryEscape("count(up == 1) >= "+fmt.Sprint(n)+" and count(count by (job) ({__name__=~\"vllm:.+|tgi_.+\"})) >= 2"))
		if err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			if strings.Contains(b.String(), `"value"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has not scraped %d targets within 60s", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
