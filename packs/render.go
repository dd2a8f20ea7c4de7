package packs

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/rules"
)

// SourcePrefix starts the name under which a pack's rules run: the "file"
// of its groups in /api/v1/rules, the path of lint findings in it.
const SourcePrefix = "pack:"

// Rendered is a pack with its overrides applied: one Prometheus rule file.
type Rendered struct {
	Pack      *Pack
	Overrides Overrides
	// Source names the rules where a file name goes: "pack:vllm".
	Source string
	// Content is the rule file. Lines of lint findings in it are lines
	// of this text, which `paged packs show` prints.
	Content []byte
	// File is Content parsed, with positions.
	File *rules.File
}

// RuleGroups returns the groups as Prometheus's rule loader returns them.
func (r *Rendered) RuleGroups() *rulefmt.RuleGroups { return r.File.RuleGroups() }

// Alerts returns the number of alerting rules left after disable.
func (r *Rendered) Alerts() int {
	n := 0
	for _, g := range r.File.Groups {
		for _, rule := range g.Rules {
			if rule.IsAlert() {
				n++
			}
		}
	}
	return n
}

// Apply returns the pack with the overrides applied. Every override that
// cannot apply is reported, in an Errors: an alert name the pack does not
// have, a selector that does not parse, a threshold for an alert whose
// expression has no top-level comparison with a number, a severity that is
// not one of critical, warning, info.
func (p *Pack) Apply(o Overrides) (*Rendered, error) {
	matchers, errs := o.checkValues()
	known := map[string]bool{}
	for _, a := range p.alerts {
		known[a] = true
	}
	disabled := map[string]int{}
	for i, name := range o.Disable {
		switch {
		case !known[name]:
			errs = append(errs, &Error{Key: KeyDisable, Name: name, Index: i, Offset: -1, Msg: p.unknownAlert(name)})
		case hasKey(disabled, name):
			errs = append(errs, &Error{Key: KeyDisable, Name: name, Index: i, Offset: -1, Msg: fmt.Sprintf("%s is listed twice", name)})
		default:
			disabled[name] = i
		}
	}
	for _, k := range []struct {
		key   string
		names []string
	}{
		{KeySet, sortedKeys(o.Set)},
		{KeyFor, sortedKeys(o.For)},
		{KeySeverity, sortedKeys(o.Severity)},
	} {
		for _, name := range k.names {
			if !known[name] {
				errs = append(errs, &Error{Key: k.key, Name: name, Offset: -1, Msg: p.unknownAlert(name)})
			} else if i, off := disabled[name]; off {
				errs = append(errs, &Error{Key: k.key, Name: name, Offset: -1, Msg: fmt.Sprintf("%s is disabled (disable[%d]): remove one of the two", name, i)})
			}
		}
	}
	if len(errs) > 0 {
		return nil, sortErrors(errs)
	}

	r := &renderer{o: o, matchers: matchers, disabled: disabled, parser: parser.NewParser(parser.Options{})}
	var (
		doc    *yaml.Node
		groups = &yaml.Node{Kind: yaml.SequenceNode}
	)
	for _, src := range p.files {
		var d yaml.Node
		if err := yaml.Unmarshal(src.content, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", src.path, err)
		}
		gs := mapValue(docMapping(&d), "groups")
		if gs == nil || gs.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%s: no groups: list", src.path)
		}
		if doc == nil {
			doc = &d
			setMapValue(docMapping(doc), "groups", groups)
		}
		for _, g := range gs.Content {
			if r.group(g) {
				groups.Content = append(groups.Content, g)
			}
		}
	}
	if len(r.errs) > 0 {
		return nil, sortErrors(r.errs)
	}
	if doc == nil {
		return nil, fmt.Errorf("pack %s has no rule files", p.Name)
	}
	var buf bytes.Buffer
	if o.Empty() && len(p.files) == 1 {
		// Nothing to rewrite: the file as its authors wrote it, blank
		// lines and all.
		buf.WriteString(comment(p.header(o)) + "\n\n")
		buf.Write(p.files[0].content)
	} else {
		doc.HeadComment = strings.TrimSpace(comment(p.header(o)) + "\n" + doc.HeadComment)
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return nil, fmt.Errorf("pack %s: %w", p.Name, err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("pack %s: %w", p.Name, err)
		}
	}
	out := &Rendered{Pack: p, Overrides: o, Source: SourcePrefix + p.Name, Content: buf.Bytes()}
	out.File = rules.ParseFile(out.Source, out.Content, rules.ParseOptions{})
	if p.Builtin {
		out.File.Runbooks = Runbooks()
	}
	if fe := out.File.Errors(); len(fe) > 0 {
		// The overrides are checked above; a rewrite that breaks the file
		// is paged's bug, reported as such rather than loaded.
		return nil, fmt.Errorf("pack %s: the rewritten rules do not load: %w", p.Name, errors.Join(fe...))
	}
	return out, nil
}

