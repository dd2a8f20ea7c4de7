// Package packs is paged's registry of rule packs: the packs built into the
// binary (examples/packs, with their runbooks) and pack directories on
// disk, each tuned without forking by the overrides of paged.yaml's packs:
// block or the command line (selector, set, for, severity, labels,
// disable). The overrides are applied to the PromQL syntax tree, and the
// result is an ordinary Prometheus rule file: what the engine loads, what
// `paged packs show` prints, what lint and backtest read and what `paged
// export` writes.
package packs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/examples"
	"github.com/pagedhq/paged/rules"
)

// MetadataFile is the name of a pack's metadata file in its directory.
const MetadataFile = "pack.yaml"

// CheckMetadata names the problems of a pack.yaml.
const CheckMetadata = "pack/metadata"

// Pack is a rule pack as written: its metadata and its rule files.
type Pack struct {
	// Name is how paged.yaml and the command line name the pack.
	Name string
	// Description says what the pack is for, in a few words.
	Description string
	// Server is the `server` label of the pack's alerts.
	Server string
	// Versions are the server releases whose metrics the rules use.
	Versions string
	// Notes qualify Versions: alerts that need a later release, a flag,
	// a backend.
	Notes string
	// Releases are the releases of Versions as data ("0.9", "0.10", ...),
	// the ones examples/versions_test.go runs the pack against; empty when
	// the catalogue has no release history for the server.
	Releases []string
	// Unavailable names the alerts that cannot fire on some of Releases,
	// with those releases and why (a metric that appeared later or was
	// removed).
	Unavailable map[string]Unavailable
	// Builtin is set for the packs compiled into paged.
	Builtin bool
	// Dir is the pack's directory: packs/<name> in the built-in files, or
	// the directory on disk.
	Dir string
	// Tests are the pack's unit-test files (promtool format), relative to
	// Dir.
	Tests []string

	files  []source // the rule files, in pack.yaml order
	alerts []string // alerting rule names, in file order, without duplicates
}

// Unavailable is the releases on which an alert cannot fire, and why.
type Unavailable struct {
	Releases []string
	Why      string
}

// source is one rule file of a pack.
type source struct {
	path    string // as shown in messages: packs/vllm/vllm.rules.yaml, or the path on disk
	content []byte
}

// Alerts returns the names of the pack's alerting rules in file order.
func (p *Pack) Alerts() []string { return slices.Clone(p.alerts) }

// RuleFiles returns the paths of the pack's rule files: in the built-in
// files (examples.FS) for a built-in pack, on disk otherwise.
func (p *Pack) RuleFiles() []string {
	out := make([]string, len(p.files))
	for i, f := range p.files {
		out[i] = f.path
	}
	return out
}

// LoadError is a pack that cannot be loaded: a missing directory or file,
// or problems in its pack.yaml or rule files, each with its position.
type LoadError struct {
	Dir      string
	Findings []rules.Finding // problems inside the pack's files
	Err      error           // a problem that is not in a file (nil when Findings say it all)
}

func (e *LoadError) Error() string {
	var lines []string
	if e.Err != nil {
		lines = append(lines, fmt.Sprintf("pack %s: %v", e.Dir, e.Err))
	}
	for _, f := range e.Findings {
		lines = append(lines, f.String())
	}
	return strings.Join(lines, "\n")
}

func (e *LoadError) Unwrap() error { return e.Err }

// Builtin returns the packs compiled into paged, sorted by name.
func Builtin() ([]*Pack, error) {
	fsys := examples.FS()
	entries, err := fs.ReadDir(fsys, "packs")
	if err != nil {
		return nil, fmt.Errorf("built-in packs: %w", err)
	}
	var (
		out  []*Pack
		errs []error
	)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p, err := load(fsys, path.Join("packs", e.Name()), true)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Pack) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// Runbooks returns the runbooks built into paged: <server>/<Alert>.md for
// every alert of the built-in packs and paged's own alerts
// (examples/runbooks). The packs' relative runbook_url links name files in
// it.
func Runbooks() fs.FS {
	sub, err := fs.Sub(examples.FS(), "runbooks")
	if err != nil {
		panic(err) // "runbooks" is a valid path: fs.Sub cannot fail
	}
	return sub
}

