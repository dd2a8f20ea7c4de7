package notificationtest

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// ParseError is a problem in a notification test, at its position.
type ParseError struct {
	Pos Pos
	Msg string
}

func (e *ParseError) Error() string { return e.Pos.String() + ": " + e.Msg }

// Parse reads the notification_tests list of the test file at path. Every
// problem is returned, each at its position; a test with a problem is
// still returned (with Errors naming it), so the others run.
func Parse(path string, n *yaml.Node) ([]*Test, map[*Test][]error, []error) {
	w := &walker{path: path}
	var tests []*Test
	bad := map[*Test][]error{}
	w.sequence(n, "notification_tests", func(item *yaml.Node) {
		before := len(w.errs)
		t := w.test(item)
		tests = append(tests, t)
		if len(w.errs) > before {
			bad[t] = append(bad[t], w.errs[before:]...)
		}
	})
	var top []error
	if len(tests) == 0 {
		top = w.errs
	}
	return tests, bad, top
}

type walker struct {
	path string
	errs []error
}

func (w *walker) pos(n *yaml.Node) Pos { return Pos{Path: w.path, Line: n.Line, Col: n.Column} }

func (w *walker) errorf(n *yaml.Node, format string, args ...any) {
	w.errs = append(w.errs, &ParseError{Pos: w.pos(n), Msg: fmt.Sprintf(format, args...)})
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

// mapping calls fn for each key; fn returns false for an unknown key.
// Repeated keys are errors; merge keys are not expanded (they are an
// unknown key "<<").
func (w *walker) mapping(n *yaml.Node, what string, fn func(key string, k, v *yaml.Node) bool) {
	n = deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		w.errorf(n, "%s must be a mapping, got %s", what, kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			w.errorf(k, "%s: keys must be strings", what)
			continue
		}
		if seen[k.Value] {
			w.errorf(k, "field %q is repeated in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		if !fn(k.Value, k, v) {
			w.errorf(k, "unknown field %q in %s", k.Value, what)
		}
	}
}

func (w *walker) sequence(n *yaml.Node, what string, fn func(item *yaml.Node)) {
	n = deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		w.errorf(n, "%s must be a list, got %s", what, kindName(n))
		return
	}
	for _, item := range n.Content {
		fn(item)
	}
}

