package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// Names of the checks the loader itself reports.
const (
	CheckYAMLParse    = "yaml/parse"
	CheckStructure    = "rule/structure"
	CheckPromQLSyntax = "promql/syntax"
	// CheckAlertsTemplate: an alerting rule's label or annotation
	// template does not parse (check_alerts_template.go).
	CheckAlertsTemplate = "alerts/template"
)

// Kind of rule file.
type Kind int

const (
	KindPrometheus     Kind = iota // a Prometheus rule file: groups:
	KindPrometheusRule             // Kubernetes PrometheusRule manifests
	KindMimir                      // Mimir/Cortex ruler namespace files (mimirtool rules load)
)

// File is one parsed rule file. Every node keeps its position; a rule that
// does not validate is still present, with its problems in Problems, so that
// the other rules are still checked.
type File struct {
	Path     string
	Content  []byte
	Kind     Kind
	Groups   []*Group
	Problems []Finding // found while loading: YAML, structure, PromQL syntax
	// Runbooks, when set, is where the relative runbook links of a file
	// that is not on disk are looked up (a built-in pack's runbooks).
	Runbooks fs.FS

	index *lineIndex
}

// Group is a rule group.
type Group struct {
	File        *File
	Node        *yaml.Node // the group's mapping
	Name        Scalar
	Interval    *Duration
	QueryOffset *Duration
	Limit       int
	Labels      []KV
	Rules       []*Rule
}

// Rule is an alerting or recording rule.
type Rule struct {
	Group         *Group
	Node          *yaml.Node // the rule's mapping
	Alert         *Scalar
	Record        *Scalar
	Expr          *Expr
	For           *Duration
	KeepFiringFor *Duration
	Labels        []KV
	Annotations   []KV
	// LabelsNode and AnnotationsNode are the mappings, when present.
	LabelsNode      *yaml.Node
	AnnotationsNode *yaml.Node
}

// Scalar is a string value with the node it came from.
type Scalar struct {
	Value string
	Node  *yaml.Node
}

// KV is one entry of a labels or annotations map.
type KV struct {
	Key   Scalar
	Value Scalar
}

// Duration is a Prometheus duration with its node.
type Duration struct {
	Value model.Duration
	Node  *yaml.Node
}

// Expr is a rule's PromQL expression: its text, its AST (nil when it did not
// parse) and the parse error.
type Expr struct {
	Scalar
	AST parser.Expr
	Err error

	offsets []int // file offset of each byte of Value, built on demand
}

// Name is the alert or record name, or "" when neither is set.
func (r *Rule) Name() string {
	switch {
	case r.Alert != nil:
		return r.Alert.Value
	case r.Record != nil:
		return r.Record.Value
	}
	return ""
}

// IsAlert reports whether the rule is an alerting rule.
func (r *Rule) IsAlert() bool { return r.Alert != nil }

// Label returns the value of a rule label and whether it is set.
func (r *Rule) Label(name string) (Scalar, bool) { return lookupKV(r.Labels, name) }

// Annotation returns the value of an annotation and whether it is set.
func (r *Rule) Annotation(name string) (Scalar, bool) { return lookupKV(r.Annotations, name) }

func lookupKV(kvs []KV, name string) (Scalar, bool) {
	for _, kv := range kvs {
		if kv.Key.Value == name {
			return kv.Value, true
		}
	}
	return Scalar{}, false
}

// Line returns the text of line n (1-based).
func (f *File) Line(n int) string { return f.index.line(n) }

// NodeRange returns the range of a node's text in the file.
func (f *File) NodeRange(n *yaml.Node) Range { return f.index.nodeRange(n) }

// ExprRange maps a position range inside an expression (byte offsets, as
// the PromQL parser reports them) to a range in the file.
func (f *File) ExprRange(e *Expr, start, end int) Range {
	if e == nil || e.Node == nil {
		return Range{Start: Pos{1, 1}, End: Pos{1, 1}}
	}
	if e.offsets == nil {
		e.offsets = f.index.scalarMap(e.Node)
	}
	return f.offsetsRange(e.offsets, e.Node, start, end)
}

