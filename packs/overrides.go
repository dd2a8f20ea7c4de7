package packs

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules"
)

// Overrides tune a pack without forking it: the keys of a paged.yaml
// packs: entry, and the same flags of `paged packs show` and `paged
// export`. The zero value changes nothing.
type Overrides struct {
	// Selector holds label matchers, as `{job="vllm-prod"}`, added to every
	// vector selector of the pack's expressions (inside range selectors,
	// subqueries and function arguments such as absent() too). A matcher
	// replaces the pack's matchers on the same label and keeps the others:
	// `{job="vllm-prod"}` turns `up{job="vllm"}` into `up{job="vllm-prod"}`.
	Selector string
	// Set replaces, by alert name, the threshold: the number in the
	// alert's top-level comparison (rules.SplitThreshold, as `paged
	// backtest --set`).
	Set map[string]float64
	// For replaces, by alert name, the `for` duration.
	For map[string]model.Duration
	// Severity replaces, by alert name, the severity label: critical,
	// warning or info.
	Severity map[string]string
	// Labels are set on every alert of the pack, replacing a label of the
	// same name (Severity is applied after them).
	Labels map[string]string
	// Disable removes alerts from the pack.
	Disable []string
	// RunbookBaseURL, when set, makes relative runbook_url annotations
	// absolute under it (what `paged export --runbook-base-url` does; the
	// engine keeps them relative and the notifier resolves them).
	RunbookBaseURL *url.URL
	// RunbookSuffix, when set, replaces the .md suffix of relative
	// runbook links (".html" for the pages `paged export --runbooks`
	// writes).
	RunbookSuffix string
}

// Empty reports whether o changes nothing.
func (o Overrides) Empty() bool {
	return o.Selector == "" && len(o.Set) == 0 && len(o.For) == 0 && len(o.Severity) == 0 &&
		len(o.Labels) == 0 && len(o.Disable) == 0 && o.RunbookBaseURL == nil && o.RunbookSuffix == ""
}

// Severities are the values of the severity label (DESIGN.md §4).
var severities = []string{"critical", "warning", "info"}

// Keys of the overrides, as paged.yaml names them.
const (
	KeySelector = "selector"
	KeySet      = "set"
	KeyFor      = "for"
	KeySeverity = "severity"
	KeyLabels   = "labels"
	KeyDisable  = "disable"
)

// Error is one override that cannot apply. Key is the override (KeySet,
// KeyDisable...); Name the alert or label it names ("" for the selector);
// Index the position in Disable. Offset is the byte offset in Selector of
// a selector that does not parse, -1 otherwise. Value is set when the
// problem is the value given for Name (a severity that is not one), not
// the name.
type Error struct {
	Key    string
	Name   string
	Index  int
	Offset int
	Value  bool
	Msg    string
}

func (e *Error) Error() string {
	switch {
	case e.Key == KeySelector:
		return "selector: " + e.Msg
	case e.Key == KeyDisable:
		return fmt.Sprintf("disable[%d]: %s", e.Index, e.Msg)
	case e.Name != "":
		return e.Key + "." + e.Name + ": " + e.Msg
	}
	return e.Key + ": " + e.Msg
}

// Errors are all the overrides of one pack that cannot apply, in the
// order of the keys (selector, set, for, severity, labels, disable) and,
// within a key, of the names.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// ParseSelector parses a selector override: label matchers in braces, as
// `{job="vllm-prod", namespace=~"llm-.*"}`, without a metric name. On a
// parse error the *Error's Offset is where in s it is.
func ParseSelector(s string) ([]*labels.Matcher, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &Error{Key: KeySelector, Offset: 0, Msg: "empty: want label matchers such as {job=\"vllm-prod\"}"}
	}
	p := parser.NewParser(parser.Options{})
	ms, err := p.ParseMetricSelector(s)
	if err != nil {
		off := 0
		msg := err.Error()
		var pe parser.ParseErrors
		if errors.As(err, &pe) && len(pe) > 0 {
			off = int(pe[0].PositionRange.Start)
			msg = pe[0].Err.Error()
		}
		return nil, &Error{Key: KeySelector, Offset: off, Msg: fmt.Sprintf("invalid selector: %s (want label matchers such as {job=\"vllm-prod\"})", msg)}
	}
	trimmed := strings.TrimSpace(s)
	if !strings.HasPrefix(trimmed, "{") {
		return nil, &Error{Key: KeySelector, Offset: strings.Index(s, trimmed), Msg: "names a metric: want label matchers only, such as {job=\"vllm-prod\"}, added to every metric of the pack"}
	}
	if len(ms) == 0 {
		return nil, &Error{Key: KeySelector, Offset: strings.Index(s, "{"), Msg: "has no matchers: want label matchers such as {job=\"vllm-prod\"}"}
	}
	for _, m := range ms {
		if m.Name == labels.MetricName {
			return nil, &Error{Key: KeySelector, Offset: strings.Index(s, labels.MetricName), Msg: "matches __name__: the selector adds label matchers to the pack's metrics, it cannot change which metrics they are"}
		}
	}
	return ms, nil
}

// checkValues validates what does not depend on the pack: selector
// syntax, severities, label names, numbers.
func (o Overrides) checkValues() ([]*labels.Matcher, Errors) {
	var errs Errors
	var ms []*labels.Matcher
	if o.Selector != "" {
		var err error
		ms, err = ParseSelector(o.Selector)
		if err != nil {
			errs = append(errs, err.(*Error))
		}
	}
	for _, name := range sortedKeys(o.Set) {
		if v := o.Set[name]; math.IsNaN(v) || math.IsInf(v, 0) {
			errs = append(errs, &Error{Key: KeySet, Name: name, Offset: -1, Value: true, Msg: fmt.Sprintf("threshold %s: want a finite number", strconv.FormatFloat(v, 'g', -1, 64))})
		}
	}
	for _, name := range sortedKeys(o.For) {
		if o.For[name] < 0 {
			errs = append(errs, &Error{Key: KeyFor, Name: name, Offset: -1, Value: true, Msg: "must not be negative"})
		}
	}
	for _, name := range sortedKeys(o.Severity) {
		v := o.Severity[name]
		ok := false
		for _, s := range severities {
			ok = ok || v == s
		}
		if !ok {
			errs = append(errs, &Error{Key: KeySeverity, Name: name, Offset: -1, Value: true, Msg: fmt.Sprintf("severity %q: want one of %s", v, strings.Join(severities, ", "))})
		}
	}
	for _, name := range sortedKeys(o.Labels) {
		switch {
		case !model.UTF8Validation.IsValidLabelName(name) || strings.HasPrefix(name, "__"):
			errs = append(errs, &Error{Key: KeyLabels, Name: name, Offset: -1, Msg: "invalid label name"})
		case name == labels.AlertName:
			errs = append(errs, &Error{Key: KeyLabels, Name: name, Offset: -1, Msg: "alertname is the alert's name and cannot be set"})
		case !model.LabelValue(o.Labels[name]).IsValid():
			errs = append(errs, &Error{Key: KeyLabels, Name: name, Offset: -1, Value: true, Msg: "label value is not valid UTF-8"})
		default:
			if err := rules.TemplateError(o.Labels[name]); err != nil {
				errs = append(errs, &Error{Key: KeyLabels, Name: name, Offset: -1, Value: true, Msg: "label template does not parse: " + err.Error()})
			}
		}
	}
	return ms, errs
}