// header is the comment that starts the rewritten file.
func (p *Pack) header(o Overrides) string {
	var b strings.Builder
	origin := "built into paged"
	if !p.Builtin {
		origin = "from " + p.Dir
	}
	fmt.Fprintf(&b, "Rule pack %s (%s", p.Name, origin)
	if p.Versions != "" {
		fmt.Fprintf(&b, "; %s versions %s", cmp.Or(p.Server, p.Name), p.Versions)
	}
	b.WriteString(")")
	if p.Description != "" {
		b.WriteString(": " + p.Description)
	}
	b.WriteString(".\n")
	if p.Notes != "" {
		b.WriteString(wrap(p.Notes, 76))
	}
	var parts []string
	if o.Selector != "" {
		parts = append(parts, "selector "+o.Selector)
	}
	add := func(key string, m map[string]string) {
		if len(m) == 0 {
			return
		}
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kv = append(kv, k+"="+m[k])
		}
		parts = append(parts, key+" "+strings.Join(kv, ", "))
	}
	add(KeySet, mapValues(o.Set, func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }))
	add(KeyFor, mapValues(o.For, model.Duration.String))
	add(KeySeverity, o.Severity)
	add(KeyLabels, o.Labels)
	if len(o.Disable) > 0 {
		parts = append(parts, "disable "+strings.Join(o.Disable, ", "))
	}
	if len(parts) == 0 {
		b.WriteString("No overrides.\n")
	} else {
		b.WriteString(wrap("Overrides: "+strings.Join(parts, "; ")+".", 76))
	}
	if o.RunbookBaseURL != nil || o.RunbookSuffix != "" {
		link := RunbookLink(p.Name+"/<Alert>.md", o)
		b.WriteString("Relative runbook links now point at " + link + ".\n")
	}
	return b.String()
}

