package embedded

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"go.yaml.in/yaml/v3"
)

// promScrapeConfig is the part of a Prometheus scrape_config paged sets.
// Targets are not in it: they reach the scrape manager as target groups.
type promScrapeConfig struct {
	JobName               string `yaml:"job_name"`
	ScrapeInterval        string `yaml:"scrape_interval"`
	ScrapeTimeout         string `yaml:"scrape_timeout"`
	MetricsPath           string `yaml:"metrics_path"`
	Scheme                string `yaml:"scheme"`
	SampleLimit           int    `yaml:"sample_limit,omitempty"`
	BodySizeLimit         string `yaml:"body_size_limit,omitempty"`
	LabelLimit            int    `yaml:"label_limit,omitempty"`
	LabelNameLengthLimit  int    `yaml:"label_name_length_limit,omitempty"`
	LabelValueLengthLimit int    `yaml:"label_value_length_limit,omitempty"`
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
// checks apply exactly as they would to a prometheus.yml.
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
	return cfg, nil
}

func promDuration(d time.Duration) string { return model.Duration(d).String() }

// targetGroups turns the static configs into the target groups Prometheus's
// static discovery would produce: one group per static_config, keyed by
// job name.
func targetGroups(o *Options) map[string][]*targetgroup.Group {
	out := make(map[string][]*targetgroup.Group, len(o.ScrapeConfigs))
	for _, sc := range o.ScrapeConfigs {
		groups := make([]*targetgroup.Group, 0, len(sc.StaticConfigs))
		for i, st := range sc.StaticConfigs {
			g := &targetgroup.Group{Source: strconv.Itoa(i), Labels: model.LabelSet{}}
			for _, t := range st.Targets {
				g.Targets = append(g.Targets, model.LabelSet{model.AddressLabel: model.LabelValue(t)})
			}
			for k, v := range st.Labels {
				g.Labels[model.LabelName(k)] = model.LabelValue(v)
			}
			groups = append(groups, g)
		}
		out[sc.JobName] = groups
	}
	return out
}
