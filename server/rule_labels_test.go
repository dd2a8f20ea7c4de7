package server

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

// Rules' alerts reach the notifier with label values cut to
// web.max_label_value_bytes: valid UTF-8, distinct when the values differ
// only past the cut, the engine's alerts untouched, short values passed
// as they are.
func TestRuleLabelValuesCut(t *testing.T) {
	s := &Server{}
	cfg := defaultConfig()
	cfg.Web.MaxLabelValueBytes = 100
	s.cfg.Store(cfg)
	reg := prometheus.NewRegistry()
	var got []*rules.Alert
	notify := s.limitRuleLabels(func(_ context.Context, as []*rules.Alert) { got = as }, reg)

	long1 := strings.Repeat("é", 200) + "1" // 401 bytes, two-byte characters
	long2 := strings.Repeat("é", 200) + "2"
	in := []*rules.Alert{
		{Labels: labels.FromStrings("alertname", "Short", "v", "small")},
		{Labels: labels.FromStrings("alertname", "Long", "v", long1)},
		{Labels: labels.FromStrings("alertname", "Long", "v", long2)},
	}
	notify(context.Background(), in)
	if len(got) != 3 || got[0] != in[0] {
		t.Fatalf("got %d alerts (first passed as is: %v), want 3 with the short one unchanged", len(got), len(got) > 0 && got[0] == in[0])
	}
	if in[1].Labels.Get("v") != long1 {
		t.Error("the engine's alert was changed")
	}
	v1, v2 := got[1].Labels.Get("v"), got[2].Labels.Get("v")
	for _, v := range []string{v1, v2} {
		if len(v) > 100 || !utf8.ValidString(v) || !strings.HasPrefix(v, "éé") || !strings.Contains(v, "…") {
			t.Errorf("cut value %q (%d bytes): want at most 100 bytes of valid UTF-8, the start kept and …", v, len(v))
		}
	}
	if v1 == v2 {
		t.Errorf("values that differ past the cut were cut to the same %q", v1)
	}
	if got[1].Labels.Get("alertname") != "Long" {
		t.Errorf("other labels changed: %v", got[1].Labels)
	}
	if n, _ := testbin.GatherSum(reg, "paged_alert_label_values_cut_total"); n != 2 {
		t.Errorf("paged_alert_label_values_cut_total = %v, want 2", n)
	}
	for _, limit := range []int{1, 5, 19, 20, 21} {
		if v := cutValue(long1, limit); len(v) > limit || !utf8.ValidString(v) {
			t.Errorf("cutValue(…, %d) = %q, longer than the limit or broken", limit, v)
		}
	}
}

// The default label limits fit every rule pack of this repository and
// every rule and alert of the shared corpus: the labels: mappings of their
// YAML files (rules' labels, test alerts' labels), with room for the
// labels a series and external_labels add.
func TestLabelLimitDefaultsFitPacksAndCorpus(t *testing.T) {
	roots := []string{filepath.Join(testbin.RepoRoot(t), "examples"), filepath.Join(testbin.RepoRoot(t), "packs"), filepath.Join(testbin.SharedDir(t), "corpus")}
	var files, maps, most, longestName, longestValue int
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			dec := yaml.NewDecoder(bytes.NewReader(data))
			for {
				var doc yaml.Node
				if dec.Decode(&doc) != nil {
					break
				}
				files++
				walkLabels(&doc, func(m *yaml.Node) {
					maps++
					most = max(most, len(m.Content)/2)
					for i := 0; i+1 < len(m.Content); i += 2 {
						longestName = max(longestName, len(m.Content[i].Value))
						longestValue = max(longestValue, len(m.Content[i+1].Value))
					}
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d YAML documents, %d labels: mappings: at most %d labels, names of %d bytes, values of %d bytes", files, maps, most, longestName, longestValue)
	if maps < 100 {
		t.Fatalf("only %d labels: mappings found: the walk is broken", maps)
	}
	// A series brings its own labels (a few to a few dozen) and
	// external_labels more: the static ones must leave most of the room.
	if most > DefaultMaxLabelsPerAlert/4 || longestName > DefaultMaxLabelNameBytes || longestValue > DefaultMaxLabelValueBytes {
		t.Errorf("defaults (%d labels, %d-byte names, %d-byte values) too tight for %d labels, %d-byte names, %d-byte values",
			DefaultMaxLabelsPerAlert, DefaultMaxLabelNameBytes, DefaultMaxLabelValueBytes, most, longestName, longestValue)
	}
}

// walkLabels calls f with every mapping of scalars found under a key
// named labels, exp_labels (promtool tests) or external_labels.
func walkLabels(n *yaml.Node, f func(*yaml.Node)) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if (k.Value == "labels" || k.Value == "exp_labels" || k.Value == "external_labels") && v.Kind == yaml.MappingNode && scalarsOnly(v) {
				f(v)
			}
		}
	}
	for _, c := range n.Content {
		walkLabels(c, f)
	}
}

func scalarsOnly(m *yaml.Node) bool {
	for _, c := range m.Content {
		if c.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}
