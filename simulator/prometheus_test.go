package simulator

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestScrapedByRealPrometheus has Debian's Prometheus (2.42) scrape one
// simulator of each kind: every target is up with all its samples ingested
// (so the text, _created series and number spellings parse in a real
// scraper), and a kv-saturation scenario at speed 60 shows up in PromQL.
// Prometheus 3 would negotiate OpenMetrics with a real prometheus_client
// server; the simulator always answers the classic text format, which both
// versions accept.
func TestScrapedByRealPrometheus(t *testing.T) {
	testbin.Require(t, "prometheus")
	var jobs []string
	for _, server := range Servers() {
		scenario := "steady"
		if server == ServerVLLM {
			scenario = "kv-saturation"
		}
		s, err := New(Options{Server: server, Scenario: scenario, Speed: 60, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { srv.Close() })
		jobs = append(jobs, fmt.Sprintf("  - job_name: %s\n    static_configs: [{targets: [%q]}]\n", server, ln.Addr().String()))
	}
	cfg := "global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n" + strings.Join(jobs, "")
	prom := testbin.StartPrometheus(t, cfg)

	// Series are only ever added, so every scrape has at least the samples
	// a fresh simulator serves.
	want := map[string]float64{}
	for _, server := range Servers() {
		fresh, _ := newTestSim(t, Options{Server: server})
		for _, line := range strings.Split(scrapeText(t, fresh), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				want[string(server)]++
			}
		}
	}
	deadline := time.Now().Add(45 * time.Second)
	for {
		var problems []string
		for job, min := range want {
			if up := query(t, prom.URL, fmt.Sprintf(`up{job=%q}`, job)); up != 1 {
				problems = append(problems, fmt.Sprintf("%s: up=%v", job, up))
			}
			if n := query(t, prom.URL, fmt.Sprintf(`scrape_samples_scraped{job=%q}`, job)); n < min {
				problems = append(problems, fmt.Sprintf("%s: %v samples scraped, want >= %v", job, n, min))
			}
		}
		if kv := query(t, prom.URL, `max(vllm:kv_cache_usage_perc{job="vllm",engine="0"})`); !(kv > 0.95) {
			problems = append(problems, fmt.Sprintf("vllm:kv_cache_usage_perc=%v, want > 0.95", kv))
		}
		if n := query(t, prom.URL, `count(vllm:request_success_total{job="vllm"})`); n != 5 {
			problems = append(problems, fmt.Sprintf("%v finished_reason series, want 5", n))
		}
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus never saw the expected data:\n%s\nprometheus output:\n%s", strings.Join(problems, "\n"), prom.Output())
		}
		time.Sleep(250 * time.Millisecond) // polling an external process
	}
}

// query runs an instant query and returns the first sample's value, or NaN.
func query(t *testing.T, base, q string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s", q, body.Error)
	}
	if len(body.Data.Result) == 0 {
		return nan()
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %s: value %q", q, s)
	}
	return v
}

func nan() float64 { v, _ := strconv.ParseFloat("NaN", 64); return v }
