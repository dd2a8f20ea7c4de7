package backtest

import (
	"time"
)

// Report is the result of a backtest.
type Report struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Queries is the number of range queries sent.
	Queries int `json:"queries"`
	// Evaluations is the number of rule evaluations replayed.
	Evaluations int `json:"evaluations"`
	// Grouping is the Alertmanager model behind Notifications.
	Grouping GroupingReport `json:"grouping"`
	// FlapWindow is the gap under which a re-fire counts as a flap.
	FlapWindow Duration      `json:"flap_window"`
	Rules      []*RuleReport `json:"rules"`
}

// GroupingReport says how notifications were counted.
type GroupingReport struct {
	GroupBy        []string `json:"group_by"`
	GroupWait      Duration `json:"group_wait"`
	GroupInterval  Duration `json:"group_interval"`
	RepeatInterval Duration `json:"repeat_interval"`
	SendResolved   bool     `json:"send_resolved"`
}

// RuleReport is what one alerting rule would have done.
type RuleReport struct {
	Name          string     `json:"name"`
	Group         string     `json:"group"`
	File          string     `json:"file"`
	Expr          string     `json:"expr"`
	Interval      Duration   `json:"interval"`
	For           Duration   `json:"for"`
	KeepFiringFor Duration   `json:"keep_firing_for"`
	Threshold     *Threshold `json:"threshold,omitempty"`

	// Evaluations is the number of evaluation steps replayed.
	Evaluations int `json:"evaluations"`

	// Firing and Pending are the periods of every label set, by start.
	Firing  []Interval `json:"firing"`
	Pending []Interval `json:"pending"`

	// Fired counts firing periods (alerts sent as firing); Resolved the
	// ones that ended within the range.
	Fired    int `json:"fired"`
	Resolved int `json:"resolved"`
	// LabelSets counts the distinct label sets that fired.
	LabelSets int `json:"label_sets"`
	// Notifications is what the Grouping model would have delivered.
	Notifications int `json:"notifications"`
	// TimeFiring sums the firing periods of all label sets.
	TimeFiring Duration `json:"time_firing"`
	Longest    Duration `json:"longest"`
	// Flaps counts firing periods that began within the flap window after
	// the previous period of the same label set ended.
	Flaps int `json:"flaps"`
	// EvalErrors counts evaluations that failed after the query succeeded
	// (duplicate label sets, group limit).
	EvalErrors int `json:"eval_errors,omitempty"`
	// Error is set when the rule could not be replayed (query failed).
	Error string `json:"error,omitempty"`

	Chart *Chart `json:"-"`
}

// Interval is one pending or firing period of one label set.
type Interval struct {
	Labels   map[string]string `json:"labels"`
	Start    time.Time         `json:"start"`
	End      time.Time         `json:"end"`
	Duration Duration          `json:"duration"`
	// Open: still pending or firing at the end of the range.
	Open bool `json:"open,omitempty"`
}

// Chart is the data of a rule's chart in the HTML report.
type Chart struct {
	Expr   string        `json:"expr"`
	Series []ChartSeries `json:"series"`
	// Omitted counts the series not drawn (lower maxima).
	Omitted int `json:"omitted"`
}

// ChartSeries is one series of a chart: unix milliseconds and values.
type ChartSeries struct {
	Labels string    `json:"labels"`
	T      []int64   `json:"t"`
	V      []float64 `json:"v"`
}

// Duration marshals as Go's duration string ("1h30m0s").
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d Duration) String() string { return time.Duration(d).String() }
