package main

import (
	"fmt"

	"github.com/pagedhq/paged/rules"
)

// checkConfigCmd validates paged.yaml: every key, type, URL, duration,
// secret file, rule-file glob and pack override, then loads the rule files
// the globs match as the engine will (the same loader as `paged lint`,
// without its checks). The packs are loaded while the file is read.
type checkConfigCmd struct {
	File string `arg:"" name:"file" help:"Configuration file (paged.yaml)." type:"string"`
}

func (c *checkConfigCmd) Run(e *env) error {
	cfg, err := loadConfigTo(e, c.File, e.stdout, true)
	if err != nil {
		return err
	}
	groups, ruleCount, bad := 0, 0, 0
	for _, path := range cfg.RuleFilePaths {
		f, err := rules.ReadFile(path, rules.ParseOptions{})
		if err != nil {
			fmt.Fprintf(e.stdout, "%s: %v\n", path, err)
			bad++
			continue
		}
		for _, p := range f.Problems {
			if p.Severity == rules.Error {
				fmt.Fprintln(e.stdout, p.String())
				bad++
			}
		}
		groups += len(f.Groups)
		for _, g := range f.Groups {
			ruleCount += len(g.Rules)
		}
	}
	if bad > 0 {
		fmt.Fprintf(e.stdout, "%s: %d problem(s) in rule files\n", c.File, bad)
		return problems()
	}
	for _, pc := range cfg.Packs {
		groups += len(pc.Rendered.File.Groups)
		for _, g := range pc.Rendered.File.Groups {
			ruleCount += len(g.Rules)
		}
	}
	fmt.Fprintf(e.stdout, "%s: valid (%d rule files, %d packs, %d groups, %d rules)\n", c.File, len(cfg.RuleFilePaths), len(cfg.Packs), groups, ruleCount)
	return nil
}
