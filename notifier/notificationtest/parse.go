package notificationtest

import (
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/engine/ruletest"
)

// ParseError is a problem in a notification test, at its position: the
// same type as a problem in the rest of the test file.
type ParseError = ruletest.ParseError

// Parse reads the notification_tests list of the test file at path. Every
// problem is returned, each at its position; a test with a problem is
// still returned (with Errors naming it), so the others run.
func Parse(path string, n *yaml.Node) ([]*Test, map[*Test][]error, []error) {
	w := &walker{ruletest.Walker{Path: path}}
	var tests []*Test
	bad := map[*Test][]error{}
	w.Sequence(n, "notification_tests", func(item *yaml.Node) {
		before := len(w.Errs)
		t := w.test(item)
		tests = append(tests, t)
		if len(w.Errs) > before {
			bad[t] = append(bad[t], w.Errs[before:]...)
		}
	})
	var top []error
	if len(tests) == 0 {
		top = w.Errs
	}
	return tests, bad, top
}

// walker adds to ruletest.Walker the values of a notification test. Merge
// keys are not expanded (they are an unknown field "<<").
type walker struct{ ruletest.Walker }

func (w *walker) strings(n *yaml.Node, what string) []string {
	out := []string{}
	w.Sequence(n, what, func(item *yaml.Node) {
		if s, ok := w.Str(item, what+" item"); ok {
			out = append(out, s)
		}
	})
	return out
}

// boolean reads true/false; ok is false when n is not a boolean (and no
// error is recorded, so the caller may read it another way).
func boolean(n *yaml.Node) (v, ok bool) {
	n = ruletest.Deref(n)
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
		w.Errorf(ruletest.Deref(n), "%s must be true or false, got %s", what, ruletest.KindName(ruletest.Deref(n)))
	}
	return v
}

func (w *walker) labelMap(n *yaml.Node, what string) map[string]string {
	m := map[string]string{}
	w.Mapping(n, what, func(key string, k, v *yaml.Node) bool {
		if !model.LabelName(key).IsValid() {
			w.Errorf(k, "%s: %q is not a valid label name", what, key)
		}
		if s, ok := w.Str(v, what+" value"); ok {
			m[key] = s
		}
		return true
	})
	return m
}

