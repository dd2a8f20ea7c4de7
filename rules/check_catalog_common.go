package rules

import (
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/parser/posrange"

	"github.com/pagedhq/paged/rules/catalog"
)

// Helpers shared by the catalog checks (check_catalog_*.go) and the
// type-aware PromQL checks: walking an expression with its ancestors,
// finding the metric name of a selector, and classifying that name
// against the LLM metric catalogue.

// astChildren lists a node's children. Unlike parser.Children it accepts
// nil and node types it does not know, so that a check never panics on
// an odd tree.
func astChildren(n parser.Node) []parser.Node {
	var out []parser.Node
	add := func(e parser.Expr) {
		if e != nil {
			out = append(out, e)
		}
	}
	switch n := n.(type) {
	case *parser.AggregateExpr:
		if n != nil {
			add(n.Expr)
			add(n.Param)
		}
	case *parser.BinaryExpr:
		if n != nil {
			add(n.LHS)
			add(n.RHS)
		}
	case *parser.Call:
		if n != nil {
			for _, a := range n.Args {
				add(a)
			}
		}
	case *parser.SubqueryExpr:
		if n != nil {
			add(n.Expr)
		}
	case *parser.ParenExpr:
		if n != nil {
			add(n.Expr)
		}
	case *parser.UnaryExpr:
		if n != nil {
			add(n.Expr)
		}
	case *parser.MatrixSelector:
		if n != nil {
			add(n.VectorSelector)
		}
	case *parser.StepInvariantExpr:
		if n != nil {
			add(n.Expr)
		}
	}
	return out
}

// maxWalkDepth bounds recursion on hostile expressions (the parser itself
// accepts deep nesting).
const maxWalkDepth = 1000

// walkAST calls fn for every node with its ancestors, outermost first.
// The path slice is reused: copy it to keep it.
func walkAST(root parser.Node, fn func(n parser.Node, path []parser.Node)) {
	// Every check walks every expression, some several times: the path
	// buffers are pooled rather than allocated for each walk.
	buf := walkPaths.Get().(*[]parser.Node)
	path := (*buf)[:0]
	walkNode(root, fn, &path)
	*buf = path[:0]
	walkPaths.Put(buf)
}

var walkPaths = sync.Pool{New: func() any {
	path := make([]parser.Node, 0, 16)
	return &path
}}

// walkNode is walkAST below n, whose ancestors are *path. fn is passed
// down rather than kept in a struct so that it stays on the caller's
// stack: a check's closure is not allocated for every walk.
func walkNode(n parser.Node, fn func(n parser.Node, path []parser.Node), path *[]parser.Node) {
	if isNilNode(n) || len(*path) > maxWalkDepth {
		return
	}
	fn(n, *path)
	*path = append(*path, n)
	// The common nodes inline, without building a slice of children.
	switch n := n.(type) {
	case *parser.BinaryExpr:
		walkNode(n.LHS, fn, path)
		walkNode(n.RHS, fn, path)
	case *parser.AggregateExpr:
		walkNode(n.Expr, fn, path)
		walkNode(n.Param, fn, path)
	case *parser.ParenExpr:
		walkNode(n.Expr, fn, path)
	case *parser.MatrixSelector:
		walkNode(n.VectorSelector, fn, path)
	case *parser.Call:
		for _, a := range n.Args {
			walkNode(a, fn, path)
		}
	case *parser.VectorSelector, *parser.NumberLiteral, *parser.StringLiteral:
	default:
		for _, c := range astChildren(n) {
			walkNode(c, fn, path)
		}
	}
	*path = (*path)[:len(*path)-1]
}

