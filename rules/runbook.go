package rules

import (
	"net/url"
	"strings"
)

// ResolveRunbook resolves a runbook_url annotation (DESIGN.md §4) against
// base, the folder runbooks are published in: runbook_base_url, or paged's
// own {external_url}/runbooks/. Absolute URLs are kept; a relative one
// ("vllm/VLLMKVCacheSaturated.md", with or without a leading slash) names a
// file under base. It returns "" for an empty or unparsable reference, or
// when base is nil.
func ResolveRunbook(ref string, base *url.URL) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || base == nil {
		return ""
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if r.IsAbs() {
		return r.String()
	}
	b := *base
	if !strings.HasSuffix(b.Path, "/") {
		b.Path += "/"
	}
	r.Path = strings.TrimPrefix(r.Path, "/")
	return b.ResolveReference(r).String()
}
