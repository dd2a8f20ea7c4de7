package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/simulator"
)

// countingSim is a simulated vLLM server that counts its scrapes.
type countingSim struct {
	srv     *httptest.Server
	scrapes atomic.Int64
}

func startCountingSim(t *testing.T, seed uint64) *countingSim {
	t.Helper()
	sim, err := simulator.New(simulator.Options{Server: simulator.ServerVLLM, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	c := &countingSim{}
	h := sim.Handler()
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			c.scrapes.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *countingSim) addr() string { return strings.TrimPrefix(c.srv.URL, "http://") }

// writeSDFile writes a file_sd file atomically (temp file and rename), as
// a deployment tool would.
func writeSDFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

type targetsAnswer struct {
	Data struct {
		ActiveTargets []struct {
			DiscoveredLabels map[string]string `json:"discoveredLabels"`
			Labels           map[string]string `json:"labels"`
			ScrapePool       string            `json:"scrapePool"`
			ScrapeURL        string            `json:"scrapeUrl"`
			LastError        string            `json:"lastError"`
			Health           string            `json:"health"`
			ScrapeInterval   string            `json:"scrapeInterval"`
			ScrapeTimeout    string            `json:"scrapeTimeout"`
		} `json:"activeTargets"`
		DroppedTargets []struct {
			DiscoveredLabels map[string]string `json:"discoveredLabels"`
		} `json:"droppedTargets"`
	} `json:"data"`
}

// targetsSummary renders the fields of /api/v1/targets that must match
// between paged and Prometheus: pool, URL, health, intervals, target
// labels and discovered labels, one line per target, sorted.
func targetsSummary(body string) (string, error) {
	var a targetsAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		return "", err
	}
	var lines []string
	for _, t := range a.Data.ActiveTargets {
		for _, l := range prometheus3TargetLabels {
			delete(t.DiscoveredLabels, l)
		}
		lines = append(lines, fmt.Sprintf("%s %s %s %s/%s labels=%v discovered=%v", t.ScrapePool, t.ScrapeURL, t.Health, t.ScrapeInterval, t.ScrapeTimeout, t.Labels, t.DiscoveredLabels))
	}
	for _, t := range a.Data.DroppedTargets {
		lines = append(lines, fmt.Sprintf("dropped discovered=%v", t.DiscoveredLabels))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), nil
}

// prometheus3TargetLabels are the discovered labels Prometheus 3 (which
// paged embeds) adds to every target and Debian's Prometheus 2.42 does
// not know; the comparison follows the newer behaviour and leaves them out.
var prometheus3TargetLabels = []string{
	"__always_scrape_classic_histograms__",
	"__convert_classic_histograms_to_nhcb__",
	"__scrape_native_histograms__",
}

func getText(t *testing.T, url string) string {
	t.Helper()
	_, body := getBody(t, url)
	return body
}

// TestEmbeddedFileSDAndRelabel: embedded mode with a verbatim scrape
// config (file_sd_configs and relabel_configs renaming team_name to team)
// follows targets added and removed at run time: a new simulator is
// scraped within one refresh, a removed one is no longer scraped, the
// relabelled label is on the alerts, and /api/v1/targets answers as
// Debian's Prometheus does given the same scrape config and files.
func TestEmbeddedFileSDAndRelabel(t *testing.T) {
	a, b := startCountingSim(t, 1), startCountingSim(t, 2)
	sd := t.TempDir()
	group := func(s *countingSim) string {
		return fmt.Sprintf(`[{"targets": [%q], "labels": {"team_name": "serving"}}]`, s.addr())
	}
	writeSDFile(t, filepath.Join(sd, "a.json"), group(a))
	scrape := fmt.Sprintf(`- job_name: vllm
  scrape_interval: 1s
  file_sd_configs:
    - files: [%q]
      refresh_interval: 1s
  relabel_configs:
    - {source_labels: [team_name], target_label: team}
    - {regex: team_name, action: labeldrop}
`, filepath.Join(sd, "*.json"))

	dir := t.TempDir()
	writeFile(t, dir, "alerts.rules.yaml", `groups:
  - name: running
    interval: 1s
    rules:
      - alert: VLLMRunning
        expr: vllm:num_requests_running >= 0
        labels: {severity: info}
`)
	writeFile(t, dir, "paged.yaml", `global: {evaluation_interval: 1s}
datasource:
  type: embedded
  embedded:
    scrape_interval: 1s
    scrape_configs:
      `+strings.ReplaceAll(strings.TrimSpace(scrape), "\n", "\n      ")+`
rule_files: [alerts.rules.yaml]
storage: {path: state}
`)
	base, _ := runPaged(t, dir, io.Discard, io.Discard)
	targetUp := func(s *countingSim) func(int, string) bool {
		return func(code int, body string) bool {
			return code == 200 && strings.Contains(body, `"scrapeUrl":"`+s.srv.URL+`/metrics"`) && strings.Contains(body, `"health":"up"`)
		}
	}
	poll(t, base+"/api/v1/targets", targetUp(a))

	// The relabelled label reaches the alert; team_name does not.
	_, alerts := poll(t, base+"/api/v1/alerts", func(code int, body string) bool {
		return strings.Contains(body, `"instance":"`+a.addr()+`"`) && strings.Contains(body, `"state":"firing"`)
	})
	if !strings.Contains(alerts, `"team":"serving"`) || strings.Contains(alerts, "team_name") {
		t.Errorf("alerts lack the relabelled team label: %s", alerts)
	}

	// A target added at run time is scraped within one refresh (1s),
	// give or take the scrape interval and the managers' 1s ticks.
	added := time.Now()
	writeSDFile(t, filepath.Join(sd, "b.json"), group(b))
	poll(t, base+"/api/v1/targets", targetUp(b))
	for b.scrapes.Load() == 0 {
		if time.Since(added) > 10*time.Second {
			t.Fatal("the added simulator was not scraped within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("added target scraped %s after its file was written", time.Since(added).Round(time.Millisecond))

	// A removed target is no longer scraped.
	if err := os.Remove(filepath.Join(sd, "a.json")); err != nil {
		t.Fatal(err)
	}
	poll(t, base+"/api/v1/targets", func(code int, body string) bool {
		return code == 200 && !strings.Contains(body, a.srv.URL) && strings.Contains(body, b.srv.URL)
	})
	before := a.scrapes.Load()
	time.Sleep(3 * time.Second) // three scrape intervals
	if n := a.scrapes.Load() - before; n > 1 {
		t.Errorf("the removed simulator was scraped %d more times", n)
	}

	// Debian's Prometheus, same scrape config, same files.
	prom := testbin.StartPrometheus(t, "global: {scrape_interval: 1s}\nscrape_configs:\n"+scrape)
	want := ""
	poll(t, prom.URL+"/api/v1/targets", func(code int, body string) bool {
		s, err := targetsSummary(body)
		want = s
		return err == nil && targetUp(b)(code, body)
	})
	got, err := targetsSummary(getText(t, base+"/api/v1/targets"))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("/api/v1/targets differ\npaged:      %s\nprometheus: %s", got, want)
	}
	if !strings.Contains(got, "team:serving") || !strings.Contains(got, "__meta_filepath:"+filepath.Join(sd, "b.json")) {
		t.Errorf("targets lack the relabelled label or the file's path: %s", got)
	}
}
