package catalog

import (
	"strings"
	"testing"
)

func TestNearMiss(t *testing.T) {
	c := Default()
	for _, tc := range []struct{ in, want, prefix string }{
		{"sglang_num_running_reqs", "sglang:num_running_reqs", "sglang:"},
		{"sgl:num_queue_reqs", "sglang:num_queue_reqs", "sglang:"},
		{"SGLang:num_queue_reqs", "sglang:num_queue_reqs", "sglang:"},
		{"vllm_num_requests_running", "vllm:num_requests_running", "vllm:"},
		{"tgi:queue_size", "tgi_queue_size", "tgi_"},
		{"nv:inference_request_success", "nv_inference_request_success", "nv_"},
		{"dcgm_fi_dev_gpu_util", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_"},
		// Not near misses: the right prefix, another program's names,
		// recording rules.
		{"sglang:num_running_reqs", "", ""},
		{"sgl_router_request_errors_total", "", ""},
		{"vllm_exporter_up", "", ""},
		{"tgi:request_count:rate5m", "", ""},
		{"up", "", ""},
	} {
		got, ok := c.NearMiss(tc.in)
		if got.Name != tc.want || ok != (tc.want != "") || got.Prefix != tc.prefix {
			t.Errorf("NearMiss(%q) = %+v, %v; want %q with prefix %q", tc.in, got, ok, tc.want, tc.prefix)
		}
	}
}

// Every server with a prefix has its near misses listed.
func TestNearMissEveryServer(t *testing.T) {
	listed := map[string]bool{}
	for _, nm := range nearMissPrefixes {
		listed[nm.server] = true
		if Default().Server(nm.server) == nil {
			t.Errorf("near-miss prefixes for unknown server %q", nm.server)
		}
	}
	for _, s := range Default().Servers() {
		if s.Prefix != "" && !s.Open && !listed[s.Key] {
			t.Errorf("server %s (prefix %s) has no near-miss prefixes", s.Key, s.Prefix)
		}
	}
}

// NearMiss rejects names by their first letter: every near miss and every
// right prefix must start with one it lets through.
func TestNearMissFirstLetters(t *testing.T) {
	for _, nm := range nearMissPrefixes {
		for _, p := range append([]string{nm.right}, nm.near...) {
			if !strings.ContainsRune("vVsStTnNdD", rune(p[0])) {
				t.Errorf("prefix %q starts with a letter NearMiss skips", p)
			}
		}
	}
}