// isNilNode reports a nil node, also a typed nil pointer in the interface.
func isNilNode(n parser.Node) bool {
	// The node types of every expression without reflection: walkAST
	// asks for each node of each walk.
	switch n := n.(type) {
	case nil:
		return true
	case *parser.VectorSelector:
		return n == nil
	case *parser.BinaryExpr:
		return n == nil
	case *parser.Call:
		return n == nil
	case *parser.NumberLiteral:
		return n == nil
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// selectorName returns the metric name of a vector selector, from its name
// or from an exact __name__ matcher.
func selectorName(vs *parser.VectorSelector) (string, bool) {
	if vs == nil {
		return "", false
	}
	if vs.Name != "" {
		return vs.Name, true
	}
	for _, m := range vs.LabelMatchers {
		if m != nil && m.Name == labels.MetricName && m.Type == labels.MatchEqual {
			return m.Value, true
		}
	}
	return "", false
}

// ruleExprOK reports whether a rule has a parsed expression to check.
func ruleExprOK(r *Rule) bool {
	return r != nil && r.Expr != nil && r.Expr.AST != nil && r.Expr.Err == nil
}

// llmCatalog is the catalogue the checks use.
func llmCatalog() *catalog.Catalog { return catalog.Default() }

// ruleServer is the value of the rule's `server` label, or of its group's.
// "vllm-v0" marks a rule written for vLLM's legacy V0 engine.
func ruleServer(r *Rule) string {
	if s, ok := r.Label("server"); ok {
		return s.Value
	}
	if r.Group != nil {
		if s, ok := lookupKV(r.Group.Labels, "server"); ok {
			return s.Value
		}
	}
	return ""
}

// ruleIsVLLM reports whether a rule is about vLLM, so that the generic
// names of vLLM's HTTP layer (http_request_duration_seconds, which many
// other programs export with other labels) in it are vLLM's: its server
// label says vllm, its name or its group's names vLLM, or its expression
// reads a vllm: metric or matches a label value naming vllm
// (job="vllm-llama"). Other rules' generic names are left alone.
func ruleIsVLLM(r *Rule) bool {
	if r == nil {
		return false
	}
	if strings.HasPrefix(ruleServer(r), "vllm") || containsFold(r.Name(), "vllm") ||
		r.Group != nil && containsFold(r.Group.Name.Value, "vllm") {
		return true
	}
	if !ruleExprOK(r) || !containsFold(r.Expr.Value, "vllm") {
		return false
	}
	found := false
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs == nil || found {
			return
		}
		for _, m := range vs.LabelMatchers {
			if m == nil {
				continue
			}
			if m.Name == labels.MetricName && strings.HasPrefix(m.Value, "vllm:") ||
				m.Name != labels.MetricName && m.Type != labels.MatchNotEqual && m.Type != labels.MatchNotRegexp && containsFold(m.Value, "vllm") {
				found = true
				return
			}
		}
	})
	return found
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}

// ruleIsFor reports whether a rule is about a server, so that the names
// the server shares with other programs are taken as its own.
func ruleIsFor(r *Rule, s *catalog.Server) bool {
	if r == nil || s == nil {
		return false
	}
	return strings.HasPrefix(ruleServer(r), s.Key) || s.Key == "vllm" && ruleIsVLLM(r)
}

// targetsV0 reports whether a rule is written for vLLM's V0 engine.
func targetsV0(r *Rule) bool { return ruleServer(r) == "vllm-v0" }

// fileFacts are computed once per file and shared by the rules of the
// file: a check that needs them runs at file scope through perRule.
type fileFacts struct {
	file     *File
	recorded map[string]bool // built on first use
	// series/live: the answers already received.
	live map[string]string // selector -> the series/live finding, "" when it has series
}

// isRecorded reports whether a recording rule of the file defines name.
func (ff *fileFacts) isRecorded(name string) bool {
	if ff == nil {
		return false
	}
	if ff.recorded == nil {
		ff.recorded = recordedNames(ff.file)
	}
	return ff.recorded[name]
}

// perRule turns a rule-level check that needs file facts into a file-level
// one: the facts are computed once, then fn runs for every rule with the
// pass pointing at the rule and its group, as for a Rule check.
func perRule(fn func(p *Pass, r *Rule, ff *fileFacts)) func(p *Pass, f *File) {
	return func(p *Pass, f *File) {
		if f == nil {
			return
		}
		ff := &fileFacts{file: f}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				p.group, p.rule = g, r
				fn(p, r, ff)
			}
		}
		p.group, p.rule = nil, nil
	}
}

// recordedNames are the names recording rules of the file define: they
// are not server metrics, whatever their prefix.
func recordedNames(f *File) map[string]bool {
	out := map[string]bool{}
	if f == nil {
		return out
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r != nil && r.Record != nil {
				out[r.Record.Value] = true
			}
		}
	}
	return out
}

// verdict is what the catalogue says about a selector's metric name.
type verdict int

const (
	vNotOurs      verdict = iota // no known server prefix, or a recorded name
	vKnown                       // a valid series of a catalogued metric
	vRemoved                     // removed or renamed
	vWrongSuffix                 // _bucket/_sum/_count that the type has not; a bare histogram name
	vMissingTotal                // a Python-client counter written without _total
	vExtraTotal                  // _total on a counter that has none, or on a gauge
	vNotReal                     // a name the server never exported
	vUnknown                     // a server's prefix, but not a name in the catalogue
	vEngine                      // a vLLM V1-only metric in a rule for V0
	vNearMiss                    // a misspelt server prefix (sglang_, sgl:): AltName is the name to write
)

