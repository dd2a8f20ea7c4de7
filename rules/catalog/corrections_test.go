package catalog

import (
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Every correction in additions.yaml replaces an entry of the research
// catalogue (a misspelt name would silently correct nothing), says what it
// corrects and names its source.
func TestCorrectionsTargetCatalogEntries(t *testing.T) {
	var research rawFile
	if err := yaml.Unmarshal(embedded, &research); err != nil {
		t.Fatal(err)
	}
	adds, err := parseAdditions()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for key, srv := range adds.Servers {
		rs := research.Servers[key]
		var names []string
		for _, rm := range slices.Concat(rs.Metrics, rs.DefaultMetrics, rs.Removed) {
			names = append(names, splitNames(rm.Name)...)
		}
		for _, rm := range srv.Corrections {
			n++
			for _, name := range splitNames(rm.Name) {
				if !slices.Contains(names, name) {
					t.Errorf("%s: correction of %s, which catalog.yaml does not list", key, name)
				}
			}
			if rm.Source == "" {
				t.Errorf("%s: correction of %s has no source", key, rm.Name)
			}
			if _, ok := rm.Rest["corrects"]; !ok {
				t.Errorf("%s: correction of %s does not say what it corrects", key, rm.Name)
			}
		}
	}
	if n == 0 {
		t.Fatal("no corrections read from additions.yaml")
	}
}

// What pack-review-turn3.md found upstream, as the catalogue now says it.
func TestReviewTurn3(t *testing.T) {
	c := Default()
	for _, w := range []struct {
		name, replacedBy string
	}{
		{"vllm:prompt_tokens_recomputed_total", ""},
	} {
		m := c.Metric(w.name)
		if m == nil || m.Status != Removed || m.ReplacedBy != w.replacedBy {
			t.Errorf("%s = %+v, want removed, replaced by %q", w.name, m, w.replacedBy)
		}
	}
	for _, w := range []struct {
		name   string
		typ    Type
		labels []string // that the metric must have
	}{
		{"vllm:nixl_post_time_seconds", Histogram, []string{"engine"}},
		{"vllm:kv_offload_total_bytes_total", Counter, []string{"transfer_type"}},
	} {
		m := c.Metric(w.name)
		if m == nil || m.Status == Removed || m.Type != w.typ {
			t.Errorf("%s = %+v, want a current %s", w.name, m, w.typ)
			continue
		}
		for _, l := range w.labels {
			if !m.HasLabel(l) {
				t.Errorf("%s: no label %s in %v", w.name, l, m.Labels)
			}
		}
	}
	// PR #55812: a reason label and no engine label.
	if m := c.Metric("vllm:admission_rejections_total"); m == nil || !slices.Equal(m.Labels, []string{"model_name", "reason"}) || m.Family != "vllm:admission_rejections" {
		t.Errorf("vllm:admission_rejections_total = %+v", m)
	}
}
