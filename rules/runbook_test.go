package rules

import (
	"net/url"
	"testing"
)

func TestResolveRunbook(t *testing.T) {
	base, _ := url.Parse("http://paged.example:9095/runbooks")
	for ref, want := range map[string]string{
		"vllm/VLLMKVCacheSaturated.md":  "http://paged.example:9095/runbooks/vllm/VLLMKVCacheSaturated.md",
		"/vllm/VLLMKVCacheSaturated.md": "http://paged.example:9095/runbooks/vllm/VLLMKVCacheSaturated.md",
		"paged/PagedDatasourceDown#act": "http://paged.example:9095/runbooks/paged/PagedDatasourceDown#act",
		"https://wiki.example/r/X":      "https://wiki.example/r/X",
		"  ":                            "",
		"%zz":                           "",
	} {
		if got := ResolveRunbook(ref, base); got != want {
			t.Errorf("ResolveRunbook(%q) = %q, want %q", ref, got, want)
		}
	}
	if got := ResolveRunbook("x.md", nil); got != "" {
		t.Errorf("nil base: %q", got)
	}
}
