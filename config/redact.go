package config

import (
	"net/url"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
)

// secretPlaceholder replaces every secret in the redacted configuration, as
// Prometheus and Alertmanager do.
const secretPlaceholder = "<secret>"

// Redacted returns the configuration as YAML with defaults filled in and
// every secret replaced by <secret>: passwords, tokens, credentials, the
// userinfo and query of URLs, and in the notifier block every URL and every
// key that names a secret. It is what /api/v1/status/config serves.
func (c *Config) Redacted() (string, error) {
	type view struct {
		Global struct {
			EvaluationInterval string            `yaml:"evaluation_interval"`
			ExternalURL        string            `yaml:"external_url"`
			ExternalLabels     map[string]string `yaml:"external_labels,omitempty"`
			NoSeriesAfter      string            `yaml:"no_series_after"`
			AlignEvaluations   bool              `yaml:"align_evaluations"`
		} `yaml:"global"`
		Datasource struct {
			Type              string          `yaml:"type"`
			DownAfterFailures int             `yaml:"down_after_failures"`
			Prometheus        *prometheusView `yaml:"prometheus,omitempty"`
			Embedded          *struct {
				ScrapeInterval string     `yaml:"scrape_interval"`
				ScrapeTimeout  string     `yaml:"scrape_timeout,omitempty"`
				Retention      string     `yaml:"retention"`
				Keep           string     `yaml:"keep"`
				Query          *queryView `yaml:"query,omitempty"`
				ScrapeConfigs  *yaml.Node `yaml:"scrape_configs"`
			} `yaml:"embedded,omitempty"`
		} `yaml:"datasource"`
		RuleFiles      []string   `yaml:"rule_files"`
		Packs          []packView `yaml:"packs,omitempty"`
		RunbookBaseURL string     `yaml:"runbook_base_url"`
		GrafanaURL     string     `yaml:"grafana_url,omitempty"`
		Storage        struct {
			Path    string `yaml:"path"`
			History struct {
				Enabled   bool   `yaml:"enabled"`
				Retention string `yaml:"retention"`
				MaxBytes  int64  `yaml:"max_bytes"`
			} `yaml:"history"`
		} `yaml:"storage"`
		Report struct {
			TimeZone          string   `yaml:"time_zone"`
			WorkingHours      string   `yaml:"working_hours"`
			WorkingDays       []string `yaml:"working_days,flow"`
			FlappingThreshold int      `yaml:"flapping_threshold"`
		} `yaml:"report"`
		Web struct {
			ListenAddress       string `yaml:"listen_address"`
			AuthTokenFile       string `yaml:"auth_token_file,omitempty"`
			RunbooksDir         string `yaml:"runbooks_dir,omitempty"`
			ConfigFile          string `yaml:"config_file,omitempty"`
			MaxRequestBodyBytes int64  `yaml:"max_request_body_bytes"`
			MaxHeaderBytes      int64  `yaml:"max_header_bytes"`
			MaxAlertsPerRequest int    `yaml:"max_alerts_per_request"`

			ReadTimeout             string `yaml:"read_timeout"`
			IdleTimeout             string `yaml:"idle_timeout"`
			MaxRequestBytesInFlight int64  `yaml:"max_request_bytes_in_flight"`
			MaxLabelsPerAlert       int    `yaml:"max_labels_per_alert"`
			MaxLabelNameBytes       int64  `yaml:"max_label_name_bytes"`
			MaxLabelValueBytes      int64  `yaml:"max_label_value_bytes"`
			MaxRegexpSize           int64  `yaml:"max_regexp_size"`
			RegexpQueryTimeout      string `yaml:"regexp_query_timeout"`
		} `yaml:"web"`
		Cluster  *clusterView `yaml:"cluster,omitempty"`
		Notifier *yaml.Node   `yaml:"notifier,omitempty"`
	}
	var v view
	v.Global.EvaluationInterval = promDuration(c.Global.EvaluationInterval)
	v.Global.ExternalURL = redactURL(c.Global.ExternalURL)
	v.Global.ExternalLabels = c.Global.ExternalLabels.Map()
	v.Global.NoSeriesAfter = promDuration(c.Global.NoSeriesAfter)
	v.Global.AlignEvaluations = c.Global.AlignEvaluations
	ds := &v.Datasource
	ds.Type = c.Datasource.Type
	ds.DownAfterFailures = c.Datasource.DownAfterFailures
	switch c.Datasource.Type {
	case DatasourcePrometheus:
		hc := c.Datasource.Prometheus.HTTPConfig
		ds.Prometheus = &prometheusView{URL: redactURL(c.Datasource.Prometheus.URL), Timeout: promDuration(c.Datasource.Prometheus.Timeout),
			CombineQueries: c.Datasource.Prometheus.CombineQueries, HTTPConfig: &hc, GeneratorURLTemplate: c.Datasource.Prometheus.GeneratorURLTemplate}
		if u := c.Datasource.Prometheus.ExternalURL; u != nil {
			ds.Prometheus.ExternalURL = redactURL(u)
		}
	case DatasourceEmbedded:
		e := c.Datasource.Embedded
		ds.Embedded = &struct {
			ScrapeInterval string     `yaml:"scrape_interval"`
			ScrapeTimeout  string     `yaml:"scrape_timeout,omitempty"`
			Retention      string     `yaml:"retention"`
			Keep           string     `yaml:"keep"`
			Query          *queryView `yaml:"query,omitempty"`
			ScrapeConfigs  *yaml.Node `yaml:"scrape_configs"`
		}{ScrapeInterval: promDuration(e.ScrapeInterval), Retention: promDuration(e.Retention), Keep: e.Keep}
		if e.ScrapeTimeout > 0 {
			ds.Embedded.ScrapeTimeout = promDuration(e.ScrapeTimeout)
		}
		if q := e.Query; q != (QueryLimits{}) {
			ds.Embedded.Query = &queryView{MaxSamples: q.MaxSamples}
			if q.Timeout > 0 {
				ds.Embedded.Query.Timeout = promDuration(q.Timeout)
			}
			if q.LookbackDelta > 0 {
				ds.Embedded.Query.LookbackDelta = promDuration(q.LookbackDelta)
			}
		}
		// Prometheus's own marshalling, which writes every secret as
		// <secret>, as Prometheus's /api/v1/status/config does.
		text, err := yamlv2.Marshal(e.ScrapeConfigs)
		if err != nil {
			return "", err
		}
		var n yaml.Node
		if err := yaml.Unmarshal(text, &n); err != nil {
			return "", err
		}
		if len(n.Content) == 1 {
			ds.Embedded.ScrapeConfigs = n.Content[0]
		}
	}
	v.RuleFiles = c.RuleFiles
	for _, p := range c.Packs {
		pv := packView{Name: p.Name, Selector: p.Overrides.Selector, Set: p.Overrides.Set,
			Severity: p.Overrides.Severity, Labels: p.Overrides.Labels, Disable: p.Overrides.Disable}
		for k, d := range p.Overrides.For {
			if pv.For == nil {
				pv.For = map[string]string{}
			}
			pv.For[k] = d.String()
		}
		v.Packs = append(v.Packs, pv)
	}
	v.RunbookBaseURL = redactURL(c.RunbookBaseURL)
	if c.GrafanaURL != nil {
		v.GrafanaURL = redactURL(c.GrafanaURL)
	}
	v.Storage.Path = c.Storage.Path
	v.Storage.History.Enabled = c.Storage.History.Enabled
	v.Storage.History.Retention = promDuration(c.Storage.History.Retention)
	v.Storage.History.MaxBytes = c.Storage.History.MaxBytes
	v.Report.TimeZone = c.Report.TimeZone.String()
	v.Report.WorkingHours = clock(c.Report.WorkStart) + "-" + clock(c.Report.WorkEnd)
	for d, on := range c.Report.WorkingDays {
		if on {
			v.Report.WorkingDays = append(v.Report.WorkingDays, strings.ToLower(time.Weekday(d).String()[:3]))
		}
	}
	v.Report.FlappingThreshold = c.Report.FlappingThreshold
	v.Web.ListenAddress = c.Web.ListenAddress
	v.Web.AuthTokenFile = c.Web.AuthTokenFile
	v.Web.RunbooksDir = c.Web.RunbooksDir
	v.Web.ConfigFile = c.Web.ConfigFile
	v.Web.MaxRequestBodyBytes = c.Web.MaxRequestBodyBytes
	v.Web.MaxHeaderBytes = c.Web.MaxHeaderBytes
	v.Web.MaxAlertsPerRequest = c.Web.MaxAlertsPerRequest
	v.Web.ReadTimeout = promDuration(c.Web.ReadTimeout)
	v.Web.IdleTimeout = promDuration(c.Web.IdleTimeout)
	v.Web.MaxRequestBytesInFlight = c.Web.MaxRequestBytesInFlight
	v.Web.MaxLabelsPerAlert = c.Web.MaxLabelsPerAlert
	v.Web.MaxLabelNameBytes = c.Web.MaxLabelNameBytes
	v.Web.MaxLabelValueBytes = c.Web.MaxLabelValueBytes
	v.Web.MaxRegexpSize = c.Web.MaxRegexpSize
	v.Web.RegexpQueryTimeout = promDuration(c.Web.RegexpQueryTimeout)
	if c.Cluster.Enabled() {
		v.Cluster = &clusterView{
			ListenAddress:    c.Cluster.ListenAddress,
			AdvertiseAddress: c.Cluster.AdvertiseAddress,
			Peers:            c.Cluster.Peers,
			PeerTimeout:      promDuration(c.Cluster.PeerTimeout),
			GossipInterval:   promDuration(c.Cluster.GossipInterval),
			PushPullInterval: promDuration(c.Cluster.PushPullInterval),
		}
	}
	if c.Notifier != nil {
		v.Notifier = redactNode(c.Notifier, "")
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&v); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// packView is one packs: entry as the configuration view shows it.
type packView struct {
	Name     string             `yaml:"name"`
	Selector string             `yaml:"selector,omitempty"`
	Set      map[string]float64 `yaml:"set,omitempty"`
	For      map[string]string  `yaml:"for,omitempty"`
	Severity map[string]string  `yaml:"severity,omitempty"`
	Labels   map[string]string  `yaml:"labels,omitempty"`
	Disable  []string           `yaml:"disable,omitempty"`
}

// clusterView is the cluster: block as the redacted configuration shows
// it; it holds no secrets.
type clusterView struct {
	ListenAddress    string   `yaml:"listen_address"`
	AdvertiseAddress string   `yaml:"advertise_address,omitempty"`
	Peers            []string `yaml:"peers"`
	PeerTimeout      string   `yaml:"peer_timeout"`
	GossipInterval   string   `yaml:"gossip_interval"`
	PushPullInterval string   `yaml:"pushpull_interval"`
}

func promDuration(d time.Duration) string { return model.Duration(d).String() }

// redactURL hides the password and the query of a URL: either can carry a
// token.
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	r := *u
	if r.User != nil {
		if _, has := r.User.Password(); has {
			r.User = url.UserPassword(r.User.Username(), "xxxxx")
		}
	}
	if r.RawQuery != "" {
		q := r.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		r.RawQuery = q.Encode()
	}
	return r.String()
}

