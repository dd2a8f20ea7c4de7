package simulator

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/pagedhq/paged/internal/testbin"
)

// captureCase compares the simulator in one server mode with one real
// capture from ../shared/fixtures/metrics (SOURCES.md there says what each
// capture is). Every family both expose must have the same type, the same
// label names and the same bucket bounds, except the differences listed,
// each with its reason. A listed difference that no longer occurs fails
// too, so the list stays true.
type captureCase struct {
	file        string
	server      Server
	maxModelLen int // the capture's max_model_len, which sets token buckets
	minShared   int // guards against names drifting apart
	// labelDiff: family -> why the label names differ.
	labelDiff map[string]string
	// bucketDiff: family -> why the bucket bounds differ.
	bucketDiff map[string]string
	// ignoreEngine: the capture has no engine label on vLLM families
	// (hand-made V1 additions); our V1 families have it on all of them.
	ignoreEngine bool
	// bucketsSubset: the capture's buckets are trimmed; only check that
	// each of its bounds is one of ours.
	bucketsSubset bool
	// noBuckets: the capture's buckets are edited; do not compare them.
	noBuckets string
}

func captureCases() []captureCase {
	return []captureCase{
		{
			// A real vLLM 0.5.0 (V0) capture. Our V0 mode is about 0.7, the
			// last V0 layout before the deprecations.
			file: "vllm-v0-datadog-integrations-core-2024.prom", server: ServerVLLMV0, maxModelLen: 2048, minShared: 26,
			bucketDiff: map[string]string{
				"vllm:e2e_request_latency_seconds": "0.5.0 used 1 … 60 s; from 0.6/0.7 the request-latency buckets start at 0.3 s (catalog buckets_v0_0_7 vs buckets_v0_0_4)",
			},
		},
		{
			// Datadog's 2024 V0 capture with V1 families added by hand: no
			// engine label, trimmed buckets, the 2024 cache_config_info.
			// Good for names and types; labels modulo engine; buckets only
			// as a subset. Its vllm:prompt_tokens_recomputed_total existed
			// only in early 2026 (removed by vLLM PR #38709): not shared.
			file: "vllm-datadog-integrations-core-hybrid.prom", server: ServerVLLM, maxModelLen: 2048, minShared: 42,
			ignoreEngine: true, bucketsSubset: true,
			labelDiff: map[string]string{
				"vllm:cache_config_info": "the label set is CacheConfig's fields, which changed between 0.5 and V1 releases (V1 adds engine, calculate_kv_scales, prefix_caching_hash_algo, ...)",
			},
		},
		{
			// A real TGI v2/v3 router capture; its server ran with
			// max_input_tokens 511 and max_total_tokens 512.
			file: "tgi-datadog-integrations-core.prom", server: ServerTGI, maxModelLen: 512, minShared: 24,
		},
		{
			// Claims SGLang v0.5.10.post1 but has one finite bucket per
			// histogram and edited HELP texts: labels and types only. Its
			// sglang:engine_startup_time and engine_load_weights_time are
			// sglang:startup_time_seconds{phase} at sgl-project/sglang@1025622f,
			// which the simulator follows: not shared.
			file: "sglang-datadog-integrations-core.prom", server: ServerSGLang, maxModelLen: 8192, minShared: 21,
			noBuckets: "edited fixture: every histogram has a single made-up finite bucket",
		},
		{
			// The real late-2024 SGLang capture from SGLang's docs: model_name
			// only (no tp_rank yet) and the first collector's buckets.
			file: "sglang-sglang-docs-production-metrics.prom", server: ServerSGLang, maxModelLen: 8192, minShared: 10,
			labelDiff: map[string]string{
				"sglang:num_running_reqs":        "scheduler metrics gained tp_rank after 2024 (2026 capture)",
				"sglang:num_queue_reqs":          "scheduler metrics gained tp_rank after 2024",
				"sglang:num_used_tokens":         "scheduler metrics gained tp_rank after 2024",
				"sglang:token_usage":             "scheduler metrics gained tp_rank after 2024",
				"sglang:cache_hit_rate":          "scheduler metrics gained tp_rank after 2024",
				"sglang:gen_throughput":          "scheduler metrics gained tp_rank after 2024",
				"sglang:prompt_tokens_total":     "scheduler metrics gained tp_rank after 2024",
				"sglang:generation_tokens_total": "scheduler metrics gained tp_rank after 2024",
			},
			bucketDiff: map[string]string{
				"sglang:time_to_first_token_seconds": "2024 buckets 0.001 … 30 s; the late-2025 collector uses 0.1 … 400 s",
				"sglang:e2e_request_latency_seconds": "2024 buckets 0.3 … 60 s; the late-2025 collector uses 0.1 … 2400 s",
			},
		},
	}
}

