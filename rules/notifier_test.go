package rules

import (
	"bytes"
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// lintNotifierGolden runs one notifier check on a testdata file that holds
// a notifier: block and, when the case needs alerts, the groups: of the
// rules it loads, in the same file; external_labels: stands for paged's
// global.external_labels. paged's built-in alerts are always added.
func lintNotifierGolden(t *testing.T, path, check string) string {
	t.Helper()
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(content, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	block := mapValue(root, "notifier")
	if block == nil {
		t.Fatalf("%s: no notifier: block", path)
	}
	opts := NotifierOptions{Builtin: true}
	if mapValue(root, "groups") != nil {
		opts.Rules = []*File{ParseFile(path, content, ParseOptions{IgnoreUnknownFields: true})}
	}
	if ext := mapValue(root, "external_labels"); ext != nil {
		if err := ext.Decode(&opts.ExternalLabels); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	cfg.Only = []string{check}
	fs, src := LintNotifier(path, content, block, opts, cfg)
	var buf bytes.Buffer
	if err := WriteFindings(&buf, FormatText, fs, src, false); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
