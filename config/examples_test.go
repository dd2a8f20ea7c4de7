package config

import (
	"path/filepath"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// The example configurations in examples/ load without problems, with the
// built-in vllm pack and the built-in runbooks: none of them needs a file
// of the repository, so each works as a copy anywhere.
func TestExampleConfigs(t *testing.T) {
	root := testbin.RepoRoot(t)
	for _, name := range []string{"paged.yaml", "demo.yaml", "ha/paged-a.yaml", "ha/paged-b.yaml"} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Load(filepath.Join(root, "examples", name), noEnv)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if len(cfg.Packs) == 0 || cfg.Packs[0].Rendered.Source != "pack:vllm" || len(cfg.RuleFilePaths) != 0 {
				t.Errorf("packs %+v, rule files %v", cfg.Packs, cfg.RuleFilePaths)
			}
			if cfg.Web.RunbooksDir != "" {
				t.Errorf("runbooks_dir = %q: the built-in runbooks are served without it", cfg.Web.RunbooksDir)
			}
		})
	}
}
