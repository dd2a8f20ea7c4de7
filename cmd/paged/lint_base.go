package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/pagedhq/paged/rules"
)

// baseFiles reads, from git revision rev, the rule files being linted as
// they were there, plus the rule files the change deleted or renamed, so
// that rule/dependency can tell which recording rules the change removes.
// Paths outside a git work tree, or absent at rev, are skipped.
func baseFiles(rev string, paths []string, opts rules.ParseOptions) ([]*rules.File, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []*rules.File
	read := func(top, rel, display string) {
		if seen[top+"\x00"+rel] {
			return
		}
		seen[top+"\x00"+rel] = true
		cmd := exec.Command("git", "-C", top, "show", rev+":"+rel)
		content, err := cmd.Output()
		if err != nil {
			return // new in this change, or not tracked
		}
		out = append(out, rules.ParseFile(display, content, opts))
	}
	tops := map[string]bool{}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		top, err := gitOutput(filepath.Dir(abs), "rev-parse", "--show-toplevel")
		if err != nil {
			continue
		}
		if !tops[top] {
			if _, err := gitOutput(top, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
				return nil, fmt.Errorf("--base %s: not a revision of %s", rev, top)
			}
			tops[top] = true
		}
		rel, err := filepath.Rel(top, abs)
		if err != nil {
			continue
		}
		read(top, filepath.ToSlash(rel), p)
	}
	// Rule files deleted (or renamed away) since rev.
	for top := range tops {
		list, err := gitOutput(top, "diff", "--name-only", "--diff-filter=DR", "--no-renames", rev, "--")
		if err != nil {
			continue
		}
		for _, rel := range strings.Split(list, "\n") {
			if ext := filepath.Ext(rel); rel == "" || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
				continue
			}
			read(top, rel, rel)
		}
	}
	return out, nil
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
