package ruletest

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"go.yaml.in/yaml/v3"
)

// Parse reads a test file. It walks the YAML node tree once, so every value
// keeps its position, and collects every problem instead of stopping at the
// first. Unknown fields are errors, as with promtool (the test file is always
// read strictly; --ignore-unknown-fields applies to rule files only).
func Parse(path string, content []byte) (*File, []error) {
	f := &File{Path: path}
	w := &walker{Walker{Path: path, MergeKeys: true}}
	var doc yaml.Node
	if err := yaml.Unmarshal(content, &doc); err != nil {
		return nil, []error{yamlError(path, err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return f, nil // an empty file has no tests, as with promtool
	}
	root := doc.Content[0]
	w.Mapping(root, "test file", func(key string, k, v *yaml.Node) bool {
		switch key {
		case "rule_files":
			w.Sequence(v, key, func(item *yaml.Node) {
				if s, ok := w.Str(item, "rule file"); ok {
					f.RuleFiles = append(f.RuleFiles, s)
					f.RuleFilesPos = append(f.RuleFilesPos, w.Pos(item))
				}
			})
		case "evaluation_interval":
			f.EvaluationInterval = w.duration(v, key)
		case "group_eval_order":
			w.Sequence(v, key, func(item *yaml.Node) {
				if s, ok := w.Str(item, "group name"); ok {
					f.GroupEvalOrder = append(f.GroupEvalOrder, s)
					f.GroupEvalOrderPos = append(f.GroupEvalOrderPos, w.Pos(item))
				}
			})
		case "fuzzy_compare":
			f.FuzzyCompare = w.boolean(v, key)
		case "tests":
			w.Sequence(v, key, func(item *yaml.Node) {
				f.Tests = append(f.Tests, w.testGroup(item))
			})
		case "notification_tests":
			// paged's extension: read by the notification test runner.
			f.NotificationTests = v
			f.NotificationsPos = w.Pos(k)
		default:
			return false
		}
		return true
	})
	if len(w.Errs) > 0 {
		return nil, w.Errs
	}
	return f, nil
}

// yamlError turns a YAML syntax error into path:line:col form when the
// library gives a line.
func yamlError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return &ParseError{Pos: Pos{Path: path}, Msg: strings.Join(te.Errors, "; ")}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	// "line 3: did not find expected key" -> path:3:1: did not find ...
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ":"); i > 0 {
			if n, convErr := strconv.Atoi(rest[:i]); convErr == nil {
				return &ParseError{Pos: Pos{Path: path, Line: n, Col: 1}, Msg: strings.TrimSpace(rest[i+1:])}
			}
		}
	}
	return &ParseError{Pos: Pos{Path: path}, Msg: msg}
}

// ParseError is a problem in a test file, at a position.
type ParseError struct {
	Pos Pos
	Msg string
}

func (e *ParseError) Error() string { return e.Pos.String() + ": " + e.Msg }

// walker adds to Walker the values of a rule test file.
type walker struct{ Walker }

func (w *walker) duration(n *yaml.Node, what string) time.Duration {
	s, ok := w.Str(n, what)
	if !ok || s == "" {
		return 0
	}
	d, err := model.ParseDuration(s)
	if err != nil {
		w.Errorf(Deref(n), "%s: %v", what, err)
		return 0
	}
	return time.Duration(d)
}

func (w *walker) boolean(n *yaml.Node, what string) bool {
	s, ok := w.Str(n, what)
	if !ok || s == "" {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y":
		return true
	case "false", "no", "off", "n":
		return false
	}
	w.Errorf(Deref(n), "%s: %q is not a boolean", what, s)
	return false
}

func (w *walker) float(n *yaml.Node, what string) float64 {
	s, ok := w.Str(n, what)
	if !ok || s == "" {
		return 0
	}
	switch strings.ToLower(s) {
	case ".inf", "+.inf":
		return math.Inf(1)
	case "-.inf":
		return math.Inf(-1)
	case ".nan":
		return math.NaN()
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil {
		if i, ierr := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64); ierr == nil {
			return float64(i)
		}
		w.Errorf(Deref(n), "%s: %q is not a number", what, s)
		return 0
	}
	return f
}

// timestamp reads start_timestamp: Unix seconds (fractions allowed) or RFC3339.
func (w *walker) timestamp(n *yaml.Node, what string) time.Time {
	s, ok := w.Str(n, what)
	if !ok || s == "" {
		return time.Time{}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e12 {
			w.Errorf(Deref(n), "%s: %q is out of range", what, s)
			return time.Time{}
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*float64(time.Second))).UTC()
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t
	}
	w.Errorf(Deref(n), "%s: cannot parse %q as a Unix timestamp or RFC3339 time", what, s)
	return time.Time{}
}

