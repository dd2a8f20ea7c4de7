package rules

import (
	"fmt"

	"github.com/prometheus/prometheus/promql/parser/posrange"
	"go.yaml.in/yaml/v3"
)

// Check is one lint check. A check looks at one rule, one group or one file;
// set the function for the scope it works at. Checks are immutable values
// listed in the registry (registry.go).
type Check struct {
	Name     string   // "promql/counter": area/name
	Help     string   // one sentence for `paged lint --list-checks` and docs
	Severity Severity // default severity, overridable in .paged-lint.yaml
	// Online checks need a live Prometheus (--prometheus URL).
	Online bool

	Rule  func(p *Pass, r *Rule)
	Group func(p *Pass, g *Group)
	File  func(p *Pass, f *File)
	// Notifier checks look at the notifier block of a paged.yaml (or an
	// alertmanager.yml) with the alerts its rules can send
	// (LintNotifier); rule files never reach them.
	Notifier func(p *Pass, n *Notifier)
}

// Pass is what a check gets while it runs: the file, the configuration and
// a way to report.
type Pass struct {
	File   *File
	Config *Config
	check  *Check
	out    *[]Finding
	group  *Group
	rule   *Rule
	// pending are findings that stand only if no file before this one
	// records a name (reportUnlessRecordedBefore); worker holds the
	// caches of the goroutine running the check. Both are nil outside a
	// lint run.
	pending *[]pendingFinding
	worker  *worker
}

// Report records a finding at rng with the check's configured severity.
func (p *Pass) Report(rng Range, format string, args ...any) {
	p.ReportSeverity(p.Config.severity(p.check), rng, format, args...)
}

// ReportSeverity records a finding with an explicit severity (for checks
// whose findings differ in weight). A configured override still wins.
func (p *Pass) ReportSeverity(sev Severity, rng Range, format string, args ...any) {
	*p.out = append(*p.out, p.finding(sev, rng, format, args...))
}

// reportUnlessRecordedBefore is ReportSeverity for a finding that stands
// only if no file before this one, in the run's order, has a recording
// rule writing name: files are linted in any order, so the run decides
// once it has read them all. Outside a run there is no file before.
func (p *Pass) reportUnlessRecordedBefore(name string, sev Severity, rng Range, format string, args ...any) {
	if p.pending == nil {
		p.ReportSeverity(sev, rng, format, args...)
		return
	}
	*p.pending = append(*p.pending, pendingFinding{Finding: p.finding(sev, rng, format, args...), unlessRecorded: name})
}

func (p *Pass) finding(sev Severity, rng Range, format string, args ...any) Finding {
	if s, ok := p.Config.Severity[p.check.Name]; ok {
		sev = s
	}
	f := Finding{
		Path:     p.File.Path,
		Range:    rng,
		Severity: sev,
		Check:    p.check.Name,
		Message:  fmt.Sprintf(format, args...),
	}
	if p.group != nil {
		f.Group = p.group.Name.Value
	}
	if p.rule != nil {
		f.Rule = p.rule.Name()
		if p.rule.Group != nil {
			f.Group = p.rule.Group.Name.Value
		}
	}
	return f
}

// ReportNode reports at a YAML node.
func (p *Pass) ReportNode(n *yaml.Node, format string, args ...any) {
	p.Report(p.File.NodeRange(n), format, args...)
}

// ReportExpr reports at a position range inside a rule's expression, as
// the PromQL parser gives it on every AST node (node.PositionRange()).
func (p *Pass) ReportExpr(r *Rule, pr posrange.PositionRange, format string, args ...any) {
	p.Report(p.File.ExprRange(r.Expr, int(pr.Start), int(pr.End)), format, args...)
}

// ReportRuleNode reports at a YAML node on behalf of rule r, for checks
// that work on a whole file: the finding carries r's name and group.
func (p *Pass) ReportRuleNode(r *Rule, n *yaml.Node, format string, args ...any) {
	saved := p.rule
	p.rule = r
	p.ReportNode(n, format, args...)
	p.rule = saved
}
