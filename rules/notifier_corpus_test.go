package rules

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestNotifierCorpusFindings runs the notifier checks on every
// Alertmanager configuration of the shared corpus (a YAML file whose top
// level has route: and receivers:) and compares the findings with
// testdata/notifier-corpus.golden. The configurations load no rules, so
// the checks about labels and annotations say nothing; every line of the
// golden file has been read against its configuration and is true.
func TestNotifierCorpusFindings(t *testing.T) {
	corpus := filepath.Join(testbin.SharedDir(t), "corpus")
	var got []string
	configs := 0
	err := filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeSymlink != 0 {
			return err
		}
		if ext := filepath.Ext(p); ext != ".yml" && ext != ".yaml" {
			return nil
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var doc yaml.Node
		if yaml.Unmarshal(content, &doc) != nil || len(doc.Content) == 0 {
			return nil
		}
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode || mapValue(root, "route") == nil || mapValue(root, "receivers") == nil {
			return nil
		}
		configs++
		rel, _ := filepath.Rel(corpus, p)
		fs, _ := LintNotifier(filepath.ToSlash(rel), content, root, NotifierOptions{}, DefaultConfig())
		for _, fd := range fs {
			got = append(got, fd.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if configs < 9 {
		t.Fatalf("only %d Alertmanager configurations in the corpus; is PAGED_SHARED right?", configs)
	}
	compareCorpusGolden(t, "notifier-corpus.golden", "TestNotifierCorpusFindings", "true, or a false positive to fix", got)
}
