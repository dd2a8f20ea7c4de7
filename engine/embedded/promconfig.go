package embedded

import (
	"fmt"

	"github.com/alecthomas/units"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery"
	"github.com/prometheus/prometheus/model/relabel"
	"go.yaml.in/yaml/v3"
)

// promScrapeConfig renders one shorthand ScrapeConfig as the Prometheus
// scrape_config it stands for, static_configs included: its targets reach
// the scrape manager through Prometheus's static discovery like any other.
type promScrapeConfig struct {
	JobName               string             `yaml:"job_name"`
	ScrapeInterval        string             `yaml:"scrape_interval"`
	ScrapeTimeout         string             `yaml:"scrape_timeout"`
	MetricsPath           string             `yaml:"metrics_path"`
	Scheme                string             `yaml:"scheme"`
	SampleLimit           int                `yaml:"sample_limit,omitempty"`
	BodySizeLimit         string             `yaml:"body_size_limit,omitempty"`
	LabelLimit            int                `yaml:"label_limit,omitempty"`
	LabelNameLengthLimit  int                `yaml:"label_name_length_limit,omitempty"`
	LabelValueLengthLimit int                `yaml:"label_value_length_limit,omitempty"`
	StaticConfigs         []promStaticConfig `yaml:"static_configs,omitempty"`
}

type promStaticConfig struct {
	Targets []string          `yaml:"targets"`
	Labels  map[string]string `yaml:"labels,omitempty"`
}

type promConfig struct {
	Global struct {
		ScrapeInterval string `yaml:"scrape_interval"`
		ScrapeTimeout  string `yaml:"scrape_timeout"`
	} `yaml:"global"`
	ScrapeConfigs []promScrapeConfig `yaml:"scrape_configs"`
}

// prometheusConfig renders validated options as a Prometheus configuration
// and loads it with Prometheus's own loader, so Prometheus's defaults and
// checks apply exactly as they would to a prometheus.yml. The verbatim
// PromScrapeConfigs are appended as given (they were parsed by the same
// loader), with paged's limits where they set none, and every job gets
// the Keep filter as its last metric_relabel_config.
func prometheusConfig(o *Options) (*config.Config, error) {
	var pc promConfig
	pc.Global.ScrapeInterval = promDuration(o.ScrapeInterval)
	pc.Global.ScrapeTimeout = promDuration(min(o.ScrapeTimeout, o.ScrapeInterval))
	for _, sc := range o.ScrapeConfigs {
		p := promScrapeConfig{
			JobName:               sc.JobName,
			ScrapeInterval:        promDuration(sc.ScrapeInterval),
			ScrapeTimeout:         promDuration(sc.ScrapeTimeout),
			MetricsPath:           sc.MetricsPath,
			Scheme:                sc.Scheme,
			SampleLimit:           o.MaxSamplesPerScrape,
			LabelLimit:            o.LabelLimit,
			LabelNameLengthLimit:  o.LabelNameLengthLimit,
			LabelValueLengthLimit: o.LabelValueLengthLimit,
		}
		if o.BodySizeLimit > 0 {
			p.BodySizeLimit = strconv.FormatInt(o.BodySizeLimit, 10) + "B"
		}
		for _, st := range sc.StaticConfigs {
			p.StaticConfigs = append(p.StaticConfigs, promStaticConfig{Targets: st.Targets, Labels: st.Labels})
		}
		pc.ScrapeConfigs = append(pc.ScrapeConfigs, p)
	}
	text, err := yaml.Marshal(&pc)
	if err != nil {
		return nil, fmt.Errorf("embedded: render scrape config: %w", err)
	}
	cfg, err := config.Load(string(text), nil)
	if err != nil {
		return nil, fmt.Errorf("embedded: scrape config rejected by Prometheus: %w", err)
	}
	for _, sc := range o.PromScrapeConfigs {
		c := *sc
		if c.SampleLimit == 0 {
			c.SampleLimit = uint(max(o.MaxSamplesPerScrape, 0))
		}
		if c.BodySizeLimit == 0 && o.BodySizeLimit > 0 {
			c.BodySizeLimit = units.Base2Bytes(o.BodySizeLimit)
		}
		if c.LabelLimit == 0 {
			c.LabelLimit = uint(max(o.LabelLimit, 0))
		}
		if c.LabelNameLengthLimit == 0 {
			c.LabelNameLengthLimit = uint(max(o.LabelNameLengthLimit, 0))
		}
		if c.LabelValueLengthLimit == 0 {
			c.LabelValueLengthLimit = uint(max(o.LabelValueLengthLimit, 0))
		}
		if c.ScrapeInterval == 0 {
			c.ScrapeInterval = model.Duration(o.ScrapeInterval)
		}
		if c.ScrapeTimeout == 0 {
			c.ScrapeTimeout = model.Duration(min(o.ScrapeTimeout, time.Duration(c.ScrapeInterval)))
		}
		cfg.ScrapeConfigs = append(cfg.ScrapeConfigs, &c)
	}
	if rc := o.Keep.relabelConfig(); rc != nil {
		for i, sc := range cfg.ScrapeConfigs {
			c := *sc
			c.MetricRelabelConfigs = append(slices.Clip(c.MetricRelabelConfigs), rc)
			cfg.ScrapeConfigs[i] = &c
		}
	}
	return cfg, nil
}

// discoveryConfigs is what the discovery manager runs: each job's
// service discovery configurations, static_configs included.
func discoveryConfigs(cfg *config.Config) map[string]discovery.Configs {
	out := make(map[string]discovery.Configs, len(cfg.ScrapeConfigs))
	for _, sc := range cfg.ScrapeConfigs {
		out[sc.JobName] = sc.ServiceDiscoveryConfigs
	}
	return out
}

func promDuration(d time.Duration) string { return model.Duration(d).String() }

// Keep selects the series the embedded TSDB stores: those whose metric
// name is one of Names or matches one of Patterns (RE2, anchored, as a
// PromQL =~ matcher). The series Prometheus reports about each scrape (up,
// scrape_duration_seconds, scrape_samples_scraped...) are always kept:
// metric relabelling never sees them. A nil *Keep keeps everything.
type Keep struct {
	Names    []string
	Patterns []string
}

// relabelConfig is the metric_relabel_config that keeps only k's series;
// nil keeps all.
func (k *Keep) relabelConfig() *relabel.Config {
	if k == nil {
		return nil
	}
	alts := make([]string, 0, len(k.Names)+len(k.Patterns))
	names := slices.Clone(k.Names)
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	for _, p := range k.Patterns {
		alts = append(alts, "(?:"+p+")")
	}
	re := "(?:" + strings.Join(alts, "|") + ")"
	if len(alts) == 0 {
		re = "" // matches only the empty name: drops every scraped series
	}
	r, err := relabel.NewRegexp(re)
	if err != nil {
		return nil // validated by fill; unreachable
	}
	return &relabel.Config{
		SourceLabels:         model.LabelNames{model.MetricNameLabel},
		Separator:            ";",
		Regex:                r,
		Replacement:          "$1",
		Action:               relabel.Keep,
		NameValidationScheme: model.UTF8Validation,
	}
}
