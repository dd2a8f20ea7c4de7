package main

import (
	"fmt"
	"os"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/rules"
)

// lintNotifier runs the notifier/... checks on paged.yaml's notifier block,
// with the alerts of the rule files and packs it loads.
func lintNotifier(pc *config.Config, opts rules.ParseOptions, cfg *rules.Config) ([]rules.Finding, rules.SourceFunc, error) {
	content, err := os.ReadFile(pc.File)
	if err != nil {
		return nil, nil, err
	}
	ruleFiles, err := rules.ReadFiles(pc.RuleFilePaths, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the rule files for the notifier checks: %w", err)
	}
	for _, p := range pc.Packs {
		ruleFiles = append(ruleFiles, p.Rendered.File)
	}
	nopts := rules.NotifierOptions{Rules: ruleFiles, Builtin: true, ExternalLabels: pc.Global.ExternalLabels.Map()}
	if pc.GrafanaURL != nil && len(pc.Packs) > 0 {
		nopts.Annotations = []string{"dashboard_url"}
	}
	found, src := rules.LintNotifier(pc.File, content, pc.Notifier, nopts, cfg)
	return found, src, nil
}

// mergeFindings joins the findings of the rule files and of the notifier
// block, sorted, with one source function for both.
func mergeFindings(a []rules.Finding, asrc rules.SourceFunc, b []rules.Finding, bsrc rules.SourceFunc) ([]rules.Finding, rules.SourceFunc) {
	out := append(a, b...)
	rules.SortFindings(out)
	src := func(path string, line int) string {
		if s := bsrc(path, line); s != "" {
			return s
		}
		return asrc(path, line)
	}
	return out, src
}