// llmSelector is a vector selector of a known LLM server's metric.
type llmSelector struct {
	VS        *parser.VectorSelector
	Name      string
	Server    *catalog.Server
	Verdict   verdict
	Series    catalog.Series // for vKnown, vRemoved, vWrongSuffix, vEngine
	Alt       catalog.Series // for vMissingTotal, vExtraTotal: the real metric
	AltName   string         // for vMissingTotal, vExtraTotal, vNearMiss: the name to write
	AltPrefix string         // for vNearMiss: the server's prefix
	Fuzzy     bool           // for vNearMiss: AltName is the closest name, not the same name
	NotReal   *catalog.NotReal
}

// llmSelectors returns the selectors of a rule's expression that name a
// known LLM server's metric, classified. Names defined by recording rules
// of the same file are left out.
func llmSelectors(r *Rule, ff *fileFacts) []llmSelector {
	if !ruleExprOK(r) {
		return nil
	}
	cat := llmCatalog()
	v0 := targetsV0(r)
	vllmRule := ruleIsVLLM(r)
	var out []llmSelector
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs == nil {
			return
		}
		name, ok := selectorName(vs)
		if !ok || ff.isRecorded(name) {
			return
		}
		sel := classify(cat, name, v0, vllmRule)
		if sel.Verdict == vNotOurs {
			return
		}
		sel.VS = vs
		out = append(out, sel)
	})
	return out
}

// classify looks a metric name up in the catalogue.
func classify(cat *catalog.Catalog, name string, v0, vllmRule bool) llmSelector {
	sel := llmSelector{Name: name, Server: cat.ServerFor(name)}
	if sel.Server == nil {
		// Generic names (http_requests_total) are vLLM's only in a rule
		// that says it is about vLLM; there they are checked as known
		// metrics but never reported as unknown.
		if s, ok := cat.Resolve(name); ok && vllmRule && s.Metric.Server.Key == "vllm" {
			sel.Server, sel.Series = s.Metric.Server, s
			if s.Valid() {
				sel.Verdict = vKnown
			} else {
				sel.Verdict = vWrongSuffix
			}
			return sel
		}
		if nm, ok := cat.NearMiss(name); ok {
			sel.Server, sel.Verdict, sel.AltName, sel.AltPrefix, sel.Fuzzy = nm.Server, vNearMiss, nm.Name, nm.Prefix, nm.Fuzzy
			return sel
		}
		sel.Verdict = vNotOurs
		return sel
	}
	if strings.Contains(strings.TrimPrefix(name, sel.Server.Prefix), ":") {
		// level:metric:operation is the naming of recording rules, which
		// may live in another file: no server puts more colons in a name.
		sel.Verdict = vNotOurs
		return sel
	}
	if s, ok := cat.Resolve(name); ok && s.Metric.Server == sel.Server {
		sel.Series = s
		m := s.Metric
		switch {
		case m.Status == catalog.Removed && !(v0 && m.HasEngine("v0")):
			sel.Verdict = vRemoved
		case !s.Valid():
			sel.Verdict = vWrongSuffix
		case v0 && sel.Server.Key == "vllm" && !m.HasEngine("v0"):
			sel.Verdict = vEngine
		default:
			sel.Verdict = vKnown
		}
		return sel
	}
	if sel.Server.CounterTotal {
		if s, ok := cat.Resolve(name + "_total"); ok && s.Suffix == "" && s.Metric.Type == catalog.Counter {
			sel.Verdict, sel.Alt, sel.AltName = vMissingTotal, s, name+"_total"
			if s.Metric.Status == catalog.Removed && !(v0 && s.Metric.HasEngine("v0")) {
				sel.Verdict, sel.Series = vRemoved, s // say it is gone rather than how to spell it
			}
			return sel
		}
	}
	if base, ok := strings.CutSuffix(name, "_total"); ok {
		if s, ok := cat.Resolve(base); ok && s.Suffix == "" && s.Metric.Server == sel.Server &&
			(s.Metric.Type == catalog.Counter && !sel.Server.CounterTotal || s.Metric.Type == catalog.Gauge) {
			sel.Verdict, sel.Alt, sel.AltName = vExtraTotal, s, base
			return sel
		}
	}
	if nr, ok := cat.NotReal(name); ok {
		sel.Verdict, sel.NotReal = vNotReal, nr
		return sel
	}
	sel.Verdict = vUnknown
	return sel
}

// ranges of parts of an expression, for findings that point at a label
// inside a selector or a grouping clause rather than at the whole node.

// matcherRange finds the label name of a matcher inside a selector's text.
func (p *Pass) matcherRange(e *Expr, vs *parser.VectorSelector, label string) posrange.PositionRange {
	pr := vs.PositionRange()
	text := exprSlice(e, pr)
	brace := strings.IndexByte(text, '{')
	if brace < 0 {
		return pr
	}
	re, err := p.worker.matcherRe(label)
	if err != nil {
		return pr
	}
	if m := re.FindStringSubmatchIndex(text[brace:]); m != nil {
		start := pr.Start + posrange.Pos(brace+m[2])
		return posrange.PositionRange{Start: start, End: start + posrange.Pos(len(label))}
	}
	return pr
}

