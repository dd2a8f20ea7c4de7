package rules

import (
	"sort"

	"github.com/prometheus/prometheus/promql/parser"
)

// RemovedRecord is a recording rule that a base revision of the rule
// files defines and the files being linted no longer do.
type RemovedRecord struct {
	Name string
	Path string // the file it was in, at the base revision
	Line int
	Base string // the revision, for messages ("main")
}

// A recording rule deleted or renamed while other rules still read its
// series: they silently see no data (an alert on it never fires again).
// With `paged lint --base REV` the linter knows which recording rules
// the change removed; every rule still selecting one is reported.
//
// Without --base it notes (info) a rule that reads a recording rule
// defined later in its own group: a group's rules run in order, so it
// reads the previous evaluation's value. (Reading another group's
// recording rule has the same lag, but mixins do it everywhere on purpose;
// it is not reported.)
var checkRuleDependency = &Check{
	Name: "rule/dependency",
	Help: "With --base REV: no rule selects a recording rule that the change removed or renamed (its series stops being written, " +
		"and rules reading it see nothing). As info: a rule reading a recording rule defined later in its own group reads the " +
		"previous evaluation's value.",
	Severity: Warning,
	File:     lintDependency,
}

func lintDependency(p *Pass, f *File) {
	writers := recordWriters(f)
	for _, g := range f.Groups {
		for i, r := range g.Rules {
			if !ruleExprOK(r) {
				continue
			}
			walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
				vs, ok := n.(*parser.VectorSelector)
				if !ok {
					return
				}
				name, ok := selectorName(vs)
				if !ok {
					return
				}
				saved := p.rule
				p.group, p.rule = g, r
				defer func() { p.rule = saved }()
				if rm, ok := p.Config.RemovedRecords[name]; ok {
					p.ReportExpr(r, safeRange(vs), "%s is written by the recording rule at %s:%d in %s, which this change removes: "+
						"nothing writes it any more, so this rule sees no data", name, rm.Path, rm.Line, rm.Base)
					return
				}
				w, ok := writers[name]
				if !ok || w.rule == r {
					return
				}
				switch {
				case w.group == g && w.index > i:
					// Unless a file before this one writes name first.
					p.reportUnlessRecordedBefore(name, Info, p.File.ExprRange(r.Expr, int(safeRange(vs).Start), int(safeRange(vs).End)),
						"%s is written by the recording rule at line %d, later in this group: rules run in order, so this one reads "+
							"the previous evaluation's value (move the recording rule above it)", name, w.rule.Node.Line)
				}
			})
		}
	}
}

// writer is the recording rule that writes a name, for rule/dependency.
type writer struct {
	group *Group
	rule  *Rule
	index int
}

// recordWriters maps each name recorded in a file to the first rule of the
// file that writes it. Whether a file before it writes the name too is
// the lint run's to tell (reportUnlessRecordedBefore).
func recordWriters(f *File) map[string]writer {
	out := map[string]writer{}
	for _, g := range f.Groups {
		for i, r := range g.Rules {
			if r.Record == nil || r.Record.Value == "" {
				continue
			}
			if _, ok := out[r.Record.Value]; !ok {
				out[r.Record.Value] = writer{group: g, rule: r, index: i}
			}
		}
	}
	return out
}

// RemovedRecords compares the recording rules of a base revision with the
// files being linted: the names recorded at base and by none of the
// current files (a rule moved to another file is not removed).
func RemovedRecords(base, current []*File, rev string) map[string]RemovedRecord {
	now := map[string]bool{}
	for _, f := range current {
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if r.Record != nil {
					now[r.Record.Value] = true
				}
			}
		}
	}
	out := map[string]RemovedRecord{}
	sort.SliceStable(base, func(i, j int) bool { return base[i].Path < base[j].Path })
	for _, f := range base {
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if r.Record == nil || now[r.Record.Value] {
					continue
				}
				if _, seen := out[r.Record.Value]; !seen {
					out[r.Record.Value] = RemovedRecord{Name: r.Record.Value, Path: f.Path, Line: r.Record.Node.Line, Base: rev}
				}
			}
		}
	}
	return out
}
