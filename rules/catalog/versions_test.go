package catalog_test

import (
	"strings"
	"testing"

	"github.com/pagedhq/paged/rules/catalog"
)

func TestCompareReleases(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"0.9", "0.10", -1}, {"0.10", "0.9", 1}, {"0.11", "0.11", 0}, {"1.0", "0.30", 1}, {"0.8", "0.8.1", -1}} {
		got := catalog.CompareReleases(c.a, c.b)
		if (got < 0) != (c.want < 0) || (got > 0) != (c.want > 0) {
			t.Errorf("CompareReleases(%s, %s) = %d, want sign of %d", c.a, c.b, got, c.want)
		}
	}
}

// The versions as data say what upstream changed when (pack-review.md).
func TestExposedIn(t *testing.T) {
	c := catalog.Default()
	for _, x := range []struct {
		line, name, release string
		want                bool
	}{
		{"vllm", "vllm:inter_token_latency_seconds", "0.10", false},
		{"vllm", "vllm:inter_token_latency_seconds", "0.11", true},
		{"vllm", "vllm:time_per_output_token_seconds", "0.11", true},  // deprecated, still there
		{"vllm", "vllm:time_per_output_token_seconds", "0.12", false}, // hidden
		{"vllm", "vllm:engine_sleep_state", "0.10", false},
		{"vllm", "vllm:num_requests_running", "0.9", true}, // no history: always
		{"vllm-v0", "vllm:num_requests_swapped", "0.8", true},
		{"vllm-v0", "vllm:num_requests_swapped", "0.9", false},  // hidden
		{"vllm-v0", "vllm:cpu_cache_usage_perc", "0.10", false}, // removed
	} {
		if got := c.ExposedIn(x.line, x.name, x.release); got != x.want {
			t.Errorf("ExposedIn(%s, %s, %s) = %v, want %v", x.line, x.name, x.release, got, x.want)
		}
	}
	if rels := c.Releases("vllm"); len(rels) == 0 || rels[0] != "0.9" {
		t.Errorf("vllm releases = %v", rels)
	}
}

// Metrics added beyond the research catalogue are real catalogue entries,
// with their upstream source.
func TestAdditions(t *testing.T) {
	c := catalog.Default()
	for _, name := range []string{"sglang:num_retracted_requests_total", "vllm:nixl_num_failed_transfers_total", "vllm:nixl_num_kv_expired_reqs_total", "sglang:num_grammar_timeout_total"} {
		m := c.Metric(name)
		if m == nil || m.Type != catalog.Counter {
			t.Errorf("%s = %+v, want a counter", name, m)
		}
	}
	if m := c.Metric("vllm:nixl_num_failed_transfers_total"); m != nil && (m.Family != "vllm:nixl_num_failed_transfers" || !m.HasLabel("engine")) {
		t.Errorf("nixl counter = %+v", m)
	}
}

// The version claims of pack-review-turn3.md: a change whose release the
// source does not establish counts from the release after the last one it
// is known to be absent from.
func TestExposedInReviewTurn3(t *testing.T) {
	c := catalog.Default()
	for _, x := range []struct {
		name, release string
		want          bool
	}{
		{"vllm:engine_sleep_state", "0.11", false}, // dev mode only before PR #27867
		{"vllm:engine_sleep_state", "0.12", true},
		{"vllm:nixl_num_failed_transfers_total", "0.11", false}, // PR #26811, after 0.11.0
		{"vllm:nixl_num_failed_transfers_total", "0.12", true},
		{"vllm:nixl_num_kv_expired_reqs_total", "0.14", false}, // PR #32340, after v0.14.0rc0
		{"vllm:time_per_output_token_seconds", "0.14", false},  // hidden since 0.12, removed after 0.14
		{"vllm:num_requests_waiting_by_reason", "0.14", false}, // PR #38435, 2026-03
		{"vllm:prompt_tokens_by_source_total", "0.14", false},  // PR #33290, 2026-02
		{"vllm:prompt_tokens_recomputed_total", "0.14", false}, // added and removed after 0.14
		{"vllm:admission_rejections_total", "0.14", false},
	} {
		if got := c.ExposedIn("vllm", x.name, x.release); got != x.want {
			t.Errorf("ExposedIn(vllm, %s, %s) = %v, want %v", x.name, x.release, got, x.want)
		}
	}
	l, _ := c.LifecycleOf("vllm", "vllm:time_per_output_token_seconds")
	if l.Removed != ">0.14" || !strings.Contains(l.Source, "#32661") {
		t.Errorf("time_per_output_token_seconds lifecycle = %+v, want removed after 0.14 by #32661", l)
	}
}
