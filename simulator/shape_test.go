package simulator

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// sampleKeys returns each sample line up to its value: name and labels
// exactly as written (label order, le spelling), and the HELP/TYPE lines.
func sampleKeys(text string) map[string]bool {
	keys := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "# HELP "), strings.HasPrefix(line, "# TYPE "):
			keys[line] = true
		case strings.HasPrefix(line, "#"):
		default:
			if i := strings.LastIndexByte(line, ' '); i > 0 {
				keys[line[:i]] = true
			}
		}
	}
	return keys
}

// TestSameTextShapeAsCaptures compares line by line: with the capture's
// model name and context length, every sample line of the capture (name,
// label order, le spelling) and every HELP and TYPE line appears verbatim in
// the simulator's output, except the lines of the families listed.
func TestSameTextShapeAsCaptures(t *testing.T) {
	dir := filepath.Join(testbin.SharedDir(t), "fixtures", "metrics")
	for _, c := range []struct {
		file        string
		server      Server
		model       string
		maxModelLen int
		skip        map[string]string // family prefix -> why its lines differ
		headersOnly bool              // compare HELP and TYPE lines only
	}{
		{
			file: "tgi-datadog-integrations-core.prom", server: ServerTGI, maxModelLen: 512,
		},
		{
			file: "vllm-v0-datadog-integrations-core-2024.prom", server: ServerVLLMV0, model: "facebook/opt-125m", maxModelLen: 2048,
			skip: map[string]string{
				"vllm:request_params_best_of":        "removed before 0.7",
				"vllm:avg_":                          "removed in 0.7.1",
				"# HELP vllm:avg_":                   "removed in 0.7.1",
				"# TYPE vllm:avg_":                   "removed in 0.7.1",
				"# HELP vllm:request_params_best_of": "removed before 0.7",
				"# TYPE vllm:request_params_best_of": "removed before 0.7",
				"# HELP vllm:cache_config_info":      "0.5.0 wrote \"information of cache_config\"; later \"Information of the LLMEngine CacheConfig\"",
				"python_info":                        "different Python version",
				"vllm:cache_config_info{":            "CacheConfig values of that deployment (num_cpu_blocks, enable_prefix_caching)",
			},
		},
		{
			// Hand-extended: no engine label, so only HELP and TYPE lines
			// can match; the V0-only families it still has are gone in V1.
			file: "vllm-datadog-integrations-core-hybrid.prom", server: ServerVLLM, maxModelLen: 2048, headersOnly: true,
			skip: map[string]string{
				"# HELP vllm:cache_config_info":              "2024 help text",
				"# HELP vllm:num_requests_running":           "V0 help text (V1: \"Number of requests in model execution batches.\")",
				"# HELP vllm:e2e_request_latency_seconds":    "V0 help text (V1 says \"e2e\")",
				"# HELP vllm:avg_":                           "removed in 0.7.1",
				"# TYPE vllm:avg_":                           "removed in 0.7.1",
				"# HELP vllm:request_params_best_of":         "removed before 0.7",
				"# TYPE vllm:request_params_best_of":         "removed before 0.7",
				"# HELP vllm:cpu_cache_usage_perc":           "V0 only, removed in 0.10",
				"# TYPE vllm:cpu_cache_usage_perc":           "V0 only, removed in 0.10",
				"# HELP vllm:num_requests_swapped":           "V0 only, removed in 0.10",
				"# TYPE vllm:num_requests_swapped":           "V0 only, removed in 0.10",
				"# HELP vllm:gpu_cache_usage_perc":           "renamed kv_cache_usage_perc, removed in 0.12",
				"# TYPE vllm:gpu_cache_usage_perc":           "renamed kv_cache_usage_perc, removed in 0.12",
				"# HELP vllm:time_per_output_token_seconds":  "renamed inter_token_latency_seconds, removed 2026-01",
				"# TYPE vllm:time_per_output_token_seconds":  "renamed inter_token_latency_seconds, removed 2026-01",
				"# HELP vllm:prompt_tokens_recomputed_total": "removed by PR #38709 (2026-04)",
				"# TYPE vllm:prompt_tokens_recomputed_total": "removed by PR #38709 (2026-04)",
			},
		},
	} {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			s, clk := newTestSim(t, Options{Server: c.server, Model: c.model, MaxModelLen: c.maxModelLen, Seed: 2})
			clk.advance(time.Hour)
			ours := sampleKeys(scrapeText(t, s))
			var missing []string
			matched, used := 0, map[string]bool{}
		lines:
			for key := range sampleKeys(string(raw)) {
				if c.headersOnly && !strings.HasPrefix(key, "# ") {
					continue
				}
				if ours[key] {
					matched++
					continue
				}
				for prefix := range c.skip {
					if strings.HasPrefix(key, prefix) {
						used[prefix] = true
						continue lines
					}
				}
				missing = append(missing, key)
			}
			for prefix := range c.skip {
				if !used[prefix] {
					t.Errorf("skip %q is not needed any more; remove it", prefix)
				}
			}
			sort.Strings(missing)
			for _, k := range missing {
				t.Errorf("capture line not in our output: %s", k)
			}
			t.Logf("%d capture lines matched verbatim", matched)
		})
	}
}
