package server

import (
	"path/filepath"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// The example configurations in examples/ load without problems.
func TestExampleConfigs(t *testing.T) {
	root := testbin.RepoRoot(t)
	for _, name := range []string{"paged.yaml", "demo.yaml", "ha/paged-a.yaml", "ha/paged-b.yaml"} {
		t.Run(name, func(t *testing.T) {
			cfg, err := LoadConfig(filepath.Join(root, "examples", name), noEnv)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if len(cfg.RuleFilePaths) == 0 {
				t.Error("no rule files")
			}
			if cfg.Web.RunbooksDir != filepath.Join(root, "examples", "runbooks") {
				t.Errorf("runbooks_dir = %q", cfg.Web.RunbooksDir)
			}
		})
	}
}