// ValueRange maps byte offsets [start, end) of a scalar's value to a range
// in the file, following quoting and block scalars.
func (f *File) ValueRange(n *yaml.Node, start, end int) Range {
	if n == nil {
		return Range{Start: Pos{1, 1}, End: Pos{1, 1}}
	}
	return f.offsetsRange(f.index.scalarMap(n), n, start, end)
}

func (f *File) offsetsRange(offsets []int, n *yaml.Node, start, end int) Range {
	if len(offsets) == 0 {
		return f.NodeRange(n)
	}
	clamp := func(i int) int { return max(0, min(i, len(offsets)-1)) }
	if end <= start {
		end = start + 1
	}
	return Range{Start: f.index.pos(offsets[clamp(start)]), End: f.index.pos(offsets[clamp(end-1)])}
}

// HasErrors reports whether loading found an error-severity problem.
func (f *File) HasErrors() bool {
	for _, p := range f.Problems {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns the error-severity problems as errors.
func (f *File) Errors() []error {
	var errs []error
	for _, p := range f.Problems {
		if p.Severity == Error {
			errs = append(errs, errors.New(p.String()))
		}
	}
	return errs
}

// RuleGroups converts the file to Prometheus's rule group type, for the
// evaluation engine and the test runner. Rules that failed to load are left
// out; callers check HasErrors first.
func (f *File) RuleGroups() *rulefmt.RuleGroups {
	out := &rulefmt.RuleGroups{}
	for _, g := range f.Groups {
		rg := rulefmt.RuleGroup{Name: g.Name.Value, Limit: g.Limit}
		if g.Interval != nil {
			rg.Interval = g.Interval.Value
		}
		if g.QueryOffset != nil {
			d := g.QueryOffset.Value
			rg.QueryOffset = &d
		}
		if len(g.Labels) > 0 {
			rg.Labels = kvMap(g.Labels)
		}
		for _, r := range g.Rules {
			rr := rulefmt.Rule{Labels: kvMap(r.Labels), Annotations: kvMap(r.Annotations)}
			if r.Alert != nil {
				rr.Alert = r.Alert.Value
			}
			if r.Record != nil {
				rr.Record = r.Record.Value
			}
			if r.Expr != nil {
				rr.Expr = r.Expr.Value
			}
			if r.For != nil {
				rr.For = r.For.Value
			}
			if r.KeepFiringFor != nil {
				rr.KeepFiringFor = r.KeepFiringFor.Value
			}
			rg.Rules = append(rg.Rules, rr)
		}
		if rg.Rules == nil {
			rg.Rules = []rulefmt.Rule{}
		}
		out.Groups = append(out.Groups, rg)
	}
	return out
}

func kvMap(kvs []KV) map[string]string {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key.Value] = kv.Value.Value
	}
	return m
}

// ParseOptions tune how a file is read.
type ParseOptions struct {
	// IgnoreUnknownFields accepts keys Prometheus does not know, as
	// promtool's --ignore-unknown-fields does.
	IgnoreUnknownFields bool
	// Parser parses PromQL; nil means a parser with Prometheus's defaults
	// (duration expressions and extended range selectors are always on).
	Parser parser.Parser

	// templates, when set, is the cache of template actions known to
	// parse that a lint worker shares across its files.
	templates templateCache
}

// MaxFileSize is the largest rule file the loader reads.
const MaxFileSize = 64 << 20

// ParseFile parses a rule file's content. It never fails: problems are in
// the returned file's Problems.
func ParseFile(path string, content []byte, opts ParseOptions) *File {
	f := &File{Path: path, Content: content, index: newLineIndex(content)}
	if opts.Parser == nil {
		opts.Parser = parser.NewParser(parser.Options{})
	}
	w := &walker{f: f, opts: opts}
	w.parse()
	return f
}

type walker struct {
	f    *File
	opts ParseOptions
	tmpl templateCache // set at the first template
}

func (w *walker) problem(n *yaml.Node, check string, sev Severity, format string, args ...any) {
	w.f.Problems = append(w.f.Problems, Finding{
		Path:     w.f.Path,
		Range:    w.f.NodeRange(n),
		Severity: sev,
		Check:    check,
		Message:  fmt.Sprintf(format, args...),
	})
}

