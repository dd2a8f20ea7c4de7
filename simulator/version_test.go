package simulator

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Options.Version serves what that release exposes: the catalogue's
// versions as data decide, and an unknown release is an error.
func TestVersion(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := func(srv Server, version string) string {
		t.Helper()
		s, err := New(Options{Server: srv, Version: version, Seed: 3, Start: start, Now: func() time.Time { return start }})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := s.WriteMetricsAt(&b, start.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, c := range []struct {
		srv              Server
		version          string
		present, missing []string
	}{
		{ServerVLLM, "0.10", []string{"vllm:time_per_output_token_seconds_bucket", "vllm:kv_cache_usage_perc"}, []string{"vllm:inter_token_latency_seconds_bucket", "vllm:engine_sleep_state"}},
		// 0.11.0 has the sleep-state gauge only in dev mode (PR #27867 came after it).
		{ServerVLLM, "0.11", []string{"vllm:time_per_output_token_seconds_bucket", "vllm:inter_token_latency_seconds_bucket"}, []string{"vllm:engine_sleep_state"}},
		{ServerVLLM, "0.12", []string{"vllm:inter_token_latency_seconds_bucket", "vllm:engine_sleep_state"}, []string{"vllm:time_per_output_token_seconds_bucket"}},
		// The 2026 additions came after 0.14.0 (PRs #33290, #38435, #55812).
		{ServerVLLM, "0.14", []string{"vllm:engine_sleep_state"}, []string{"vllm:time_per_output_token_seconds_bucket", "vllm:num_requests_waiting_by_reason", "vllm:prompt_tokens_by_source_total", "vllm:admission_rejections_total"}},
		{ServerVLLM, "", []string{"vllm:inter_token_latency_seconds_bucket", "vllm:admission_rejections_total", "vllm:num_requests_waiting_by_reason"}, []string{"vllm:time_per_output_token_seconds_bucket", "vllm:prompt_tokens_recomputed_total"}},
		{ServerVLLMV0, "0.8", []string{"vllm:num_requests_swapped", "vllm:cpu_cache_usage_perc"}, nil},
		{ServerVLLMV0, "0.9", nil, []string{"vllm:num_requests_swapped", "vllm:cpu_cache_usage_perc"}},
		{ServerVLLMV0, "0.5", []string{"vllm:num_preemptions_total"}, []string{"vllm:request_queue_time_seconds_bucket"}},
	} {
		text := out(c.srv, c.version)
		for _, p := range c.present {
			if !strings.Contains(text, "\n"+p+"{") {
				t.Errorf("%s %q: %s missing", c.srv, c.version, p)
			}
		}
		for _, m := range c.missing {
			if strings.Contains(text, "\n"+m+"{") {
				t.Errorf("%s %q: %s served, but that release does not expose it", c.srv, c.version, m)
			}
		}
	}
	if _, err := New(Options{Server: ServerVLLM, Version: "9.9"}); err == nil || !strings.Contains(err.Error(), "0.11") {
		t.Errorf("unknown version: err = %v, want one listing the known releases", err)
	}
}