func (w *walker) stringMap(n *yaml.Node, what string) map[string]string {
	m := map[string]string{}
	w.Mapping(n, what, func(key string, _, v *yaml.Node) bool {
		if s, ok := w.Str(v, what+" value"); ok {
			m[key] = s
		}
		return true
	})
	return m
}

func (w *walker) testGroup(n *yaml.Node) TestGroup {
	tg := TestGroup{Pos: w.Pos(Deref(n))}
	w.Mapping(n, "test group", func(key string, k, v *yaml.Node) bool {
		switch key {
		case "name":
			tg.Name, _ = w.Str(v, key)
		case "interval":
			tg.Interval = w.duration(v, key)
		case "start_timestamp":
			tg.StartTimestamp = w.timestamp(v, key)
		case "input_series":
			w.Sequence(v, key, func(item *yaml.Node) {
				tg.InputSeries = append(tg.InputSeries, w.series(item))
			})
		case "alert_rule_test":
			w.Sequence(v, key, func(item *yaml.Node) {
				tg.AlertRuleTests = append(tg.AlertRuleTests, w.alertCase(item))
			})
		case "promql_expr_test":
			w.Sequence(v, key, func(item *yaml.Node) {
				tg.PromQLTests = append(tg.PromQLTests, w.promqlCase(item))
			})
		case "external_labels":
			tg.ExternalLabels = labels.FromMap(w.stringMap(v, key))
		case "external_url":
			tg.ExternalURL, _ = w.Str(v, key)
		default:
			return false
		}
		return true
	})
	return tg
}

func (w *walker) series(n *yaml.Node) Series {
	s := Series{Pos: w.Pos(Deref(n))}
	w.Mapping(n, "input series", func(key string, k, v *yaml.Node) bool {
		switch key {
		case "series":
			s.Series, _ = w.Str(v, key)
			if strings.ContainsAny(s.Series, "\r\n") {
				w.Errorf(Deref(v), "series must be on one line")
			}
		case "values":
			vals, _ := w.Str(v, key)
			// A block scalar may end in a newline; the notation is
			// whitespace-separated, so line breaks are just spaces.
			s.Values = strings.Join(strings.Fields(vals), " ")
		default:
			return false
		}
		return true
	})
	return s
}

func (w *walker) alertCase(n *yaml.Node) AlertTestCase {
	c := AlertTestCase{Pos: w.Pos(Deref(n))}
	w.Mapping(n, "alert_rule_test item", func(key string, k, v *yaml.Node) bool {
		switch key {
		case "eval_time":
			c.EvalTime = w.duration(v, key)
		case "alertname":
			c.Alertname, _ = w.Str(v, key)
		case "exp_alerts":
			c.ExpAlerts = w.expAlerts(v, key)
		case "exp_pending_alerts":
			c.ExpPendingAlerts = w.expAlerts(v, key)
			c.HasPending = true
		default:
			return false
		}
		return true
	})
	return c
}

func (w *walker) expAlerts(n *yaml.Node, what string) []ExpAlert {
	var out []ExpAlert
	w.Sequence(n, what, func(item *yaml.Node) {
		var a ExpAlert
		w.Mapping(item, what+" item", func(key string, k, v *yaml.Node) bool {
			switch key {
			case "exp_labels":
				a.Labels = w.stringMap(v, key)
			case "exp_annotations":
				a.Annotations = w.stringMap(v, key)
			default:
				return false
			}
			return true
		})
		out = append(out, a)
	})
	return out
}

func (w *walker) promqlCase(n *yaml.Node) PromQLTestCase {
	c := PromQLTestCase{Pos: w.Pos(Deref(n))}
	w.Mapping(n, "promql_expr_test item", func(key string, k, v *yaml.Node) bool {
		switch key {
		case "expr":
			c.Expr, _ = w.Str(v, key)
		case "eval_time":
			c.EvalTime = w.duration(v, key)
		case "exp_samples":
			w.Sequence(v, key, func(item *yaml.Node) {
				s := ExpSample{Pos: w.Pos(Deref(item))}
				w.Mapping(item, "exp_samples item", func(key string, k, v *yaml.Node) bool {
					switch key {
					case "labels":
						s.Labels, _ = w.Str(v, key)
					case "value":
						s.Value = w.float(v, key)
					case "histogram":
						s.Histogram, _ = w.Str(v, key)
					default:
						return false
					}
					return true
				})
				c.ExpSamples = append(c.ExpSamples, s)
			})
		default:
			return false
		}
		return true
	})
	return c
}