// comment turns lines of text into YAML comment lines.
func comment(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("# "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// wrap breaks text into lines of at most width characters.
func wrap(text string, width int) string {
	var b, line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(w) > width {
			b.WriteString(line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteString(" ")
		}
		line.WriteString(w)
	}
	if line.Len() > 0 {
		b.WriteString(line.String() + "\n")
	}
	return b.String()
}

func mapValues[V any](m map[string]V, f func(V) string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}

// renderer rewrites the rule nodes of one pack.
type renderer struct {
	o        Overrides
	matchers []*labels.Matcher
	disabled map[string]int
	parser   parser.Parser
	errs     Errors
}

// group rewrites a group's rules in place and reports whether any is left.
func (r *renderer) group(g *yaml.Node) bool {
	rs := mapValue(g, "rules")
	if rs == nil || rs.Kind != yaml.SequenceNode {
		return true
	}
	kept := rs.Content[:0]
	for _, rule := range rs.Content {
		alert := mapValue(rule, "alert")
		if alert != nil && hasKey(r.disabled, alert.Value) {
			continue
		}
		r.rule(rule, alert)
		kept = append(kept, rule)
	}
	rs.Content = kept
	return len(kept) > 0
}

func (r *renderer) rule(rule, alert *yaml.Node) {
	name := ""
	if alert != nil {
		name = alert.Value
	}
	threshold, setThreshold := r.o.Set[name]
	setThreshold = setThreshold && alert != nil
	if exprNode := mapValue(rule, "expr"); exprNode != nil && (len(r.matchers) > 0 || setThreshold) {
		expr, err := r.parser.ParseExpr(exprNode.Value)
		if err != nil {
			r.errs = append(r.errs, &Error{Key: KeySelector, Offset: -1, Msg: fmt.Sprintf("rule %s: %v", name, err)})
			return
		}
		if len(r.matchers) > 0 {
			injectMatchers(expr, r.matchers)
		}
		if setThreshold {
			th := rules.SplitThreshold(expr)
			if th == nil {
				r.errs = append(r.errs, &Error{Key: KeySet, Name: name, Offset: -1,
					Msg: fmt.Sprintf("%s has no threshold to set: its expression has no top-level comparison with a number (%s)", name, oneLine(expr.String()))})
			} else {
				th.Set(threshold)
			}
		}
		// expr.String(), as /api/v1/rules prints the query: one line,
		// the same text everywhere the rule shows.
		exprNode.Value, exprNode.Style, exprNode.Tag = expr.String(), yaml.LiteralStyle, "!!str"
	}
	if alert == nil {
		return
	}
	if d, ok := r.o.For[name]; ok {
		setScalar(rule, "for", d.String(), "expr")
	}
	if len(r.o.Labels) > 0 || r.o.Severity[name] != "" {
		lbls := mapValue(rule, "labels")
		if lbls == nil || lbls.Kind != yaml.MappingNode {
			lbls = &yaml.Node{Kind: yaml.MappingNode}
			setMapValue(rule, "labels", lbls)
		}
		for _, k := range sortedKeys(r.o.Labels) {
			setScalar(lbls, k, r.o.Labels[k], "")
		}
		if s := r.o.Severity[name]; s != "" {
			setScalar(lbls, "severity", s, "")
		}
	}
	if r.o.RunbookBaseURL != nil || r.o.RunbookSuffix != "" {
		if ann := mapValue(rule, "annotations"); ann != nil {
			if n := mapValue(ann, "runbook_url"); n != nil && n.Kind == yaml.ScalarNode {
				n.Value = RunbookLink(n.Value, r.o)
			}
		}
	}
}

// injectMatchers adds ms to every vector selector of expr. A matcher
// replaces the selector's matchers on the same label.
func injectMatchers(expr parser.Expr, ms []*labels.Matcher) {
	names := map[string]bool{}
	for _, m := range ms {
		names[m.Name] = true
	}
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		kept := make([]*labels.Matcher, 0, len(vs.LabelMatchers)+len(ms))
		for _, m := range vs.LabelMatchers {
			if !names[m.Name] {
				kept = append(kept, m)
			}
		}
		for _, m := range ms {
			c := *m
			kept = append(kept, &c)
		}
		vs.LabelMatchers = kept
		return nil
	})
}

// RunbookLink applies o's RunbookSuffix and RunbookBaseURL to a
// runbook_url: relative links only; absolute ones stay as they are.
func RunbookLink(ref string, o Overrides) string {
	if ref == "" || strings.Contains(ref, "://") {
		return ref
	}
	if o.RunbookSuffix != "" {
		if base, ok := strings.CutSuffix(ref, ".md"); ok {
			ref = base + o.RunbookSuffix
		}
	}
	if o.RunbookBaseURL != nil {
		if abs := rules.ResolveRunbook(ref, o.RunbookBaseURL); abs != "" {
			return abs
		}
	}
	return ref
}

func (p *Pack) unknownAlert(name string) string {
	msg := fmt.Sprintf("pack %s has no alert %s", p.Name, name)
	if s := closest(name, p.alerts); s != "" {
		return msg + ": did you mean " + s + "?"
	}
	return msg + " (its alerts: " + strings.Join(p.alerts, ", ") + ")"
}

var keyOrder = []string{KeySelector, KeySet, KeyFor, KeySeverity, KeyLabels, KeyDisable}

func sortErrors(es Errors) Errors {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(slices.Index(keyOrder, a.Key), slices.Index(keyOrder, b.Key)),
			cmp.Compare(a.Index, b.Index),
			cmp.Compare(a.Name, b.Name),
		)
	})
	return es
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func docMapping(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	return doc
}

// mapValue returns the value of key in a mapping node, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setMapValue sets key in a mapping node, appending it when missing.
func setMapValue(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// setScalar sets key to a string value. A new key goes after the key named
// after, or at the end.
func setScalar(m *yaml.Node, key, value, after string) {
	if n := mapValue(m, key); n != nil {
		*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, LineComment: n.LineComment}
		return
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if after != "" && m.Content[i].Value == after {
			m.Content = slices.Insert(m.Content, i+2, k, v)
			return
		}
	}
	m.Content = append(m.Content, k, v)
}
