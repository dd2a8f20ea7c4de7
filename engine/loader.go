package engine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules"
)

// maxRuleFileSize bounds what the loader reads from one rule file.
const maxRuleFileSize = 64 << 20

// parseFunc parses one rule file's content. Errors carry path:line:col.
// paged's own loader (package rules) is used: Prometheus's groups format
// and PrometheusRule CRDs, every error with its position.
type parseFunc func(path string, content []byte) (*rulefmt.RuleGroups, []error)

// loader implements Prometheus's rules.GroupLoader. ApplyRules parses every
// file first (collecting all errors, with positions); only when all files
// load does it hand the names to the rules Manager, whose Load calls are
// then served from that parse (as split by the engine, see ruledef.go), so
// a file is read once per reload and the Manager never sees a file that
// failed.
type loader struct {
	parser parser.Parser
	parse  parseFunc

	mu    sync.Mutex
	serve map[string]*rulefmt.RuleGroups
}

func newLoader(p parser.Parser) *loader {
	return &loader{
		parser: p,
		parse: func(path string, content []byte) (*rulefmt.RuleGroups, []error) {
			f := rules.ParseFile(path, content, rules.ParseOptions{Parser: p})
			if errs := f.Errors(); len(errs) > 0 {
				return nil, errs
			}
			return f.RuleGroups(), nil
		},
	}
}

// expand resolves globs. A pattern that matches nothing is an error, as is
// a duplicate file.
func expand(patterns []string) ([]string, error) {
	var (
		files []string
		errs  []error
		seen  = map[string]bool{}
	)
	for _, pat := range patterns {
		matches, err := filepath.Glob(pat)
		if err != nil {
			errs = append(errs, fmt.Errorf("rule_files: %q: %w", pat, err))
			continue
		}
		if len(matches) == 0 {
			errs = append(errs, fmt.Errorf("rule_files: %q matches no file", pat))
			continue
		}
		sort.Strings(matches)
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				files = append(files, m)
			}
		}
	}
	return files, errors.Join(errs...)
}

// parseAll parses all files. It returns every error of every file.
func (l *loader) parseAll(files []string) (map[string]*rulefmt.RuleGroups, error) {
	parsed := make(map[string]*rulefmt.RuleGroups, len(files))
	var errs []error
	for _, f := range files {
		rgs, ferrs := l.read(f)
		if len(ferrs) > 0 {
			errs = append(errs, ferrs...)
			continue
		}
		parsed[f] = rgs
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return parsed, nil
}

// addSources adds rule groups that come from no file to parsed, after
// checking that every name is new and every expression parses.
func (l *loader) addSources(parsed map[string]*rulefmt.RuleGroups, sources []RuleSource) error {
	var errs []error
	for _, src := range sources {
		if src.Name == "" || src.Groups == nil {
			errs = append(errs, fmt.Errorf("rule source %q has no name or no groups", src.Name))
			continue
		}
		if _, dup := parsed[src.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: loaded twice", src.Name))
			continue
		}
		bad := false
		for _, g := range src.Groups.Groups {
			for _, r := range g.Rules {
				if _, err := l.parser.ParseExpr(r.Expr); err != nil {
					errs = append(errs, fmt.Errorf("%s: group %q, rule %q: %w", src.Name, g.Name, r.Alert+r.Record, err))
					bad = true
				}
			}
		}
		if !bad {
			parsed[src.Name] = src.Groups
		}
	}
	return errors.Join(errs...)
}

// serveFrom makes m what Load returns.
func (l *loader) serveFrom(m map[string]*rulefmt.RuleGroups) {
	l.mu.Lock()
	l.serve = m
	l.mu.Unlock()
}

func (l *loader) read(path string) (*rulefmt.RuleGroups, []error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, []error{err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRuleFileSize+1))
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", path, err)}
	}
	if len(b) > maxRuleFileSize {
		return nil, []error{fmt.Errorf("%s: larger than %d bytes", path, maxRuleFileSize)}
	}
	rgs, errs := l.parse(path, b)
	if len(errs) > 0 {
		return nil, errs
	}
	if rgs == nil {
		return &rulefmt.RuleGroups{}, nil
	}
	return rgs, nil
}

// Load serves the Manager from the last serveFrom. The engine never names
// a file it has not parsed.
func (l *loader) Load(identifier string, _ bool, _ model.ValidationScheme) (*rulefmt.RuleGroups, []error) {
	l.mu.Lock()
	rgs, ok := l.serve[identifier]
	l.mu.Unlock()
	if ok {
		return rgs, nil
	}
	return nil, []error{fmt.Errorf("%s: not loaded by paged", identifier)}
}

// Parse parses a rule expression with the same parser the loader checks
// files with.
func (l *loader) Parse(query string) (parser.Expr, error) {
	return l.parser.ParseExpr(query)
}

// LoadError is rules that did not load: what ApplyRules and
// ApplyRuleSources return. Nothing changed: the rules loaded before keep
// running, or, when none were (Kept is false, the first load), none run.
type LoadError struct {
	Kept bool
	Err  error // every problem found, each path:line:col when it has one
}

func (e *LoadError) Error() string {
	if e.Kept {
		return "previous rules kept: " + e.Err.Error()
	}
	return "no rules loaded: " + e.Err.Error()
}

func (e *LoadError) Unwrap() error { return e.Err }

// Problems lists the problems one by one, in the order they were found.
func (e *LoadError) Problems() []error {
	var out []error
	var walk func(err error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		out = append(out, err)
	}
	walk(e.Err)
	return out
}