func (w *walker) ruleProblem(g *Group, r *Rule, n *yaml.Node, check string, format string, args ...any) {
	w.problem(n, check, Error, format, args...)
	p := &w.f.Problems[len(w.f.Problems)-1]
	if g != nil {
		p.Group = g.Name.Value
	}
	if r != nil {
		p.Rule = r.Name()
	}
}

var yamlLineRe = regexp.MustCompile(`line (\d+)(?:, column (\d+))?: (.*)`)

// yamlError turns a YAML decoder error into findings with positions.
func (w *walker) yamlError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var lines []string
	if strings.HasPrefix(msg, "unmarshal errors:") {
		lines = strings.Split(strings.TrimPrefix(msg, "unmarshal errors:\n"), "\n")
	} else {
		lines = []string{msg}
	}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		line, col := 1, 0
		if m := yamlLineRe.FindStringSubmatch(l); m != nil {
			line, _ = strconv.Atoi(m[1])
			if m[2] != "" {
				col, _ = strconv.Atoi(m[2])
			}
			l = m[3]
		}
		if line > w.f.index.lines() {
			line = w.f.index.lines()
		}
		if strings.Contains(l, "tab character") {
			// The decoder names the line of the node it was reading,
			// often the one above: point at the tab itself.
			if tl, tc := w.tabIndent(line); tl > 0 {
				line, col = tl, tc
			}
		}
		if col == 0 {
			col = firstNonSpace(w.f.index.line(line))
		}
		w.f.Problems = append(w.f.Problems, Finding{
			Path:     w.f.Path,
			Range:    Range{Start: Pos{line, col}, End: Pos{line, col}},
			Severity: Error,
			Check:    CheckYAMLParse,
			Message:  l,
		})
	}
}

// tabIndent finds the first line from `from` on whose indentation holds a
// tab, and the column of that tab.
func (w *walker) tabIndent(from int) (line, col int) {
	for l := max(from, 1); l <= w.f.index.lines() && l < from+50; l++ {
		text := w.f.index.line(l)
		for i, r := range text {
			if r == '\t' {
				return l, len([]rune(text[:i])) + 1
			}
			if r != ' ' && r != '-' {
				break
			}
		}
	}
	return 0, 0
}

func firstNonSpace(s string) int {
	for i, r := range s {
		if r != ' ' && r != '\t' {
			return len([]rune(s[:i])) + 1
		}
	}
	return 1
}

func (w *walker) parse() {
	if bytes.IndexByte(w.f.Content, 0) >= 0 || !isText(w.f.Content) {
		w.f.Problems = append(w.f.Problems, Finding{
			Path: w.f.Path, Range: Range{Start: Pos{1, 1}, End: Pos{1, 1}},
			Severity: Error, Check: CheckYAMLParse, Message: "not a text file (binary data)",
		})
		return
	}
	dec := yaml.NewDecoder(bytes.NewReader(w.f.Content))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.yamlError(err)
			return
		}
		docs = append(docs, &doc)
	}
	if len(docs) == 0 {
		return // an empty file has no groups, as in Prometheus
	}
	if isPrometheusRule(docs[0]) || (len(docs) > 1 && anyPrometheusRule(docs)) {
		w.f.Kind = KindPrometheusRule
		for _, d := range docs {
			w.prometheusRule(d)
		}
		return
	}
	if isNamespaceFile(docs[0]) {
		// mimirtool reads every document, each one namespace.
		w.f.Kind = KindMimir
		for _, d := range docs {
			w.namespaceDoc(d)
		}
		return
	}
	w.groupsDoc(docs[0])
	for _, d := range docs[1:] {
		if d.Kind == yaml.DocumentNode && len(d.Content) > 0 {
			w.problem(d.Content[0], CheckYAMLParse, Warning, "Prometheus reads only the first YAML document of a rule file; this one is ignored")
		}
	}
}

func isText(b []byte) bool {
	// Invalid UTF-8 makes the YAML decoder fail with no position; say why.
	if len(b) > 4096 {
		b = b[:4096]
	}
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 && len(b) >= 4 {
			return false
		}
		b = b[size:]
	}
	return true
}

func anyPrometheusRule(docs []*yaml.Node) bool {
	for _, d := range docs {
		if isPrometheusRule(d) {
			return true
		}
	}
	return false
}