// matcherRe finds a matcher of label in a selector: compiled once per
// worker and label.
func (w *worker) matcherRe(label string) (*regexp.Regexp, error) {
	if w == nil {
		return compileMatcherRe(label)
	}
	if re := w.matcherRes[label]; re != nil {
		return re, nil
	}
	re, err := compileMatcherRe(label)
	if err == nil {
		w.matcherRes[label] = re
	}
	return re, err
}

func compileMatcherRe(label string) (*regexp.Regexp, error) {
	return regexp.Compile(`(?:^|[{,\s])"?(` + regexp.QuoteMeta(label) + `)"?\s*(?:=~|!~|!=|=)`)
}

var groupingRe = regexp.MustCompile(`\b(?:by|without)\s*\(([^()]*)\)`)

// groupingRange finds a label inside the by/without clause of an
// aggregation, skipping the clauses of aggregations nested in it.
func groupingRange(e *Expr, agg *parser.AggregateExpr, label string) posrange.PositionRange {
	pr := agg.PositionRange()
	text := exprSlice(e, pr)
	var inner []posrange.PositionRange
	walkAST(agg.Expr, func(n parser.Node, _ []parser.Node) {
		if a, ok := n.(*parser.AggregateExpr); ok && a != nil {
			inner = append(inner, a.PositionRange())
		}
	})
	for _, m := range groupingRe.FindAllStringSubmatchIndex(text, -1) {
		at := pr.Start + posrange.Pos(m[0])
		nested := false
		for _, r := range inner {
			if at >= r.Start && at < r.End {
				nested = true
				break
			}
		}
		if nested {
			continue
		}
		list := text[m[2]:m[3]]
		off := 0
		for _, part := range strings.Split(list, ",") {
			name := strings.Trim(strings.TrimSpace(part), `"`)
			if name == label {
				lead := strings.Index(part, label)
				start := pr.Start + posrange.Pos(m[2]+off+lead)
				return posrange.PositionRange{Start: start, End: start + posrange.Pos(len(label))}
			}
			off += len(part) + 1
		}
	}
	return pr
}

// exprSlice returns the text of a position range of an expression.
func exprSlice(e *Expr, pr posrange.PositionRange) string {
	if e == nil {
		return ""
	}
	s, end := int(pr.Start), int(pr.End)
	if s < 0 || end > len(e.Value) || s > end {
		return ""
	}
	return e.Value[s:end]
}

// seriesType is the type of a series: from the catalogue when it knows the
// name, else from the name (_total: a counter; _bucket: a histogram's
// bucket, a counter). Names recorded by the file are not guessed.
func seriesType(name string, r *Rule, ff *fileFacts) (t catalog.Type, fromCatalog bool) {
	if ff.isRecorded(name) {
		return catalog.Unknown, false
	}
	if s, ok := resolveFor(name, r); ok {
		if s.Valid() || s.Suffix == "" {
			return s.Type(), true
		}
		return catalog.Unknown, false
	}
	switch {
	case strings.HasSuffix(name, "_total"), strings.HasSuffix(name, "_bucket"):
		return catalog.Counter, false
	}
	return catalog.Unknown, false
}

// resolveFor looks a series up in the catalogue for a rule. A generic
// name without a server prefix (http_request_duration_seconds) is taken
// as the catalogued server's only in a rule about that server (ruleIsFor):
// elsewhere it belongs to some other program.
func resolveFor(name string, r *Rule) (catalog.Series, bool) {
	cat := llmCatalog()
	s, ok := cat.Resolve(name)
	if !ok {
		return s, false
	}
	if srv := s.Metric.Server; srv != nil && srv.Prefix != "" && !strings.HasPrefix(name, srv.Prefix) {
		if !ruleIsFor(r, srv) {
			return catalog.Series{}, false
		}
	}
	return s, true
}

// unwrapParens skips parentheses and step-invariant wrappers.
func unwrapParens(e parser.Expr) parser.Expr {
	for i := 0; i < maxWalkDepth; i++ {
		switch n := e.(type) {
		case *parser.ParenExpr:
			if n == nil {
				return nil
			}
			e = n.Expr
		case *parser.StepInvariantExpr:
			if n == nil {
				return nil
			}
			e = n.Expr
		default:
			return e
		}
	}
	return e
}

func callName(c *parser.Call) string {
	if c == nil || c.Func == nil {
		return ""
	}
	return c.Func.Name
}
