package catalog

import "strings"

// Near-miss prefixes: the ways people misspell a server's prefix. A name
// that starts with one is reported only when putting the right prefix in
// its place gives a catalogued name (or one close to it), so that other
// programs' metrics (SGLang's router exposes sgl_router_*) are left alone.
//
// Matching is case-insensitive on the prefix; the catalogue's own prefix
// never counts as a near miss.
var nearMissPrefixes = []struct {
	server string // catalogue key
	near   []string
	right  string // the prefix to write instead
}{
	{"vllm", []string{"vllm_", "vllm::", "vllm-"}, "vllm:"},
	{"sglang", []string{"sglang_", "sglang::", "sgl:", "sgl_", "sglang-"}, "sglang:"},
	{"tgi", []string{"tgi:", "tgi-", "text_generation_inference_", "text_generation_"}, "tgi_"},
	// Not nvidia_: nvidia_gpu_* (mindprince/nvidia_gpu_prometheus_exporter)
	// and nvidia_smi_* (utkuozdemir/nvidia_gpu_exporter) are other GPU
	// exporters' names, and nvidia_gpu_memory_used_bytes is no misspelt
	// nv_gpu_memory_used_bytes.
	{"triton", []string{"nv:", "triton_server_", "triton_", "triton:"}, "nv_"},
	{"dcgm_exporter", []string{"dcgm_fi_", "dcgm:", "dcgm_fi:", "dcgmfi_"}, "DCGM_FI_"},
}

// fuzzyPrefixes are misspelt prefixes specific enough to a server that a
// name carrying one is reported even when the right prefix does not give
// a catalogued name, with the closest catalogued name of the server
// (Suggest): triton_server_ and triton_inference_ name nothing but
// Triton, and SGLang writes sglang: (re-exporters that write sglang_ keep
// SGLang's names, which the exact near miss finds).
var fuzzyPrefixes = []struct {
	server      string
	near, right string
}{
	{"triton", "triton_server_", "nv_"},
	{"triton", "triton_inference_", "nv_inference_"},
	{"sglang", "sglang_", "sglang:"},
}

// NearMissResult is a name with a misspelt prefix: the name to write, the
// server and the prefix to use. Fuzzy is set when Name is the closest
// catalogued name rather than the same name with the right prefix.
type NearMissResult struct {
	Name   string
	Server *Server
	Prefix string
	Fuzzy  bool
}

// NearMiss reports whether name carries a misspelling of a known server's
// prefix, and returns the name to write instead with that server. Names
// with another colon after the prefix (level:metric:operation) are
// recording rules' and never near misses.
func (c *Catalog) NearMiss(name string) (NearMissResult, bool) {
	if name == "" || !strings.ContainsRune("vVsStTnNdD", rune(name[0])) {
		return NearMissResult{}, false // no near-miss prefix starts otherwise
	}
	lower := strings.ToLower(name)
	for _, nm := range nearMissPrefixes {
		s := c.Server(nm.server)
		if s == nil {
			continue
		}
		if s.Prefix != "" && strings.HasPrefix(name, s.Prefix) {
			continue
		}
		if r, ok := c.nearMissAs(name, lower, strings.ToLower(nm.right), nm.right, s); ok {
			return r, true
		}
		for _, near := range nm.near {
			if r, ok := c.nearMissAs(name, lower, near, nm.right, s); ok {
				return r, true
			}
		}
	}
	for _, fp := range fuzzyPrefixes {
		s := c.Server(fp.server)
		if s == nil || !strings.HasPrefix(lower, fp.near) {
			continue
		}
		rest := name[len(fp.near):]
		if rest == "" || strings.Contains(rest, ":") {
			continue
		}
		if sug := c.SuggestByWords(fp.right + rest); sug != "" {
			return NearMissResult{Name: sug, Server: s, Prefix: strings.TrimSuffix(fp.right, "inference_"), Fuzzy: true}, true
		}
	}
	return NearMissResult{}, false
}

// nearMissAs reports whether name, lower-cased in lower, is a catalogued
// name of server s written with the prefix near instead of right.
func (c *Catalog) nearMissAs(name, lower, near, right string, s *Server) (NearMissResult, bool) {
	if !strings.HasPrefix(lower, near) || strings.HasPrefix(name, right) {
		return NearMissResult{}, false
	}
	rest := name[len(near):]
	if strings.Contains(rest, ":") {
		return NearMissResult{}, false
	}
	if strings.ToUpper(right) == right {
		rest = strings.ToUpper(rest)
	}
	fixed := right + rest
	_, known := c.Resolve(fixed)
	known = known || c.dcgmFields[fixed]
	if _, notReal := c.NotReal(fixed); known || notReal {
		return NearMissResult{Name: fixed, Server: s, Prefix: right}, true
	}
	return NearMissResult{}, false
}
