package rules

import (
	"bytes"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Lint runs every enabled check on the files and returns the findings of
// the loader and the checks, sorted, with the ones silenced by comments
// removed. It collects everything in one pass and never stops early. The
// files are linted on one worker per CPU; the findings do not depend on
// the order the workers finish in.
func Lint(files []*File, cfg *Config) []Finding {
	found := lintAll(len(files), func(i int, _ *worker) *File { return files[i] }, cfg, nil)
	return sortedFindings(found)
}

// sortedFindings joins the findings of each file, in the order of the
// files, and sorts them: the sort is stable, so findings equal in path,
// position, check and message keep the order of the files.
func sortedFindings(perFile [][]Finding) []Finding {
	out := slices.Concat(perFile...)
	SortFindings(out)
	return dedupe(out)
}

// dedupe drops a finding equal to the one before it: a YAML alias lists
// one node in several rules, and each would report it at the same place.
func dedupe(fs []Finding) []Finding {
	out := fs[:0]
	for i, f := range fs {
		if i > 0 {
			p := fs[i-1]
			if p.Path == f.Path && p.Range == f.Range && p.Check == f.Check && p.Message == f.Message {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// loaderCheck returns the loader's check (registry.go) of that name, or
// nil for a check that has a function of its own.
func loaderCheck(name string) *Check {
	for _, ch := range Checks() {
		if ch.Name == name && ch.Rule == nil && ch.Group == nil && ch.File == nil && ch.Notifier == nil {
			return ch
		}
	}
	return nil
}

// fileFindings are what the checks found in one file: the findings, and
// those that stand only if no file before it records a name.
type fileFindings struct {
	found   []Finding
	pending []pendingFinding
}

// pendingFinding stands only if no file before its own in the run has a
// recording rule writing unlessRecorded (rule/dependency).
type pendingFinding struct {
	Finding
	unlessRecorded string
}

// lintFile runs the checks on one file, with the caches of worker w.
func lintFile(f *File, cfg *Config, w *worker) fileFindings {
	var out fileFindings
	for _, p := range f.Problems {
		if ch := loaderCheck(p.Check); ch != nil {
			if matchesAny(cfg.Disabled, ch.Name) {
				continue
			}
			if s, ok := cfg.Severity[ch.Name]; ok {
				p.Severity = s
			}
		}
		out.found = append(out.found, p)
	}
	for _, ch := range Checks() {
		if !cfg.Enabled(ch) {
			continue
		}
		p := &Pass{File: f, Config: cfg, check: ch, out: &out.found, pending: &out.pending, worker: w}
		if ch.File != nil {
			ch.File(p, f)
		}
		for _, g := range f.Groups {
			if ch.Group != nil {
				p.group, p.rule = g, nil
				ch.Group(p, g)
			}
			if ch.Rule != nil {
				for _, r := range g.Rules {
					p.group, p.rule = g, r
					ch.Rule(p, r)
				}
			}
		}
	}
	d := parseDirectives(f)
	out.found = slices.DeleteFunc(out.found, d.silences)
	out.pending = slices.DeleteFunc(out.pending, func(pf pendingFinding) bool { return d.silences(pf.Finding) })
	return out
}

var directiveRe = regexp.MustCompile(`paged:(disable-file|disable)\s+([^#]*)`)

// directives are the checks silenced by comments: "# paged:disable CHECK"
// on the lines just above a rule or at the end of any of its lines, and
// "# paged:disable-file CHECK" anywhere.
type directives struct {
	file  []string
	rules []ruleSpan
}

type ruleSpan struct {
	start, end int
	checks     []string
}

func parseDirectives(f *File) directives {
	var d directives
	if !bytes.Contains(f.Content, []byte("paged:disable")) {
		return d
	}
	for i := 1; i <= f.index.lines(); i++ {
		line := f.index.line(i)
		if !strings.Contains(line, "paged:disable-file") {
			continue
		}
		for _, m := range directiveRe.FindAllStringSubmatch(commentPart(line), -1) {
			if m[1] == "disable-file" {
				d.file = append(d.file, splitChecks(m[2])...)
			}
		}
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			span := ruleSpan{start: r.Node.Line, end: nodeEndLine(r.Node)}
			collect := func(line string) {
				for _, m := range directiveRe.FindAllStringSubmatch(commentPart(line), -1) {
					if m[1] == "disable" {
						span.checks = append(span.checks, splitChecks(m[2])...)
					}
				}
			}
			for l := span.start; l <= span.end; l++ {
				collect(f.index.line(l))
			}
			for l := span.start - 1; l >= 1; l-- {
				t := strings.TrimSpace(f.index.line(l))
				if !strings.HasPrefix(t, "#") {
					break
				}
				collect(t)
			}
			if len(span.checks) > 0 {
				d.rules = append(d.rules, span)
			}
		}
	}
	return d
}

// commentPart returns the text after the first # that starts a comment.
func commentPart(line string) string {
	inS, inD := false, false
	for i, c := range line {
		switch {
		case c == '\'' && !inD:
			inS = !inS
		case c == '"' && !inS:
			inD = !inD
		case c == '#' && !inS && !inD && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[i:]
		}
	}
	return ""
}

func splitChecks(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}

func nodeEndLine(n *yaml.Node) int {
	end := n.Line
	for _, c := range n.Content {
		if l := nodeEndLine(c); l > end {
			end = l
		}
	}
	if n.Kind == yaml.ScalarNode && (n.Style == yaml.LiteralStyle || n.Style == yaml.FoldedStyle) {
		end += strings.Count(n.Value, "\n")
	}
	return end
}

// silences reports whether a directive silences the finding.
func (d directives) silences(fd Finding) bool {
	if matchesAny(d.file, fd.Check) {
		return true
	}
	for _, s := range d.rules {
		if fd.Range.Start.Line >= s.start && fd.Range.Start.Line <= s.end && matchesAny(s.checks, fd.Check) {
			return true
		}
	}
	return false
}
