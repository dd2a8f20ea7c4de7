package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Packs as loaded from paged.yaml: the short form, a pack directory
// beside a built-in pack, and a pack directory whose rule file is broken,
// with its problems at their own positions.
func TestLoadConfigPacks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mine/pack.yaml", "name: mine\nrules: [mine.rules.yaml]\n")
	writeFile(t, dir, "mine/mine.rules.yaml", "groups:\n  - name: mine\n    rules:\n      - alert: MineDown\n        expr: up{job=\"mine\"} == 0\n")
	writeFile(t, dir, "paged.yaml", `datasource:
  prometheus: {url: "http://127.0.0.1:9090"}
packs:
  - tgi
  - name: ./mine
    set: {MineDown: 1}
`)
	cfg, err := Load(filepath.Join(dir, "paged.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range cfg.Packs {
		names = append(names, p.Rendered.Source)
	}
	if !slices.Equal(names, []string{"pack:tgi", "pack:mine"}) || len(cfg.RuleFilePaths) != 0 {
		t.Fatalf("packs %v, rule files %v", names, cfg.RuleFilePaths)
	}
	if src := cfg.PackSources(); len(src) != 2 || src[1].Groups.Groups[0].Rules[0].Expr != `up{job="mine"} == 1` {
		t.Errorf("sources %+v", src)
	}

	writeFile(t, dir, "broken/broken.rules.yaml", "groups:\n  - name: broken\n    rules:\n      - alert: Broken\n        expr: sum(up\n")
	writeFile(t, dir, "paged.yaml", "datasource:\n  prometheus: {url: \"http://127.0.0.1:9090\"}\npacks: [{name: ./broken}]\n")
	_, err = Load(filepath.Join(dir, "paged.yaml"), noEnv)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	got := ce.Error()
	for _, want := range []string{
		filepath.Join(dir, "paged.yaml") + ":3:16: packs[0].name: pack " + filepath.Join(dir, "broken") + " does not load: 2 problem(s) in its files",
		filepath.Join(dir, "broken", "broken.rules.yaml") + ":5:18: error [promql/syntax] could not parse expression: unclosed left parenthesis",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(got, filepath.Join(dir, "paged.yaml")) {
		t.Errorf("the configuration's own problems come first:\n%s", got)
	}
}