func (w *walker) str(n *yaml.Node, what string) (string, bool) {
	n = deref(n)
	if isNull(n) {
		return "", true
	}
	if n.Kind != yaml.ScalarNode {
		w.errorf(n, "%s must be a string, got %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (w *walker) strings(n *yaml.Node, what string) []string {
	out := []string{}
	w.sequence(n, what, func(item *yaml.Node) {
		if s, ok := w.str(item, what+" item"); ok {
			out = append(out, s)
		}
	})
	return out
}

// boolean reads true/false; ok is false when n is not a boolean (and no
// error is recorded, so the caller may read it another way).
func boolean(n *yaml.Node) (v, ok bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, false
	}
	switch strings.ToLower(n.Value) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func (w *walker) boolean(n *yaml.Node, what string) bool {
	v, ok := boolean(n)
	if !ok {
		w.errorf(deref(n), "%s must be true or false, got %s", what, kindName(deref(n)))
	}
	return v
}

func (w *walker) labelMap(n *yaml.Node, what string) map[string]string {
	m := map[string]string{}
	w.mapping(n, what, func(key string, k, v *yaml.Node) bool {
		if !model.LabelName(key).IsValid() {
			w.errorf(k, "%s: %q is not a valid label name", what, key)
		}
		if s, ok := w.str(v, what+" value"); ok {
			m[key] = s
		}
		return true
	})
	return m
}

func (w *walker) test(n *yaml.Node) *Test {
	t := &Test{Pos: w.pos(deref(n))}
	w.mapping(n, "notification test", func(key string, k, v *yaml.Node) bool {
		p := w.pos(k)
		switch key {
		case "name":
			t.Name, _ = w.str(v, key)
		case "at":
			t.AtPos = w.pos(deref(v))
			if s, ok := w.str(v, key); ok && s != "" {
				at, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					w.errorf(deref(v), "at: %q is not an RFC 3339 time (2026-12-07T03:00:00Z)", s)
				}
				t.At = at
			}
		case "silences":
			w.sequence(v, key, func(item *yaml.Node) {
				s := Silence{Pos: w.pos(deref(item))}
				w.mapping(item, "silence", func(key string, k, v *yaml.Node) bool {
					switch key {
					case "matchers":
						s.Matchers = w.strings(v, key)
					case "comment":
						s.Comment, _ = w.str(v, key)
					case "created_by":
						s.CreatedBy, _ = w.str(v, key)
					default:
						return false
					}
					return true
				})
				if len(s.Matchers) == 0 {
					w.errorf(deref(item), "a silence needs matchers")
				}
				t.Silences = append(t.Silences, s)
			})
		case "also_firing", "alerts":
			w.sequence(v, key, func(item *yaml.Node) {
				a := Alert{Pos: w.pos(deref(item))}
				w.mapping(item, key+" item", func(key string, k, v *yaml.Node) bool {
					switch key {
					case "labels":
						a.Labels = w.labelMap(v, key)
					case "annotations":
						a.Annotations = w.labelMap(v, key)
					default:
						return false
					}
					return true
				})
				if len(a.Labels) == 0 {
					w.errorf(deref(item), "an alert needs labels")
				}
				if key == "alerts" {
					t.Alerts = append(t.Alerts, a)
				} else {
					t.AlsoFiring = append(t.AlsoFiring, a)
				}
			})
		case "from_rule_test":
			f := &FromRuleTest{Pos: p}
			w.mapping(v, key, func(key string, k, v *yaml.Node) bool {
				switch key {
				case "file":
					f.File, _ = w.str(v, key)
				case "group":
					f.Group, _ = w.str(v, key)
				case "eval_time":
					if s, ok := w.str(v, key); ok {
						d, err := model.ParseDuration(s)
						if err != nil {
							w.errorf(deref(v), "eval_time: %v", err)
						}
						f.EvalTime = time.Duration(d)
					}
				default:
					return false
				}
				return true
			})
			if f.File == "" {
				w.errorf(k, "from_rule_test needs file")
			}
			t.FromRuleTest = f
		case "exp_receivers":
			t.ExpReceivers = &Expect[[]string]{Pos: p, Value: w.strings(v, key)}
		case "exp_group_labels":
			e := &Expect[[]map[string]string]{Pos: p}
			if d := deref(v); d != nil && d.Kind == yaml.SequenceNode {
				e.Value = []map[string]string{}
				w.sequence(d, key, func(item *yaml.Node) { e.Value = append(e.Value, w.labelMap(item, key+" item")) })
			} else {
				e.Value = []map[string]string{w.labelMap(v, key)}
			}
			t.ExpGroupLabels = e
		case "exp_inhibited":
			e := &Expect[Inhibited]{Pos: p}
			d := deref(v)
			if b, ok := boolean(d); ok {
				e.Value.Inhibited = b
			} else if d != nil && d.Kind == yaml.MappingNode {
				e.Value = Inhibited{Inhibited: true, Labels: w.labelMap(d, key)}
			} else if s, ok := w.str(d, key); ok && s != "" {
				e.Value = Inhibited{Inhibited: true, Name: s}
			} else if ok {
				w.errorf(d, "exp_inhibited must be false, true, an alertname or labels")
			}
			t.ExpInhibited = e
		case "exp_muted":
			e := &Expect[Muted]{Pos: p}
			d := deref(v)
			if b, ok := boolean(d); ok {
				e.Value.Muted = b
			} else if d != nil && d.Kind == yaml.SequenceNode {
				e.Value = Muted{Muted: true, Receivers: w.strings(d, key), IsList: true}
			} else if s, ok := w.str(d, key); ok && s != "" {
				e.Value = Muted{Muted: true, Interval: s}
			} else if ok {
				w.errorf(d, "exp_muted must be false, true, a time interval's name or a list of receivers")
			}
			t.ExpMuted = e
		case "exp_silenced":
			t.ExpSilenced = &Expect[bool]{Pos: p, Value: w.boolean(v, key)}
		case "exp_payloads":
			w.mapping(v, key, func(recv string, k, v *yaml.Node) bool {
				ep := ExpPayload{Pos: w.pos(k), Receiver: recv}
				w.mapping(v, "exp_payloads."+recv, func(key string, k, v *yaml.Node) bool {
					switch key {
					case "golden":
						ep.Golden, _ = w.str(v, key)
					case "contains":
						ep.Contains = w.strings(v, key)
					default:
						return false
					}
					return true
				})
				if ep.Golden == "" && len(ep.Contains) == 0 {
					w.errorf(k, "exp_payloads.%s needs golden or contains", recv)
				}
				t.ExpPayloads = append(t.ExpPayloads, ep)
				return true
			})
		default:
			return false
		}
		return true
	})
	if len(t.Alerts) > 0 && t.FromRuleTest != nil {
		w.errorf(deref(n), "a notification test has alerts or from_rule_test, not both")
	}
	if d := deref(n); len(t.Alerts) == 0 && t.FromRuleTest == nil && d != nil && d.Kind == yaml.MappingNode {
		w.errorf(deref(n), "a notification test needs alerts or from_rule_test")
	}
	return t
}