func (w *walker) test(n *yaml.Node) *Test {
	t := &Test{Pos: w.Pos(ruletest.Deref(n))}
	w.Mapping(n, "notification test", func(key string, k, v *yaml.Node) bool {
		p := w.Pos(k)
		switch key {
		case "name":
			t.Name, _ = w.Str(v, key)
		case "at":
			t.AtPos = w.Pos(ruletest.Deref(v))
			if s, ok := w.Str(v, key); ok && s != "" {
				at, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					w.Errorf(ruletest.Deref(v), "at: %q is not an RFC 3339 time (2026-12-07T03:00:00Z)", s)
				}
				t.At = at
			}
		case "silences":
			w.Sequence(v, key, func(item *yaml.Node) {
				s := Silence{Pos: w.Pos(ruletest.Deref(item))}
				w.Mapping(item, "silence", func(key string, k, v *yaml.Node) bool {
					switch key {
					case "matchers":
						s.Matchers = w.strings(v, key)
					case "comment":
						s.Comment, _ = w.Str(v, key)
					case "created_by":
						s.CreatedBy, _ = w.Str(v, key)
					default:
						return false
					}
					return true
				})
				if len(s.Matchers) == 0 {
					w.Errorf(ruletest.Deref(item), "a silence needs matchers")
				}
				t.Silences = append(t.Silences, s)
			})
		case "also_firing", "alerts":
			w.Sequence(v, key, func(item *yaml.Node) {
				a := Alert{Pos: w.Pos(ruletest.Deref(item))}
				w.Mapping(item, key+" item", func(key string, k, v *yaml.Node) bool {
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
					w.Errorf(ruletest.Deref(item), "an alert needs labels")
				}
				if key == "alerts" {
					t.Alerts = append(t.Alerts, a)
				} else {
					t.AlsoFiring = append(t.AlsoFiring, a)
				}
			})
		case "from_rule_test":
			f := &FromRuleTest{Pos: p}
			w.Mapping(v, key, func(key string, k, v *yaml.Node) bool {
				switch key {
				case "file":
					f.File, _ = w.Str(v, key)
				case "group":
					f.Group, _ = w.Str(v, key)
				case "eval_time":
					if s, ok := w.Str(v, key); ok {
						d, err := model.ParseDuration(s)
						if err != nil {
							w.Errorf(ruletest.Deref(v), "eval_time: %v", err)
						}
						f.EvalTime = time.Duration(d)
					}
				default:
					return false
				}
				return true
			})
			if f.File == "" {
				w.Errorf(k, "from_rule_test needs file")
			}
			t.FromRuleTest = f
		case "exp_receivers":
			t.ExpReceivers = &Expect[[]string]{Pos: p, Value: w.strings(v, key)}
		case "exp_group_labels":
			e := &Expect[[]map[string]string]{Pos: p}
			if d := ruletest.Deref(v); d != nil && d.Kind == yaml.SequenceNode {
				e.Value = []map[string]string{}
				w.Sequence(d, key, func(item *yaml.Node) { e.Value = append(e.Value, w.labelMap(item, key+" item")) })
			} else {
				e.Value = []map[string]string{w.labelMap(v, key)}
			}
			t.ExpGroupLabels = e
		case "exp_inhibited":
			e := &Expect[Inhibited]{Pos: p}
			d := ruletest.Deref(v)
			if b, ok := boolean(d); ok {
				e.Value.Inhibited = b
			} else if d != nil && d.Kind == yaml.MappingNode {
				e.Value = Inhibited{Inhibited: true, Labels: w.labelMap(d, key)}
			} else if s, ok := w.Str(d, key); ok && s != "" {
				e.Value = Inhibited{Inhibited: true, Name: s}
			} else if ok {
				w.Errorf(d, "exp_inhibited must be false, true, an alertname or labels")
			}
			t.ExpInhibited = e
		case "exp_muted":
			e := &Expect[Muted]{Pos: p}
			d := ruletest.Deref(v)
			if b, ok := boolean(d); ok {
				e.Value.Muted = b
			} else if d != nil && d.Kind == yaml.SequenceNode {
				e.Value = Muted{Muted: true, Receivers: w.strings(d, key), IsList: true}
			} else if s, ok := w.Str(d, key); ok && s != "" {
				e.Value = Muted{Muted: true, Interval: s}
			} else if ok {
				w.Errorf(d, "exp_muted must be false, true, a time interval's name or a list of receivers")
			}
			t.ExpMuted = e
		case "exp_silenced":
			t.ExpSilenced = &Expect[bool]{Pos: p, Value: w.boolean(v, key)}
		case "exp_payloads":
			w.Mapping(v, key, func(recv string, k, v *yaml.Node) bool {
				ep := ExpPayload{Pos: w.Pos(k), Receiver: recv}
				w.Mapping(v, "exp_payloads."+recv, func(key string, k, v *yaml.Node) bool {
					switch key {
					case "golden":
						ep.Golden, _ = w.Str(v, key)
					case "contains":
						ep.Contains = w.strings(v, key)
					default:
						return false
					}
					return true
				})
				if ep.Golden == "" && len(ep.Contains) == 0 {
					w.Errorf(k, "exp_payloads.%s needs golden or contains", recv)
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
		w.Errorf(ruletest.Deref(n), "a notification test has alerts or from_rule_test, not both")
	}
	if d := ruletest.Deref(n); len(t.Alerts) == 0 && t.FromRuleTest == nil && d != nil && d.Kind == yaml.MappingNode {
		w.Errorf(ruletest.Deref(n), "a notification test needs alerts or from_rule_test")
	}
	return t
}