// secretKey reports whether a key in the notifier block holds a secret (or
// a URL, which for Slack and webhooks is one). Paths (*_file) are kept.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	if strings.HasSuffix(k, "_file") {
		return false
	}
	for _, s := range []string{"url", "token", "secret", "password", "credentials", "key", "auth", "header"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// redactNode returns a deep copy of n with the values of secret keys
// replaced, whatever their shape.
func redactNode(n *yaml.Node, key string) *yaml.Node {
	n = resolve(n)
	if n == nil {
		return nil
	}
	c := *n
	c.Content = nil
	c.Anchor = ""
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	if n.Kind == yaml.ScalarNode && secretKey(key) && n.Value != "" {
		c.Value, c.Tag, c.Style = secretPlaceholder, "!!str", 0
		return &c
	}
	for i, ch := range n.Content {
		switch {
		case n.Kind == yaml.MappingNode && i%2 == 0:
			kc := *ch
			// A comment is dropped with its key: it may hold a secret
			// someone commented out.
			kc.HeadComment, kc.LineComment, kc.FootComment = "", "", ""
			c.Content = append(c.Content, &kc)
		case n.Kind == yaml.MappingNode:
			k := n.Content[i-1].Value
			if secretKey(k) && resolve(ch).Kind != yaml.ScalarNode {
				// a structured secret (http_headers, proxy_connect_header...)
				c.Content = append(c.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: secretPlaceholder})
				continue
			}
			c.Content = append(c.Content, redactNode(ch, k))
		default:
			c.Content = append(c.Content, redactNode(ch, key))
		}
	}
	return &c
}

// prometheusView is datasource.prometheus as check-config prints it.
type queryView struct {
	Timeout       string `yaml:"timeout,omitempty"`
	MaxSamples    int    `yaml:"max_samples,omitempty"`
	LookbackDelta string `yaml:"lookback_delta,omitempty"`
}

type prometheusView struct {
	URL                  string                       `yaml:"url"`
	Timeout              string                       `yaml:"timeout"`
	CombineQueries       bool                         `yaml:"combine_queries"`
	HTTPConfig           *promconfig.HTTPClientConfig `yaml:"http_config"`
	ExternalURL          string                       `yaml:"external_url,omitempty"`
	GeneratorURLTemplate string                       `yaml:"generator_url_template,omitempty"`
}
