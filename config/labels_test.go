package config

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/internal/testbin"
)

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
