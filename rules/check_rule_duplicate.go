package rules

import (
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Two rules with the same name and the same labels write the same series
// (recording rules) or fight over the same alert identity (alerting
// rules): Prometheus's promtool reports the first case as a lint warning.
//
// Rules whose selectors are disjoint on a label that both results keep
// (code=~"2.." and code=~"3..", kept by sum by (code)) write different
// series and are not reported. Two alerts of one name are a common idiom
// for one condition measured several ways; they are reported only when
// they read the same metrics and their selectors overlap, so that their
// alerts certainly share identities.
var checkRuleDuplicate = &Check{
	Name:     "rule/duplicate",
	Help:     "No two rules in a file share a name and label set and select overlapping series (they would produce the same series or alert).",
	Severity: Warning,
	File:     lintDuplicates,
}

func lintDuplicates(p *Pass, f *File) {
	type key struct{ name, labels string }
	first := map[key][]*Rule{}
	seen := map[*Rule]bool{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			name := r.Name()
			if name == "" || seen[r] {
				continue
			}
			seen[r] = true // YAML aliases can list one rule node twice
			var ls []string
			for _, kv := range r.Labels {
				ls = append(ls, kv.Key.Value+"="+kv.Value.Value)
			}
			slices.Sort(ls)
			k := key{name, strings.Join(ls, ",")}
			var prev *Rule
			for _, q := range first[k] {
				if q.Node == r.Node {
					prev = nil
					break
				}
				if rulesOverlap(q, r) {
					prev = q
					break
				}
			}
			first[k] = append(first[k], r)
			if prev == nil {
				continue
			}
			kind := "recording rule"
			what := "both write the same series"
			if r.IsAlert() {
				kind = "alert"
				what = "alerts from both share one identity and flap between their annotations"
			}
			n := r.Node
			if r.Alert != nil {
				n = r.Alert.Node
			} else if r.Record != nil {
				n = r.Record.Node
			}
			if n.Line < r.Node.Line {
				n = r.Node // the name is an alias of a node defined above
			}
			p.ReportRuleNode(r, n, "%s %q with the same labels is already defined at line %d (group %q): %s",
				kind, name, prev.Node.Line, prev.Group.Name.Value, what)
		}
	}
}

// rulesOverlap reports whether two rules of one name and label set can
// produce the same series.
func rulesOverlap(a, b *Rule) bool {
	if a.Expr == nil || b.Expr == nil || a.Expr.AST == nil || b.Expr.AST == nil {
		return !a.IsAlert() // unparsed: say what promtool says for records
	}
	if a.Expr.Value == b.Expr.Value {
		return true
	}
	if disjointOnKeptLabel(a.Expr.AST, b.Expr.AST) {
		return false
	}
	if a.IsAlert() {
		// Two conditions on one metric (value == 0 for 24h, value > 0
		// and stale) are one alert written twice on purpose; only the same
		// expression up to its label matchers is a duplicate.
		return exprShape(a.Expr.AST) == exprShape(b.Expr.AST)
	}
	return true
}

// exprShape prints an expression with the label matchers of its
// selectors removed.
func exprShape(e parser.Expr) string {
	return matchersRe.ReplaceAllString(e.String(), "")
}

var matchersRe = regexp.MustCompile(`\{(?:[^{}"]|"(?:\\.|[^"\\])*")*\}`)

// disjointOnKeptLabel: some label is kept by both results and every
// selector of one excludes every value the other allows.
func disjointOnKeptLabel(a, b parser.Expr) bool {
	if usesFunc(a, "label_replace", "label_join") || usesFunc(b, "label_replace", "label_join") {
		return false
	}
	outA, outB := outputLabels(a), outputLabels(b)
	names := map[string]bool{}
	walkAST(a, func(n parser.Node, _ []parser.Node) {
		if vs, ok := n.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m == nil {
					continue
				}
				if m.Name != labels.MetricName {
					names[m.Name] = true
				}
			}
		}
	})
	for name := range names {
		if outA.has(name) && outB.has(name) && selectorsDisjoint(a, b, name) {
			return true
		}
	}
	return false
}

// usesFunc reports whether e calls any of the named functions.
func usesFunc(e parser.Expr, names ...string) bool {
	found := false
	walkAST(e, func(n parser.Node, _ []parser.Node) {
		if c, ok := n.(*parser.Call); ok && c.Func != nil && slices.Contains(names, c.Func.Name) {
			found = true
		}
	})
	return found
}
