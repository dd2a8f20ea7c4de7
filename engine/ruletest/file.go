package ruletest

import (
	"fmt"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"go.yaml.in/yaml/v3"
)

// Pos is a position in a test file.
type Pos struct {
	Path string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.Path
	}
	return fmt.Sprintf("%s:%d:%d", p.Path, p.Line, p.Col)
}

// File is one test file, as written.
type File struct {
	Path               string
	RuleFiles          []string // as written, relative to the test file
	RuleFilesPos       []Pos
	EvaluationInterval time.Duration // 0 when not set
	GroupEvalOrder     []string
	GroupEvalOrderPos  []Pos
	FuzzyCompare       bool
	Tests              []TestGroup
	// NotificationTests is the notification_tests list as written, for the
	// runner of Options.Notifications to read (nil when the key is absent).
	// Rule tests never look into it.
	NotificationTests *yaml.Node
	NotificationsPos  Pos
}

// TestGroup is one entry of tests: its own input series and assertions.
type TestGroup struct {
	Pos            Pos
	Name           string
	Interval       time.Duration // 0 when not set: the evaluation interval
	StartTimestamp time.Time     // zero when not set: the Unix epoch
	InputSeries    []Series
	AlertRuleTests []AlertTestCase
	PromQLTests    []PromQLTestCase
	ExternalLabels labels.Labels
	ExternalURL    string
}

// Series is one input series in the expanding notation.
type Series struct {
	Pos    Pos
	Series string
	Values string
}

// AlertTestCase asserts the alerts of one alert name at one time.
type AlertTestCase struct {
	Pos       Pos
	EvalTime  time.Duration
	Alertname string
	ExpAlerts []ExpAlert // firing alerts; empty means none may fire
	// ExpPendingAlerts is the paged extension: when HasPending is set (the
	// key exp_pending_alerts is present, even as an empty list), the pending
	// alerts of Alertname at EvalTime must be exactly these.
	ExpPendingAlerts []ExpAlert
	HasPending       bool
}

// ExpAlert is one expected alert: labels (without alertname) and the
// expanded annotations.
type ExpAlert struct {
	Labels      map[string]string
	Annotations map[string]string
}

// PromQLTestCase asserts the result of an instant query.
type PromQLTestCase struct {
	Pos        Pos
	Expr       string
	EvalTime   time.Duration
	ExpSamples []ExpSample
}

// ExpSample is one expected sample; a non-empty Histogram replaces Value.
type ExpSample struct {
	Pos       Pos
	Labels    string
	Value     float64
	Histogram string
}

// maxEvalTime is the last time any case of the group looks at.
func (tg *TestGroup) maxEvalTime() time.Duration {
	var maxd time.Duration
	for _, a := range tg.AlertRuleTests {
		maxd = max(maxd, a.EvalTime)
	}
	for _, p := range tg.PromQLTests {
		maxd = max(maxd, p.EvalTime)
	}
	return maxd
}