func isPrometheusRule(doc *yaml.Node) bool {
	m := docRoot(doc)
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	kind, api := mapValue(m, "kind"), mapValue(m, "apiVersion")
	return kind != nil && kind.Value == "PrometheusRule" ||
		api != nil && strings.HasPrefix(api.Value, "monitoring.coreos.com/")
}

func docRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		return resolve(doc.Content[0])
	}
	return resolve(doc)
}

// resolve follows an alias to its anchor.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return resolve(m.Content[i+1])
		}
	}
	return nil
}

// entries lists a mapping's key/value pairs with merge keys (<<) applied,
// reporting duplicate keys.
func (w *walker) entries(m *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	seen := map[string]*yaml.Node{}
	var merged [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolve(m.Content[i+1])
		if k.Tag == "!!merge" || (k.Value == "<<" && k.Style == 0) {
			srcs := []*yaml.Node{v}
			if v != nil && v.Kind == yaml.SequenceNode {
				srcs = v.Content
			}
			for _, s := range srcs {
				s = resolve(s)
				if s == nil || s.Kind != yaml.MappingNode {
					w.problem(k, CheckStructure, Error, "merge key << needs a mapping")
					continue
				}
				for j := 0; j+1 < len(s.Content); j += 2 {
					merged = append(merged, [2]*yaml.Node{s.Content[j], resolve(s.Content[j+1])})
				}
			}
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			w.problem(k, CheckYAMLParse, Error, "mapping key %q already defined at line %d", k.Value, prev.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, [2]*yaml.Node{k, v})
	}
	for _, kv := range merged {
		if _, ok := seen[kv[0].Value]; ok {
			continue
		}
		seen[kv[0].Value] = kv[0]
		out = append(out, kv)
	}
	return out
}

func (w *walker) prometheusRule(doc *yaml.Node) {
	m := docRoot(doc)
	if m == nil {
		return
	}
	if !isPrometheusRule(doc) {
		return // another kind of manifest in the same stream
	}
	if m.Kind != yaml.MappingNode {
		w.problem(m, CheckStructure, Error, "a PrometheusRule must be a mapping")
		return
	}
	spec := mapValue(m, "spec")
	if spec == nil {
		w.problem(m, CheckStructure, Error, "PrometheusRule has no spec")
		return
	}
	if spec.Kind != yaml.MappingNode {
		w.problem(spec, CheckStructure, Error, "spec must be a mapping")
		return
	}
	for _, kv := range w.entries(spec) {
		if kv[0].Value == "groups" {
			w.groups(kv[1], true)
		} else if !w.opts.IgnoreUnknownFields {
			w.problem(kv[0], CheckStructure, Error, "field %s not found in PrometheusRule spec", kv[0].Value)
		}
	}
}

// isNamespaceFile reports whether doc is a Mimir or Cortex ruler namespace
// (mimirtool's rules format): groups beside a namespace key.
func isNamespaceFile(doc *yaml.Node) bool {
	m := docRoot(doc)
	return m != nil && m.Kind == yaml.MappingNode && mapValue(m, "namespace") != nil && mapValue(m, "groups") != nil
}

// namespaceDoc reads one namespace of a Mimir/Cortex rules file: a
// namespace name and Prometheus rule groups, whose names are unique within
// the namespace.
func (w *walker) namespaceDoc(doc *yaml.Node) {
	m := docRoot(doc)
	if m == nil || (m.Kind == yaml.ScalarNode && m.Tag == "!!null") {
		return
	}
	if m.Kind != yaml.MappingNode {
		w.problem(m, CheckStructure, Error, "a ruler namespace must be a mapping with namespace: and groups:, not a %s", kindName(m))
		return
	}
	for _, kv := range w.entries(m) {
		switch kv[0].Value {
		case "namespace":
			if s, ok := w.str(kv[1]); ok && s.Value == "" {
				w.problem(kv[1], CheckStructure, Error, "namespace must not be empty")
			}
		case "groups":
			w.groups(kv[1], false)
		default:
			if !w.opts.IgnoreUnknownFields {
				w.problem(kv[0], CheckStructure, Error, "field %s not found in ruler namespace (top level has namespace: and groups:)", kv[0].Value)
			}
		}
	}
}

func (w *walker) groupsDoc(doc *yaml.Node) {
	m := docRoot(doc)
	if m == nil || (m.Kind == yaml.ScalarNode && m.Tag == "!!null") {
		return
	}
	if m.Kind != yaml.MappingNode {
		w.problem(m, CheckStructure, Error, "a rule file must be a mapping with a groups: key, not a %s", kindName(m))
		return
	}
	if msg := foreignFile(m); msg != "" && !w.opts.IgnoreUnknownFields && len(m.Content) > 0 {
		w.problem(m.Content[0], CheckStructure, Error, "%s", msg)
		return
	}
	for _, kv := range w.entries(m) {
		if kv[0].Value == "groups" {
			w.groups(kv[1], false)
		} else if !w.opts.IgnoreUnknownFields {
			w.problem(kv[0], CheckStructure, Error, "field %s not found in rule file (top level has only groups:)", kv[0].Value)
		}
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		return "scalar " + strconv.Quote(n.Value)
	}
	return "node"
}

func (w *walker) groups(seq *yaml.Node, crd bool) {
	if seq == nil || (seq.Kind == yaml.ScalarNode && seq.Tag == "!!null") {
		return
	}
	if seq.Kind != yaml.SequenceNode {
		w.problem(seq, CheckStructure, Error, "groups must be a list, not a %s", kindName(seq))
		return
	}
	names := map[string]bool{}
	for _, gn := range seq.Content {
		gn = resolve(gn)
		if gn.Kind != yaml.MappingNode {
			w.problem(gn, CheckStructure, Error, "a group must be a mapping, not a %s", kindName(gn))
			continue
		}
		g := &Group{File: w.f, Node: gn}
		var rulesNode *yaml.Node
		for _, kv := range w.entries(gn) {
			k, v := kv[0], kv[1]
			switch k.Value {
			case "name":
				if s, ok := w.str(v); ok {
					g.Name = s
				}
			case "interval":
				g.Interval = w.duration(v)
			case "query_offset":
				g.QueryOffset = w.duration(v)
			case "limit":
				if v.Kind != yaml.ScalarNode || v.Tag == "!!str" {
					w.problem(v, CheckStructure, Error, "limit must be an integer")
					break
				}
				n, err := strconv.Atoi(v.Value)
				if err != nil {
					w.problem(v, CheckStructure, Error, "limit must be an integer, not %q", v.Value)
				}
				g.Limit = n
			case "rules":
				rulesNode = v
			case "labels":
				g.Labels = w.labels(v, "label")
			case "partial_response_strategy":
				if !crd && !w.opts.IgnoreUnknownFields {
					w.problem(k, CheckStructure, Error, "field %s not found in rule group (it is a Thanos extension)", k.Value)
				}
			case "source_tenants":
				if w.f.Kind != KindMimir && !w.opts.IgnoreUnknownFields {
					w.problem(k, CheckStructure, Error, "field %s not found in rule group (it is a Mimir extension)", k.Value)
				}
			default:
				if !w.opts.IgnoreUnknownFields {
					w.problem(k, CheckStructure, Error, "field %s not found in rule group", k.Value)
				}
			}
		}
		if g.Name.Node == nil {
			g.Name.Node = gn
		}
		if g.Name.Value == "" {
			w.problem(gn, CheckStructure, Error, "Groupname must not be empty")
		} else if names[g.Name.Value] {
			w.problem(g.Name.Node, CheckStructure, Error, "groupname: %q is repeated in the same file", g.Name.Value)
		}
		names[g.Name.Value] = true
		for _, kv := range g.Labels {
			w.checkLabel(g, nil, kv)
		}
		w.f.Groups = append(w.f.Groups, g)
		if rulesNode != nil && !(rulesNode.Kind == yaml.ScalarNode && rulesNode.Tag == "!!null") {
			if rulesNode.Kind != yaml.SequenceNode {
				w.problem(rulesNode, CheckStructure, Error, "rules must be a list, not a %s", kindName(rulesNode))
				continue
			}
			for _, rn := range rulesNode.Content {
				w.rule(g, resolve(rn))
			}
		}
		w.groupTemplates(g)
	}
}

func (w *walker) rule(g *Group, rn *yaml.Node) {
	if rn.Kind != yaml.MappingNode {
		w.problem(rn, CheckStructure, Error, "a rule must be a mapping, not a %s", kindName(rn))
		return
	}
	r := &Rule{Group: g, Node: rn}
	g.Rules = append(g.Rules, r)
	var exprNode *yaml.Node
	for _, kv := range w.entries(rn) {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "alert":
			if s, ok := w.str(v); ok {
				r.Alert = &s
			}
		case "record":
			if s, ok := w.str(v); ok {
				r.Record = &s
			}
		case "expr":
			exprNode = v
		case "for":
			r.For = w.duration(v)
		case "keep_firing_for":
			r.KeepFiringFor = w.duration(v)
		case "labels":
			r.LabelsNode = v
			r.Labels = w.labels(v, "label")
		case "annotations":
			r.AnnotationsNode = v
			r.Annotations = w.labels(v, "annotation")
		default:
			if !w.opts.IgnoreUnknownFields {
				w.ruleProblem(g, r, k, CheckStructure, "field %s not found in rule", k.Value)
			}
		}
	}
	// An empty alert or record name counts as unset, as in Prometheus.
	if r.Alert != nil && r.Alert.Value == "" {
		r.Alert = nil
	}
	if r.Record != nil && r.Record.Value == "" {
		r.Record = nil
	}
	switch {
	case r.Alert != nil && r.Record != nil:
		w.ruleProblem(g, r, r.Record.Node, CheckStructure, "only one of 'record' and 'alert' must be set")
	case r.Alert == nil && r.Record == nil:
		w.ruleProblem(g, r, rn, CheckStructure, "one of 'record' or 'alert' must be set")
	}
	if exprNode != nil {
		if s, ok := w.str(exprNode); ok {
			r.Expr = &Expr{Scalar: s}
		}
	}
	if r.Expr == nil || strings.TrimSpace(r.Expr.Value) == "" {
		n := rn
		if exprNode != nil {
			n = exprNode
		}
		w.ruleProblem(g, r, n, CheckStructure, "field 'expr' must be set in rule")
	} else {
		w.parseExpr(g, r)
	}
	if r.Record != nil {
		if len(r.Annotations) > 0 {
			w.ruleProblem(g, r, r.AnnotationsNode, CheckStructure, "invalid field 'annotations' in recording rule")
		}
		if r.For != nil && r.For.Value != 0 {
			w.ruleProblem(g, r, r.Record.Node, CheckStructure, "invalid field 'for' in recording rule (for: at line %d)", r.For.Node.Line)
		}
		if r.KeepFiringFor != nil && r.KeepFiringFor.Value != 0 {
			w.ruleProblem(g, r, r.Record.Node, CheckStructure, "invalid field 'keep_firing_for' in recording rule (keep_firing_for: at line %d)", r.KeepFiringFor.Node.Line)
		}
		if !model.UTF8Validation.IsValidMetricName(r.Record.Value) {
			w.ruleProblem(g, r, r.Record.Node, CheckStructure, "invalid recording rule name: %s", r.Record.Value)
		}
		if strings.ContainsAny(r.Record.Value, "{}") {
			w.ruleProblem(g, r, r.Record.Node, CheckStructure, "braces present in the recording rule name; should it be in expr?: %s", r.Record.Value)
		}
	}
	for _, kv := range r.Labels {
		w.checkLabel(g, r, kv)
	}
	for _, kv := range r.Annotations {
		if !model.UTF8Validation.IsValidLabelName(kv.Key.Value) {
			w.ruleProblem(g, r, kv.Key.Node, CheckStructure, "invalid annotation name: %s", kv.Key.Value)
		}
	}
	if r.Alert != nil {
		w.templates(g, r)
	}
}

