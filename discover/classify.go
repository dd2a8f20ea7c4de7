package discover

import (
	"slices"
	"strings"
	"sync"

	"github.com/pagedhq/paged/rules/catalog"
)

// Server kinds, named after the built-in pack that fits them.
const (
	PackVLLM   = "vllm"
	PackVLLMV0 = "vllm-v0"
	PackTGI    = "tgi"
	PackSGLang = "sglang"
	PackTriton = "triton"
	PackDCGM   = "dcgm"
	// PackGateway is an inference gateway's endpoint picker (Gateway API
	// Inference Extension, llm-d).
	PackGateway = "inference-gateway"
)

// family is a kind of server, told by the prefix of its metric names.
type family struct {
	prefix string   // the names that reveal the server
	packs  []string // the packs it may need (vLLM: V1 or V0)
	title  string
}

// families in the order packs are listed. Triton is told by its
// per-model inference metrics (nv_inference_*), DCGM by its fields
// (DCGM_FI_*); both servers expose more names than that. The endpoint
// picker is told by its pool gauges (inference_pool_*, every release).
var families = []family{
	{prefix: "vllm:", packs: []string{PackVLLM, PackVLLMV0}, title: "vLLM"},
	{prefix: "tgi_", packs: []string{PackTGI}, title: "TGI"},
	{prefix: "sglang:", packs: []string{PackSGLang}, title: "SGLang"},
	{prefix: "nv_inference_", packs: []string{PackTriton}, title: "Triton"},
	{prefix: "DCGM_FI_", packs: []string{PackDCGM}, title: "dcgm-exporter"},
	{prefix: "inference_pool_", packs: []string{PackGateway}, title: "inference gateway"},
}

// packOrder is the order of packs in output and in the written file.
var packOrder = []string{PackVLLM, PackVLLMV0, PackTGI, PackSGLang, PackTriton, PackDCGM, PackGateway}

// Titles of the packs' servers, for messages.
var packTitles = map[string]string{
	PackVLLM:    "vLLM (V1 engine)",
	PackVLLMV0:  "vLLM (legacy V0 engine)",
	PackTGI:     "TGI",
	PackSGLang:  "SGLang",
	PackTriton:  "Triton",
	PackDCGM:    "dcgm-exporter (NVIDIA GPUs)",
	PackGateway: "inference gateway endpoint picker (GAIE, llm-d)",
}

// vllmEngines are the names that exist in only one vLLM engine, from the
// metric catalogue: V1-only (vllm:kv_cache_usage_perc, the prefix-cache
// counters, inter-token latency...) and V0-only (the CPU swap and V0
// spec-decode gauges...). Series names with their suffixes.
var vllmEngines = sync.OnceValues(func() (v1, v0 map[string]bool) {
	v1, v0 = map[string]bool{}, map[string]bool{}
	for _, m := range catalog.Default().Metrics() {
		if m.Server == nil || m.Server.Key != "vllm" || len(m.Engines) != 1 {
			continue
		}
		dst := v1
		if m.Engines[0] == "v0" {
			dst = v0
		}
		for _, suf := range []string{"", "_bucket", "_sum", "_count"} {
			dst[m.Name+suf] = true
		}
	}
	// Gone with the V0 engine; the catalogue lists them for both engines
	// because V1 0.8 still registered them, deprecated and unset.
	for _, n := range []string{"vllm:num_requests_swapped", "vllm:cpu_cache_usage_perc"} {
		v0[n] = true
	}
	return v1, v0
})

// classify returns the packs that fit a set of metric names scraped
// together (one job or one target). A vLLM with any V1-only name gets the
// vllm pack, with any V0-only name the vllm-v0 pack (a job can hold both),
// and with neither (a vLLM older than the catalogue's V1 names) vllm-v0.
func classify(names []string) []string {
	var out []string
	v1, v0 := vllmEngines()
	for _, f := range families {
		var has, hasV1, hasV0 bool
		for _, n := range names {
			rest, ok := strings.CutPrefix(n, f.prefix)
			if !ok || rest == "" || (f.prefix == "vllm:" && strings.Contains(rest, ":")) {
				continue // vllm:x:y is a recording rule's name
			}
			has = true
			hasV1 = hasV1 || v1[n]
			hasV0 = hasV0 || v0[n]
		}
		if !has {
			continue
		}
		if f.prefix != "vllm:" {
			out = append(out, f.packs...)
			continue
		}
		if hasV1 {
			out = append(out, PackVLLM)
		}
		if hasV0 || !hasV1 {
			out = append(out, PackVLLMV0)
		}
	}
	return out
}

// familyOf returns the family whose names include name.
func familyOf(name string) *family {
	for i := range families {
		if strings.HasPrefix(name, families[i].prefix) {
			return &families[i]
		}
	}
	return nil
}

func sortPacks(packs []string) {
	slices.SortFunc(packs, func(a, b string) int { return slices.Index(packOrder, a) - slices.Index(packOrder, b) })
}