func TestMatchesRealCaptures(t *testing.T) {
	dir := filepath.Join(testbin.SharedDir(t), "fixtures", "metrics")
	for _, c := range captureCases() {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatalf("capture missing: %v", err)
			}
			capture := parseText(t, string(raw))
			// Run long enough under errors that families created on first
			// use (TGI failures, HTTP 5xx) exist.
			s, clk := newTestSim(t, Options{Server: c.server, Seed: 7, MaxModelLen: c.maxModelLen})
			clk.advance(10 * time.Minute)
			if err := s.SetScenario("error-burst"); err != nil {
				t.Fatal(err)
			}
			clk.advance(10 * time.Minute)
			ours := scrape(t, s)

			var shared []string
			seenLabel, seenBucket := map[string]bool{}, map[string]bool{}
			for name, cmf := range capture {
				omf := ours[name]
				if omf == nil {
					continue
				}
				shared = append(shared, name)
				if cmf.GetType() != omf.GetType() {
					t.Errorf("%s: type %s in the capture, %s here", name, cmf.GetType(), omf.GetType())
				}
				cl, ol := labelNames(cmf), labelNames(omf)
				if c.ignoreEngine {
					ol = slices.DeleteFunc(ol, func(l string) bool { return l == "engine" })
				}
				if !slices.Equal(cl, ol) {
					if why, ok := c.labelDiff[name]; ok {
						seenLabel[name] = true
						t.Logf("%s: labels %v vs %v, expected: %s", name, cl, ol, why)
					} else {
						t.Errorf("%s: label names %v in the capture, %v here", name, cl, ol)
					}
				}
				if cmf.GetType() != dto.MetricType_HISTOGRAM || c.noBuckets != "" {
					continue
				}
				cb, ob := bounds(cmf), bounds(omf)
				same := slices.Equal(cb, ob)
				if c.bucketsSubset {
					same = true
					for _, b := range cb {
						same = same && slices.Contains(ob, b)
					}
				}
				if !same {
					if why, ok := c.bucketDiff[name]; ok {
						seenBucket[name] = true
						t.Logf("%s: buckets differ, expected: %s", name, why)
					} else {
						t.Errorf("%s: buckets %s in the capture, %s here", name, formatBounds(cb), formatBounds(ob))
					}
				}
			}
			sort.Strings(shared)
			t.Logf("%d shared families: %s", len(shared), strings.Join(shared, " "))
			if len(shared) < c.minShared {
				t.Errorf("only %d families shared with the capture, want at least %d", len(shared), c.minShared)
			}
			for name := range c.labelDiff {
				if !seenLabel[name] {
					t.Errorf("%s: listed as a label difference but labels match (or the family is gone); update the list", name)
				}
			}
			for name := range c.bucketDiff {
				if !seenBucket[name] {
					t.Errorf("%s: listed as a bucket difference but buckets match (or the family is gone); update the list", name)
				}
			}
		})
	}
}

// labelNames is the sorted union of label names of a family, le and
// quantile excluded.
func labelNames(mf *dto.MetricFamily) []string {
	set := map[string]bool{}
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			set[lp.GetName()] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func bounds(mf *dto.MetricFamily) []float64 {
	if len(mf.GetMetric()) == 0 {
		return nil
	}
	var out []float64
	for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
		out = append(out, b.GetUpperBound())
	}
	return out
}
