package ruletest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ExpandPaths turns command-line arguments into test files. A file is kept
// as is; a directory contributes every *.test.yaml and *.test.yml below it;
// an argument that does not exist and holds glob characters is expanded
// (so a quoted `examples/packs/*/*.test.yaml` works without a shell). A
// pattern or directory that yields nothing is an error.
func ExpandPaths(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		switch {
		case err == nil && st.IsDir():
			var found []string
			walkErr := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() && isTestFileName(d.Name()) {
					found = append(found, p)
				}
				return nil
			})
			if walkErr != nil {
				return nil, fmt.Errorf("%s: %w", a, walkErr)
			}
			if len(found) == 0 {
				return nil, fmt.Errorf("%s: no *.test.yaml or *.test.yml files in this directory", a)
			}
			slices.Sort(found)
			out = append(out, found...)
		case err == nil:
			out = append(out, a)
		case strings.ContainsAny(a, "*?["):
			m, gerr := filepath.Glob(a)
			if gerr != nil {
				return nil, fmt.Errorf("%s: %w", a, gerr)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("%s: no file matches this pattern", a)
			}
			out = append(out, m...)
		default:
			return nil, fmt.Errorf("reading test file: %w", err)
		}
	}
	return out, nil
}

func isTestFileName(name string) bool {
	return strings.HasSuffix(name, ".test.yaml") || strings.HasSuffix(name, ".test.yml")
}