// BuiltinNames returns the names of the built-in packs, sorted.
func BuiltinNames() []string {
	ps, _ := Builtin()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

// Lookup returns the built-in pack of that name.
func Lookup(name string) (*Pack, error) {
	ps, err := Builtin()
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	msg := fmt.Sprintf("no built-in pack %q (built-in: %s; a pack directory is a path such as ./packs/mine)", name, strings.Join(names, ", "))
	if s := closest(name, names); s != "" {
		msg = fmt.Sprintf("no built-in pack %q: did you mean %s? (built-in: %s)", name, s, strings.Join(names, ", "))
	}
	return nil, errors.New(msg)
}

// IsPath reports whether a packs: name or command-line argument names a
// pack directory rather than a built-in pack: it contains a path
// separator or starts with a dot.
func IsPath(name string) bool {
	return strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".")
}

// Resolve returns the built-in pack of that name, or the pack in that
// directory when name is a path (IsPath), relative to dir.
func Resolve(name, dir string) (*Pack, error) {
	if !IsPath(name) {
		return Lookup(name)
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	return Open(name)
}

// Open loads the pack in a directory on disk. pack.yaml is optional there:
// without it the pack is named after the directory and holds every
// *.rules.yaml (or .yml) file in it.
func Open(dir string) (*Pack, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &LoadError{Dir: dir, Err: errors.Unwrap(err)}
	}
	if !st.IsDir() {
		return nil, &LoadError{Dir: dir, Err: errors.New("not a directory (a pack is a directory with pack.yaml and its rule files)")}
	}
	return load(os.DirFS(dir), dir, false)
}

// load reads a pack from dir in fsys. dir is a slash path in fsys for the
// built-in files; for a directory on disk, fsys is rooted at it and dir is
// only its name in messages.
func load(fsys fs.FS, dir string, builtin bool) (*Pack, error) {
	root := "."
	display := func(name string) string { return filepath.Join(dir, name) }
	if builtin {
		root = dir
		display = func(name string) string { return path.Join(dir, name) }
	}
	p := &Pack{Dir: dir, Builtin: builtin}
	le := &LoadError{Dir: dir}

	meta, err := fs.ReadFile(fsys, path.Join(root, MetadataFile))
	var ruleNames []string
	switch {
	case err == nil:
		ruleNames = p.parseMetadata(display(MetadataFile), meta, le)
	case builtin || !errors.Is(err, fs.ErrNotExist):
		le.Err = err
		return nil, le
	default:
		p.Name = filepath.Base(dir)
		entries, err := fs.ReadDir(fsys, root)
		if err != nil {
			le.Err = err
			return nil, le
		}
		for _, e := range entries {
			if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".rules.yaml") || strings.HasSuffix(n, ".rules.yml")) {
				ruleNames = append(ruleNames, n)
			}
		}
		if len(ruleNames) == 0 {
			le.Err = errors.New("no pack.yaml and no *.rules.yaml file")
			return nil, le
		}
	}
	seen := map[string]bool{}
	for _, name := range ruleNames {
		content, err := fs.ReadFile(fsys, path.Join(root, name))
		if err != nil {
			le.Err = errors.Join(le.Err, fmt.Errorf("rule file %s: %w", name, errors.Unwrap(err)))
			continue
		}
		if len(content) > rules.MaxFileSize {
			le.Err = errors.Join(le.Err, fmt.Errorf("rule file %s: larger than %d bytes", name, rules.MaxFileSize))
			continue
		}
		src := source{path: display(name), content: content}
		f := rules.ParseFile(src.path, content, rules.ParseOptions{})
		for _, pr := range f.Problems {
			if pr.Severity == rules.Error {
				le.Findings = append(le.Findings, pr)
			}
		}
		if f.Kind != rules.KindPrometheus {
			le.Findings = append(le.Findings, rules.Finding{
				Path: src.path, Range: rules.Range{Start: rules.Pos{Line: 1, Column: 1}, End: rules.Pos{Line: 1, Column: 1}},
				Severity: rules.Error, Check: CheckMetadata,
				Message: "a pack's rule files are Prometheus rule files (groups:), not PrometheusRule manifests or ruler namespaces",
			})
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if r.IsAlert() && !seen[r.Name()] {
					seen[r.Name()] = true
					p.alerts = append(p.alerts, r.Name())
				}
			}
		}
		p.files = append(p.files, src)
	}
	if le.Err != nil || len(le.Findings) > 0 {
		return nil, le
	}
	return p, nil
}

