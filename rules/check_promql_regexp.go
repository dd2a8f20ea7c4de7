package rules

import (
	"regexp"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Label matchers whose regexp says something else than it seems to.
// Mistakes that change what is selected are warnings; regexps that
// select what they mean in a roundabout way are info.
var checkPromQLRegexp = &Check{
	Name: "promql/regexp",
	Help: "Label regexps mean what they seem to: no = with a regexp-looking value (it compares literally), no !~\".*\" " +
		"(matches nothing); as info, anchors Prometheus adds anyway, =~ on a plain string, =~\".*\" and substring patterns like \".*x.*\".",
	Severity: Warning,
	Rule:     lintRegexp,
}

// wildcardBetween: fixed text, a wildcard, fixed text (foo.+_bar), as
// pint's "smelly regexp selector".
var wildcardBetween = regexp.MustCompile(`^[\w-]+\.[*+][\w-]+$`)

var regexpLooking = regexp.MustCompile(`\.\*|\.\+|\\d|\[\^|\[[0-9a-z]-[0-9a-z]\]|\(\?i\)`)

func lintRegexp(p *Pass, r *Rule) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return
		}
		for _, m := range vs.LabelMatchers {
			if m == nil {
				continue
			}
			if m.Name == labels.MetricName && vs.Name != "" {
				continue // the name matcher the parser adds
			}
			if m.Type == labels.MatchEqual || m.Type == labels.MatchNotEqual {
				if !regexpLooking.MatchString(m.Value) {
					continue
				}
			} else if !smellyRegexp(m) {
				continue
			}
			// Only now, for a finding: locating the matcher in the text costs.
			mr := p.matcherRange(r.Expr, vs, m.Name)
			rng := p.File.ExprRange(r.Expr, int(mr.Start), int(mr.End))
			sel := m.String()
			switch m.Type {
			case labels.MatchEqual, labels.MatchNotEqual:
				if regexpLooking.MatchString(m.Value) {
					op := "=~"
					if m.Type == labels.MatchNotEqual {
						op = "!~"
					}
					p.Report(rng, "%s compares the value literally, and %q looks like a regexp: did you mean %s%s%q?",
						sel, m.Value, m.Name, op, m.Value)
				}
				continue
			}
			v := m.Value
			neg := m.Type == labels.MatchNotRegexp
			switch {
			case v == ".*" && neg:
				p.Report(rng, "%s matches no series at all (every value, the empty one included, matches .*)", sel)
			case v == ".*":
				p.ReportSeverity(Info, rng, "%s matches every series, with or without the label: remove it", sel)
			case v == ".+" && !neg:
				p.ReportSeverity(Info, rng, "%s is %s!=\"\": the label is set", sel, m.Name)
			case hasAnchor(v):
				p.ReportSeverity(Info, rng, "%s: Prometheus anchors label regexps at both ends, so ^ and $ are redundant", sel)
			case regexp.QuoteMeta(v) == v:
				op := "="
				if neg {
					op = "!="
				}
				p.ReportSeverity(Info, rng, "%s has no regexp syntax: %s%s%q says the same and reads plainer", sel, m.Name, op, v)
			case !neg && strings.HasPrefix(v, ".*") && strings.HasSuffix(v, ".*") && len(v) > 4 &&
				regexp.QuoteMeta(strings.TrimSuffix(strings.TrimPrefix(v, ".*"), ".*")) == strings.TrimSuffix(strings.TrimPrefix(v, ".*"), ".*"):
				p.ReportSeverity(Info, rng, "%s matches every value that contains %q anywhere (a job called \"old-%s-test\" too): "+
					"match the value you mean", sel, v[2:len(v)-2], v[2:len(v)-2])
			case !neg && wildcardBetween.MatchString(v):
				p.ReportSeverity(Info, rng, "%s picks values apart by their text (anything between the fixed parts): "+
					"a label per part, or the exact values, says what it means", sel)
			}
		}
	})
}

// smellyRegexp is a quick test for the =~ and !~ cases lintRegexp reports.
func smellyRegexp(m *labels.Matcher) bool {
	v := m.Value
	return v == ".*" || v == ".+" || hasAnchor(v) || regexp.QuoteMeta(v) == v ||
		strings.HasPrefix(v, ".*") && strings.HasSuffix(v, ".*") || wildcardBetween.MatchString(v)
}

// hasAnchor: a leading ^ or a trailing unescaped $.
func hasAnchor(v string) bool {
	if strings.HasPrefix(v, "^") {
		return true
	}
	if strings.HasSuffix(v, "$") {
		n := 0
		for i := len(v) - 2; i >= 0 && v[i] == '\\'; i-- {
			n++
		}
		return n%2 == 0
	}
	return false
}
