package rules

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
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
	b, err := readRuleFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFile(path, b, opts), nil
}

// readRuleFile reads a rule file no larger than MaxFileSize.
func readRuleFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: file is %d bytes, larger than the %d byte limit", path, st.Size(), MaxFileSize)
	}
	return os.ReadFile(path)
}

// readRuleFiles reads rule files on one goroutine per CPU: the system
// calls of opening and reading a hundred small files add up to
// milliseconds. The error is the one of the first file, in the order of
// paths, that could not be read.
func readRuleFiles(paths []string) ([][]byte, error) {
	contents := make([][]byte, len(paths))
	errs := make([]error, len(paths))
	forEach(len(paths), min(len(paths), runtime.GOMAXPROCS(0)), func() func(i int) {
		return func(i int) { contents[i], errs[i] = readRuleFile(paths[i]) }
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return contents, nil
}

// ReadFiles reads and parses rule files, in the order given. The error is
// the one of the first file, in that order, that could not be read.
func ReadFiles(paths []string, opts ParseOptions) ([]*File, error) {
	files := make([]*File, 0, len(paths))
	for _, p := range paths {
		f, err := ReadFile(p, opts)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}
