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
	{"triton", []string{"nv:", "triton_", "triton:", "nvidia_"}, "nv_"},
	{"dcgm_exporter", []string{"dcgm_fi_", "dcgm:", "dcgm_fi:", "dcgmfi_"}, "DCGM_FI_"},
}

// NearMissResult is a name with a misspelt prefix: the name to write, the
// server and the prefix to use.
type NearMissResult struct {
	Name   string
	Server *Server
	Prefix string
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
	if _, notReal := c.NotReal(fixed); known || notReal {
		return NearMissResult{Name: fixed, Server: s, Prefix: right}, true
	}
	return NearMissResult{}, false
}
