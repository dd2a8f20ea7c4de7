package ruletest

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Walker reads a YAML node tree once, so every value keeps its position, and
// collects every problem, each a *ParseError at its position, instead of
// stopping at the first. Parse reads a test file with it, and the
// notification tests (notifier/notificationtest) read their part of the same
// file with it, so a problem reads alike wherever it is in the file.
type Walker struct {
	Path string
	Errs []error
	// MergeKeys expands merge keys (<<) as promtool's YAML library does;
	// without it "<<" is an unknown field.
	MergeKeys bool
}

// Pos is n's position in the file.
func (w *Walker) Pos(n *yaml.Node) Pos { return Pos{Path: w.Path, Line: n.Line, Col: n.Column} }

// Errorf records a problem at n.
func (w *Walker) Errorf(n *yaml.Node, format string, args ...any) {
	w.Errs = append(w.Errs, &ParseError{Pos: w.Pos(n), Msg: fmt.Sprintf(format, args...)})
}

// Deref follows aliases (bounded, so a hostile file cannot loop).
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent or an explicit null.
func IsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// KindName names what n is, for a message: "a mapping", "a list", or a
// scalar's value quoted.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case yaml.DocumentNode:
		return "a document"
	}
	return "an alias"
}

// Mapping calls fn for every key of a mapping; fn returns false for an
// unknown key. Repeated keys are errors; merge keys are expanded when
// w.MergeKeys is set.
func (w *Walker) Mapping(n *yaml.Node, what string, fn func(key string, k, v *yaml.Node) bool) {
	n = Deref(n)
	if IsNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		w.Errorf(n, "%s must be a mapping, got %s", what, KindName(n))
		return
	}
	seen := map[string]bool{}
	var visit func(m *yaml.Node, depth int)
	visit = func(m *yaml.Node, depth int) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if w.MergeKeys && k.Kind == yaml.ScalarNode && k.Tag == "!!merge" && depth < 10 {
				v = Deref(v)
				switch {
				case v != nil && v.Kind == yaml.MappingNode:
					visit(v, depth+1)
				case v != nil && v.Kind == yaml.SequenceNode:
					for _, s := range v.Content {
						if s = Deref(s); s != nil && s.Kind == yaml.MappingNode {
							visit(s, depth+1)
						}
					}
				default:
					w.Errorf(k, "merge key in %s needs a mapping", what)
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				w.Errorf(k, "%s: keys must be strings", what)
				continue
			}
			if seen[k.Value] {
				if depth == 0 {
					w.Errorf(k, "field %q is repeated in %s", k.Value, what)
				}
				continue
			}
			seen[k.Value] = true
			if !fn(k.Value, k, v) {
				w.Errorf(k, "unknown field %q in %s", k.Value, what)
			}
		}
	}
	visit(n, 0)
}

// Sequence calls fn for every item of a list.
func (w *Walker) Sequence(n *yaml.Node, what string, fn func(item *yaml.Node)) {
	n = Deref(n)
	if IsNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		w.Errorf(n, "%s must be a list, got %s", what, KindName(n))
		return
	}
	for _, item := range n.Content {
		fn(item)
	}
}

// Str reads a scalar as text; numbers and booleans keep their spelling, as
// promtool's YAML library does when it decodes them into strings. A null is
// "" and ok.
func (w *Walker) Str(n *yaml.Node, what string) (string, bool) {
	n = Deref(n)
	if IsNull(n) {
		return "", true
	}
	if n.Kind != yaml.ScalarNode {
		w.Errorf(n, "%s must be a string, got %s", what, KindName(n))
		return "", false
	}
	return n.Value, true
}
