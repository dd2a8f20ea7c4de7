package rules

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ExpandPaths turns files, directories (walked recursively for .yml, .yaml
// and .json files) and globs into a sorted list of files. A path or glob
// that matches nothing is an error.
func ExpandPaths(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		matches := []string{p}
		if strings.ContainsAny(p, "*?[") {
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("%s: bad glob: %w", p, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("%s: no files match", p)
			}
			matches = m
		}
		for _, m := range matches {
			st, err := os.Stat(m)
			if err != nil {
				return nil, err
			}
			if !st.IsDir() {
				add(m)
				continue
			}
			err = filepath.WalkDir(m, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					if path != m && strings.HasPrefix(d.Name(), ".") {
						return filepath.SkipDir
					}
					return nil
				}
				if IsRuleFileName(path) {
					add(path)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// IsRuleFileName reports whether a file found in a directory walk is read
// as a rule file: .yml, .yaml or .json, except unit-test files
// (*.test.yaml, *_test.yml), lint configuration and rule pack metadata
// (pack.yaml).
func IsRuleFileName(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	if base == "pack.yaml" || base == "pack.yml" {
		return false
	}
	ext := filepath.Ext(base)
	if ext != ".yml" && ext != ".yaml" && ext != ".json" {
		return false
	}
	stem := strings.TrimSuffix(base, ext)
	if strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, "_test") || strings.HasPrefix(base, ".paged") {
		return false
	}
	return true
}

// ReadFile reads and parses one rule file.
func ReadFile(path string, opts ParseOptions) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: file is %d bytes, larger than the %d byte limit", path, st.Size(), MaxFileSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFile(path, b, opts), nil
}