func (w *walker) checkLabel(g *Group, r *Rule, kv KV) {
	if !model.UTF8Validation.IsValidLabelName(kv.Key.Value) || kv.Key.Value == model.MetricNameLabel {
		w.ruleProblem(g, r, kv.Key.Node, CheckStructure, "invalid label name: %s", kv.Key.Value)
	}
	if !model.LabelValue(kv.Value.Value).IsValid() {
		w.ruleProblem(g, r, kv.Value.Node, CheckStructure, "invalid label value: %s", kv.Value.Value)
	}
}

func (w *walker) parseExpr(g *Group, r *Rule) {
	e := r.Expr
	ast, err := w.opts.Parser.ParseExpr(e.Value)
	if err == nil {
		e.AST = ast
		return
	}
	e.Err = err
	var perrs parser.ParseErrors
	if errors.As(err, &perrs) && len(perrs) > 0 {
		for _, pe := range mainParseErrors(perrs) {
			start, end := int(pe.PositionRange.Start), int(pe.PositionRange.End)
			// The parser reports an unclosed bracket at the end of the
			// input; point at the bracket that is never closed instead.
			if msg := pe.Err.Error(); strings.HasPrefix(msg, "unclosed left ") {
				if i := unclosedBracket(e.Value, msg); i >= 0 {
					start, end = i, i+1
				}
			}
			if msg := pe.Err.Error(); strings.HasPrefix(msg, "unexpected right ") && start < len(e.Value) {
				end = start + 1 // the stray bracket itself
			}
			rng := w.f.ExprRange(e, start, end)
			w.f.Problems = append(w.f.Problems, Finding{
				Path: w.f.Path, Range: rng, Severity: Error, Check: CheckPromQLSyntax,
				Message: "could not parse expression: " + pe.Err.Error(),
				Group:   g.Name.Value, Rule: r.Name(),
			})
		}
		return
	}
	w.ruleProblem(g, r, e.Node, CheckPromQLSyntax, "could not parse expression: %v", err)
}

