package backtest

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/rules"
)

// DefaultMaxPoints is Prometheus's limit of points per series in one range
// query result (query_range refuses more than 11,000).
const DefaultMaxPoints = 11000

// Options configure Run. Zero values take the defaults noted.
type Options struct {
	// Source answers the range queries. Required.
	Source Source
	// RuleFiles are the rule files to replay (paths, already expanded).
	RuleFiles []string
	// Files are parsed rule files to replay beside them that come from no
	// path: the packs of paged.yaml with their overrides applied.
	Files []*rules.File
	// From and To bound the replay. Required; From before To.
	From, To time.Time

	// EvaluationInterval of groups that set none. Default 30s.
	EvaluationInterval time.Duration
	// ExternalLabels and ExternalURL are what templates see.
	ExternalLabels labels.Labels
	ExternalURL    string

	// Rules selects alerting rules by name; nil selects all.
	Rules *regexp.Regexp
	// Thresholds overrides, by alert name, the numeric literal of the
	// rule's top-level comparison (see SplitThreshold).
	Thresholds map[string]float64

	// MaxPoints bounds the points per series of one range query; longer
	// ranges are split. Default DefaultMaxPoints.
	MaxPoints int
	// Parallel is the number of range queries in flight. Default 4.
	Parallel int
	// Grouping models the Alertmanager route that counts notifications.
	// Zero fields take Alertmanager's defaults.
	Grouping Grouping
	// FlapWindow: a firing interval that starts less than FlapWindow after
	// the previous one of the same label set ended counts as a flap.
	// Default 15m.
	FlapWindow time.Duration

	// Charts asks for the data of the HTML report's charts: one more range
	// query per rule (the comparison's left-hand side, or the expression).
	Charts bool
	// ChartPoints is the number of points per chart series. Default 1500.
	ChartPoints int
	// ChartSeries is the most series drawn per chart (the highest). Default 8.
	ChartSeries int

	// Progress, when set, is called after each query with the number of
	// queries done and the total planned.
	Progress func(done, total int)
	// Logger; nil discards.
	Logger *slog.Logger
}

// Grouping is the part of an Alertmanager route that decides how many
// notifications a set of alerts produces. Alerts are grouped per rule
// (group_by: [alertname], Alertmanager's shipped example configuration).
type Grouping struct {
	GroupWait      time.Duration // default 30s
	GroupInterval  time.Duration // default 5m
	RepeatInterval time.Duration // default 4h
	// NoResolved disables notifications of resolution (send_resolved: false).
	NoResolved bool
}

func (o *Options) validate() error {
	var errs []error
	if o.Source == nil {
		errs = append(errs, errors.New("backtest: a source is required"))
	}
	if o.From.IsZero() || o.To.IsZero() {
		errs = append(errs, errors.New("backtest: --from and --to are required"))
	} else if !o.From.Before(o.To) {
		errs = append(errs, fmt.Errorf("backtest: from (%s) must be before to (%s)", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339)))
	}
	for name, d := range map[string]time.Duration{
		"evaluation interval": o.EvaluationInterval, "flap window": o.FlapWindow,
		"group_wait": o.Grouping.GroupWait, "group_interval": o.Grouping.GroupInterval,
		"repeat_interval": o.Grouping.RepeatInterval,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("backtest: %s must not be negative", name))
		}
	}
	if o.MaxPoints < 0 || o.Parallel < 0 || o.ChartPoints < 0 || o.ChartSeries < 0 {
		errs = append(errs, errors.New("backtest: point and series limits must not be negative"))
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.EvaluationInterval == 0 {
		o.EvaluationInterval = 30 * time.Second
	}
	if o.MaxPoints == 0 {
		o.MaxPoints = DefaultMaxPoints
	}
	if o.Parallel == 0 {
		o.Parallel = 4
	}
	if o.FlapWindow == 0 {
		o.FlapWindow = 15 * time.Minute
	}
	if o.ChartPoints == 0 {
		o.ChartPoints = 1500
	}
	if o.ChartSeries == 0 {
		o.ChartSeries = 8
	}
	if o.Grouping.GroupWait == 0 {
		o.Grouping.GroupWait = 30 * time.Second
	}
	if o.Grouping.GroupInterval == 0 {
		o.Grouping.GroupInterval = 5 * time.Minute
	}
	if o.Grouping.RepeatInterval == 0 {
		o.Grouping.RepeatInterval = 4 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = func(int, int) {}
	}
}
