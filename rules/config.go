package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// Config tunes the linter. It is read from .paged-lint.yaml; the zero value
// is not useful, start from DefaultConfig.
type Config struct {
	// Disabled checks, by name ("promql/counter") or area ("promql").
	Disabled []string
	// Severity overrides per check name.
	Severity map[string]Severity
	// RequiredLabels: label name → allowed values (empty: any value).
	RequiredLabels map[string][]string
	// RequiredAnnotations every alerting rule must carry.
	RequiredAnnotations []string
	// RequiredLabelsSet and RequiredAnnotationsSet record that the team
	// wrote its policy (required_labels, required_annotations) in the
	// configuration: the policy checks report at warning then, and at info
	// while the defaults stand, so that an adopting team's missing
	// runbook links do not drown the bugs in --fail-on warning.
	RequiredLabelsSet      bool
	RequiredAnnotationsSet bool
	// ScrapeInterval is the scrape interval assumed by range checks.
	ScrapeInterval time.Duration
	// MinRangeScrapes: a range selector must span at least this many
	// scrape intervals (default 2).
	MinRangeScrapes int
	// RunbooksDir is where relative runbook_url links are looked up. Empty:
	// the nearest "runbooks" folder beside an ancestor of the rule file.
	RunbooksDir string
	// CheckLinks makes the runbook check send HTTP HEAD to absolute links.
	CheckLinks bool
	// Prometheus, when set, enables online checks against that server.
	Prometheus PrometheusAPI
	// PrometheusURL is lint.prometheus.url from the file; the command
	// line's --prometheus wins.
	PrometheusURL string
	// LiveLookback is how far back the live checks look for a selector's
	// series when explaining why it matches nothing (default 7d).
	LiveLookback time.Duration
	// LiveWindow is the history alerts/count replays (default 1d).
	LiveWindow time.Duration
	// LiveMaxSeries: query/cost warns above this many series read by one
	// evaluation (default 100000).
	LiveMaxSeries int
	// RemovedRecords are the recording rules a base revision has and the
	// linted files do not (paged lint --base), for rule/dependency.
	RemovedRecords map[string]RemovedRecord
	// Only, when set, runs just these checks (besides the loader's).
	Only []string

	live *liveState // what the live checks learnt during this run
}

// PrometheusAPI is what online checks ask a live Prometheus.
type PrometheusAPI interface {
	// SeriesExist reports whether any series matches the selector.
	SeriesExist(selector string) (bool, error)
}

// DefaultConfig is the configuration used when there is no file.
func DefaultConfig() *Config {
	return &Config{
		Severity: map[string]Severity{},
		RequiredLabels: map[string][]string{
			"severity": {"critical", "warning", "info"},
		},
		RequiredAnnotations: []string{"summary", "runbook_url"},
		ScrapeInterval:      15 * time.Second,
		MinRangeScrapes:     2,
		LiveLookback:        7 * 24 * time.Hour,
		LiveWindow:          24 * time.Hour,
		LiveMaxSeries:       100000,
	}
}

func (c *Config) severity(ch *Check) Severity {
	if s, ok := c.Severity[ch.Name]; ok {
		return s
	}
	return ch.Severity
}

// Enabled reports whether a check runs under this configuration.
func (c *Config) Enabled(ch *Check) bool {
	if ch.Online && c.Prometheus == nil {
		return false
	}
	if len(c.Only) > 0 && !matchesAny(c.Only, ch.Name) {
		return false
	}
	return !matchesAny(c.Disabled, ch.Name)
}

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if checkMatches(p, name) {
			return true
		}
	}
	return false
}

// checkMatches: "all", the exact name, or its area ("promql" matches
// "promql/counter").
func checkMatches(pattern, name string) bool {
	pattern = strings.TrimSuffix(strings.TrimSpace(pattern), "/*")
	return pattern == "all" || pattern == name || strings.HasPrefix(name, pattern+"/")
}

// LoadConfig reads a .paged-lint.yaml file on top of the defaults.
//
//	disable: [promql/range]
//	severity: {alerts/comparison: error}
//	required_labels: {severity: [critical, warning], team: []}
//	required_annotations: [summary, runbook_url, description]
//	scrape_interval: 30s
//	min_range_scrapes: 4
//	runbooks_dir: docs/runbooks
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, b)
}

// ParseConfig parses lint configuration; errors name path:line:col.
func ParseConfig(path string, b []byte) (*Config, error) {
	c := DefaultConfig()
	var raw struct {
		Disable             []string            `yaml:"disable"`
		Severity            map[string]string   `yaml:"severity"`
		RequiredLabels      map[string][]string `yaml:"required_labels"`
		RequiredAnnotations *[]string           `yaml:"required_annotations"`
		ScrapeInterval      string              `yaml:"scrape_interval"`
		MinRangeScrapes     int                 `yaml:"min_range_scrapes"`
		RunbooksDir         string              `yaml:"runbooks_dir"`
		Prometheus          struct {
			URL       string `yaml:"url"`
			Lookback  string `yaml:"lookback"`
			Window    string `yaml:"window"`
			MaxSeries int    `yaml:"max_series"`
		} `yaml:"prometheus"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	c.Disabled = raw.Disable
	known := map[string]bool{}
	for _, ch := range Checks() {
		known[ch.Name] = true
	}
	for _, d := range raw.Disable {
		if !knownPattern(known, d) {
			return nil, fmt.Errorf("%s: disable: unknown check %q", path, d)
		}
	}
	for name, s := range raw.Severity {
		if !known[name] {
			return nil, fmt.Errorf("%s: severity: unknown check %q", path, name)
		}
		sev, err := ParseSeverity(s)
		if err != nil {
			return nil, fmt.Errorf("%s: severity: %s: %w", path, name, err)
		}
		c.Severity[name] = sev
	}
	if raw.RequiredLabels != nil {
		c.RequiredLabels, c.RequiredLabelsSet = raw.RequiredLabels, true
	}
	if raw.RequiredAnnotations != nil {
		c.RequiredAnnotations, c.RequiredAnnotationsSet = *raw.RequiredAnnotations, true
	}
	if raw.ScrapeInterval != "" {
		d, err := time.ParseDuration(raw.ScrapeInterval)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s: scrape_interval: not a positive duration: %q", path, raw.ScrapeInterval)
		}
		c.ScrapeInterval = d
	}
	if raw.MinRangeScrapes < 0 {
		return nil, fmt.Errorf("%s: min_range_scrapes must not be negative", path)
	}
	if raw.MinRangeScrapes > 0 {
		c.MinRangeScrapes = raw.MinRangeScrapes
	}
	c.RunbooksDir = raw.RunbooksDir
	c.PrometheusURL = raw.Prometheus.URL
	if raw.Prometheus.MaxSeries < 0 {
		return nil, fmt.Errorf("%s: prometheus.max_series must not be negative", path)
	}
	if raw.Prometheus.MaxSeries > 0 {
		c.LiveMaxSeries = raw.Prometheus.MaxSeries
	}
	for _, d := range []struct {
		key, val string
		dst      *time.Duration
	}{{"prometheus.lookback", raw.Prometheus.Lookback, &c.LiveLookback}, {"prometheus.window", raw.Prometheus.Window, &c.LiveWindow}} {
		if d.val == "" {
			continue
		}
		v, err := model.ParseDuration(d.val)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%s: %s: not a positive duration: %q", path, d.key, d.val)
		}
		*d.dst = time.Duration(v)
	}
	return c, nil
}

func knownPattern(known map[string]bool, p string) bool {
	for name := range known {
		if checkMatches(p, name) {
			return true
		}
	}
	return false
}