// str reads a scalar string value.
func (w *walker) str(n *yaml.Node) (Scalar, bool) {
	if n == nil {
		return Scalar{}, false
	}
	if n.Kind != yaml.ScalarNode {
		w.problem(n, CheckStructure, Error, "expected a string, not a %s", kindName(n))
		return Scalar{Node: n}, false
	}
	if n.Tag == "!!null" {
		return Scalar{Node: n}, true
	}
	return Scalar{Value: n.Value, Node: n}, true
}

func (w *walker) duration(n *yaml.Node) *Duration {
	s, ok := w.str(n)
	if !ok {
		return nil
	}
	if s.Value == "" {
		return &Duration{Node: n}
	}
	d, err := model.ParseDuration(s.Value)
	if err != nil {
		w.problem(n, CheckStructure, Error, "not a valid duration string: %q", s.Value)
		return nil
	}
	if time.Duration(d) < 0 {
		w.problem(n, CheckStructure, Error, "duration must not be negative: %q", s.Value)
	}
	return &Duration{Value: d, Node: n}
}

func (w *walker) labels(n *yaml.Node, what string) []KV {
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		w.problem(n, CheckStructure, Error, "%ss must be a mapping of names to strings, not a %s", what, kindName(n))
		return nil
	}
	var out []KV
	for _, kv := range w.entries(n) {
		k, v := kv[0], kv[1]
		val, ok := w.str(v)
		if !ok {
			continue
		}
		out = append(out, KV{Key: Scalar{Value: k.Value, Node: k}, Value: val})
	}
	return out
}

// mainParseErrors keeps the error that explains the others: after a stray
// closing bracket the parser also reports the enclosing call as empty
// ("no arguments for aggregate expression provided"), which misleads. An
// "unexpected" token is the cause; without one all errors are kept.
func mainParseErrors(perrs parser.ParseErrors) parser.ParseErrors {
	if len(perrs) < 2 {
		return perrs
	}
	var first *parser.ParseErr
	for i := range perrs {
		if strings.HasPrefix(perrs[i].Err.Error(), "unexpected ") &&
			(first == nil || perrs[i].PositionRange.Start < first.PositionRange.Start) {
			first = &perrs[i]
		}
	}
	if first == nil {
		return perrs
	}
	return parser.ParseErrors{*first}
}

// unclosedBracket returns the offset of the last opening bracket of the
// kind the parser's message names that is never closed, or -1.
func unclosedBracket(expr, msg string) int {
	open, close := byte('('), byte(')')
	switch {
	case strings.Contains(msg, "bracket"):
		open, close = '[', ']'
	case strings.Contains(msg, "brace"):
		open, close = '{', '}'
	}
	var stack []int
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == open:
			stack = append(stack, i)
		case c == close && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) == 0 {
		return -1
	}
	return stack[len(stack)-1]
}