// parseMetadata reads pack.yaml into p and returns the rule files it
// names. Problems go to le with their positions.
func (p *Pack) parseMetadata(file string, content []byte, le *LoadError) []string {
	bad := func(n *yaml.Node, format string, args ...any) {
		pos := rules.Pos{Line: 1, Column: 1}
		if n != nil && n.Line > 0 {
			pos = rules.Pos{Line: n.Line, Column: n.Column}
		}
		le.Findings = append(le.Findings, rules.Finding{
			Path: file, Range: rules.Range{Start: pos, End: pos}, Severity: rules.Error,
			Check: CheckMetadata, Message: fmt.Sprintf(format, args...),
		})
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(content)).Decode(&doc); err != nil {
		bad(nil, "invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		bad(&doc, "pack.yaml must be a mapping (name, description, server, versions, releases, unavailable, notes, rules, tests)")
		return nil
	}
	m := doc.Content[0]
	var ruleFiles []string
	str := func(k, v *yaml.Node, dst *string) {
		if v.Kind != yaml.ScalarNode {
			bad(v, "%s must be a string", k.Value)
			return
		}
		*dst = v.Value
	}
	list := func(k, v *yaml.Node, dst *[]string) {
		if v.Kind != yaml.SequenceNode {
			bad(v, "%s must be a list of file names", k.Value)
			return
		}
		for _, c := range v.Content {
			if c.Kind != yaml.ScalarNode || c.Value == "" || strings.Contains(c.Value, "..") || path.IsAbs(c.Value) {
				bad(c, "%s: want a file name in the pack's directory", k.Value)
				continue
			}
			*dst = append(*dst, c.Value)
		}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			bad(k, "duplicate key %s", k.Value)
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			str(k, v, &p.Name)
		case "description":
			str(k, v, &p.Description)
		case "server":
			str(k, v, &p.Server)
		case "versions":
			str(k, v, &p.Versions)
		case "notes":
			str(k, v, &p.Notes)
		case "releases":
			if v.Kind != yaml.SequenceNode {
				bad(v, "releases must be a list of release numbers")
				continue
			}
			for _, c := range v.Content {
				p.Releases = append(p.Releases, c.Value)
			}
		case "unavailable":
			if v.Kind != yaml.MappingNode {
				bad(v, "unavailable must map alert names to {releases: [...], why: ...}")
				continue
			}
			p.Unavailable = map[string]Unavailable{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				var u struct {
					Releases []string `yaml:"releases"`
					Why      string   `yaml:"why"`
				}
				if err := v.Content[j+1].Decode(&u); err != nil || len(u.Releases) == 0 || u.Why == "" {
					bad(v.Content[j+1], "unavailable: %s: want {releases: [...], why: ...}", v.Content[j].Value)
					continue
				}
				p.Unavailable[v.Content[j].Value] = Unavailable{Releases: u.Releases, Why: u.Why}
			}
		case "rules":
			list(k, v, &ruleFiles)
		case "tests":
			list(k, v, &p.Tests)
		default:
			bad(k, "unknown key %s (valid keys: name, description, server, versions, releases, unavailable, notes, rules, tests)", k.Value)
		}
	}
	switch {
	case p.Name == "":
		bad(m, "name is required")
	case IsPath(p.Name) || strings.ContainsAny(p.Name, " \t:"):
		bad(m, "name %q must be a plain word (letters, digits, - and _)", p.Name)
	}
	if len(ruleFiles) == 0 {
		bad(m, "rules is required: the pack's rule files")
	}
	return ruleFiles
}

// closest returns the name in names nearest to s, when it is close enough
// to be a typo.
func closest(s string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		d := levenshtein(strings.ToLower(s), strings.ToLower(n))
		if best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" || bestD > max(2, len(s)/4) {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
