package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	promcfg "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/labels"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/notifier"
)

// Defaults of paged.yaml (DESIGN.md §3).
const (
	DefaultEvaluationInterval = 30 * time.Second
	DefaultResendDelay        = time.Minute
	DefaultListenAddress      = "127.0.0.1:9095"
	DefaultStoragePath        = "data/"
	// DefaultHistoryRetention is storage.history.retention: how long
	// events are kept in the history.
	DefaultHistoryRetention = 30 * 24 * time.Hour
	// DefaultHistoryMaxBytes is storage.history.max_bytes: the size the
	// history file is kept under, oldest events dropped first.
	DefaultHistoryMaxBytes   = 1 << 30
	DefaultDatasourceTimeout = 10 * time.Second
	DefaultDownAfterFailures = 3
	// DefaultNoSeriesAfter is global.no_series_after: how long a rule's
	// selector may match no series before PagedRuleNoSeries fires.
	DefaultNoSeriesAfter  = 30 * time.Minute
	DefaultScrapeInterval = 5 * time.Second
	// DefaultScrapeTimeout is Prometheus's, capped at the interval.
	DefaultScrapeTimeout = 10 * time.Second
	DefaultRetention     = 24 * time.Hour
	DefaultMetricsPath   = "/metrics"
	DefaultScheme        = "http"
	// DefaultMaxRequestBodyBytes bounds every request body (web.max_request_body_bytes).
	DefaultMaxRequestBodyBytes = 4 << 20
	// DefaultMaxHeaderBytes bounds the request line and headers (web.max_header_bytes).
	DefaultMaxHeaderBytes = 1 << 20
	// DefaultMaxAlertsPerRequest bounds POST /api/v2/alerts (web.max_alerts_per_request).
	DefaultMaxAlertsPerRequest = 10000
	// DefaultReadTimeout bounds the time a request body may take to
	// arrive (web.read_timeout).
	DefaultReadTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a kept-alive connection with no request
	// (web.idle_timeout).
	DefaultIdleTimeout = 6 * time.Minute
	// DefaultMaxRequestBytesInFlight bounds the bodies held for all the
	// requests being read and served at once (web.max_request_bytes_in_flight).
	DefaultMaxRequestBytesInFlight = 32 << 20
	// DefaultMaxLabelsPerAlert bounds the labels of an alert posted to the
	// API and the matchers of a silence (web.max_labels_per_alert).
	DefaultMaxLabelsPerAlert = 128
	// DefaultMaxLabelNameBytes bounds a label name (web.max_label_name_bytes).
	DefaultMaxLabelNameBytes = 1 << 10
	// DefaultMaxLabelValueBytes bounds a label value (web.max_label_value_bytes).
	DefaultMaxLabelValueBytes = 4 << 10
	// DefaultMaxRegexpSize bounds the regular expressions of one API
	// request (web.max_regexp_size).
	DefaultMaxRegexpSize = 4096
	// DefaultRegexpQueryTimeout bounds a request that matches regular
	// expressions against the alerts or silences (web.regexp_query_timeout).
	DefaultRegexpQueryTimeout = 10 * time.Second
)

// Datasource types.
const (
	DatasourcePrometheus = "prometheus"
	DatasourceEmbedded   = "embedded"
)

// Config is a loaded paged.yaml. Relative paths in it are already resolved
// against the directory of the file, ${ENV} is expanded, and secrets read
// from *_file fields are held in unexported fields that no output shows.
type Config struct {
	// File is the path the configuration was loaded from.
	File string

	Global        GlobalConfig
	Datasource    DatasourceConfig
	RuleFiles     []string // the globs, resolved against the config directory
	RuleFilePaths []string // the files they match, sorted, without duplicates
	// Packs are the packs: entries, each with its overrides applied, in
	// file order.
	Packs          []*PackConfig
	RunbookBaseURL *url.URL // nil: paged serves runbooks at {external_url}/runbooks/
	// GrafanaURL, when set, is where the packs' dashboards (paged export
	// --format grafana) are imported: the packs' alerts get a
	// dashboard_url annotation that opens their panel.
	GrafanaURL *url.URL
	Storage    StorageConfig
	Web        WebConfig
	// Cluster is the cluster: block: gossip with the other instance of an
	// HA pair. Disabled unless cluster.listen_address is set.
	Cluster ClusterConfig
	// Report is the report: block: what paged report counts as working
	// hours and as flapping.
	Report ReportConfig
	// Notifier is the notifier: block (Alertmanager route, inhibit_rules,
	// receivers, alertmanagers), ${ENV} already expanded. The notifier
	// decodes and validates it; nil when the block is absent.
	Notifier *yaml.Node
	// NotifierConfig is the decoded notifier block; nil when it is absent.
	NotifierConfig *notifier.Config

	// sections holds each top-level block re-encoded after ${ENV}
	// expansion, to tell which blocks a reload changes.
	sections map[string]string
	// externalURLDefault: global.external_url is not set, so its scheme
	// follows the web configuration's TLS.
	externalURLDefault bool
}

// GlobalConfig is the global: block.
type GlobalConfig struct {
	EvaluationInterval time.Duration
	// ResendDelay is how often a firing alert is sent again to the
	// notifier (Prometheus's --rules.alert.resend-delay). Default 1m.
	ResendDelay time.Duration
	// ExternalURL is the base of UI, silence and runbook links. Default:
	// http://{web.listen_address}, https:// when the web configuration
	// file turns TLS on.
	ExternalURL    *url.URL
	ExternalLabels labels.Labels
	// NoSeriesAfter is how long a selector of a rule may match no series
	// before the built-in PagedRuleNoSeries alert fires; 0 turns the check
	// off. Default 30m.
	NoSeriesAfter time.Duration
	// AlignEvaluations moves each group's evaluations to just after the
	// data it reads has been scraped (engine.Options.AlignToScrapes).
	// Default true.
	AlignEvaluations bool
}

// DatasourceConfig is the datasource: block.
type DatasourceConfig struct {
	Type       string // DatasourcePrometheus or DatasourceEmbedded
	Prometheus PrometheusDatasource
	Embedded   EmbeddedDatasource
	// DownAfterFailures is the number of consecutive failed evaluations
	// after which the built-in PagedDatasourceDown alert fires.
	DownAfterFailures int
}

// PrometheusDatasource is datasource.prometheus: a Prometheus-compatible
// query API.
type PrometheusDatasource struct {
	URL        *url.URL
	Timeout    time.Duration
	HTTPConfig promconfig.HTTPClientConfig
	// CombineQueries sends the alerting rules of a group together, up to
	// ten to a query (engine.Options.CombineQueries). Default true.
	CombineQueries bool
	// ExternalURL is the datasource's own UI, the base of the alerts'
	// generatorURL ({external_url}/graph?g0.expr=…). Default URL.
	ExternalURL *url.URL
	// GeneratorURLTemplate, when set, writes each alert's generatorURL
	// instead (e.g. Grafana Explore): see generator.go.
	GeneratorURLTemplate string
}

// EmbeddedDatasource is datasource.embedded: paged scrapes the servers and
// keeps the samples in a local TSDB.
type EmbeddedDatasource struct {
	// ScrapeInterval and ScrapeTimeout are the defaults of jobs that set
	// none (Prometheus's global.scrape_interval and scrape_timeout).
	ScrapeInterval time.Duration
	ScrapeTimeout  time.Duration // 0: min(10s, ScrapeInterval)
	Retention      time.Duration
	// Keep is KeepReferenced (store only the metrics the rules read, plus
	// the scrape health series) or KeepAll.
	Keep string
	// ScrapeConfigs are Prometheus's scrape_configs, verbatim, parsed by
	// Prometheus's config package (every service discovery, relabelling,
	// auth, TLS, limits), relative paths resolved against paged.yaml.
	ScrapeConfigs []*promcfg.ScrapeConfig
	// Query limits the PromQL engine of the rules and of the query API
	// (datasource.embedded.query); zero values take Prometheus's
	// defaults (2m, 50000000 samples, 5m).
	Query QueryLimits
}

// QueryLimits are Prometheus's --query.timeout, --query.max-samples and
// --query.lookback-delta.
type QueryLimits struct {
	Timeout       time.Duration
	MaxSamples    int
	LookbackDelta time.Duration
}

// StorageConfig is the storage: block.
type StorageConfig struct {
	Path    string // alert state, silences, notification log, history
	History HistoryConfig
}

// HistoryConfig is storage.history: the event history (history.db under
// storage.path).
type HistoryConfig struct {
	// Enabled turns the history on. It is off by default until the
	// reliability suite's load scenario (2,000 rules, 10,000 alerts) and
	// full-disk scenario pass with it on (issue 36): with the history's
	// first schema, the one missed evaluations and the other's
	// PagedStateWriteFailing did not resolve for every file.
	Enabled bool
	// Retention is how long events are kept; older ones are deleted.
	Retention time.Duration
	// MaxBytes bounds the size of the history file; past it the oldest
	// events are deleted, never the newest.
	MaxBytes int64
}

// ReportConfig is the report: block, read by paged report.
type ReportConfig struct {
	// TimeZone is where the working hours are. Default UTC.
	TimeZone *time.Location
	// WorkStart and WorkEnd are the working hours, as offsets from
	// midnight in TimeZone (working_hours: 09:00-18:00, the default). A
	// page at or after WorkStart and before WorkEnd on a working day is
	// in working hours.
	WorkStart, WorkEnd time.Duration
	// WorkingDays, by time.Weekday. Default Monday to Friday.
	WorkingDays [7]bool
	// FlappingThreshold: an alert that fired and resolved more than this
	// many times in the report's span is flapping. Default 3.
	FlappingThreshold int
}

// DefaultFlappingThreshold is report.flapping_threshold.
const DefaultFlappingThreshold = 3

// DefaultReport is the report: block of a file that has none.
func DefaultReport() ReportConfig {
	return ReportConfig{
		TimeZone:          time.UTC,
		WorkStart:         9 * time.Hour,
		WorkEnd:           18 * time.Hour,
		WorkingDays:       [7]bool{time.Monday: true, time.Tuesday: true, time.Wednesday: true, time.Thursday: true, time.Friday: true},
		FlappingThreshold: DefaultFlappingThreshold,
	}
}

// WebConfig is the web: block.
type WebConfig struct {
	ListenAddress string
	// AuthTokenFile holds the bearer token every mutating endpoint requires.
	AuthTokenFile string
	// RunbooksDir is a directory of markdown runbooks served at /runbooks/.
	RunbooksDir string
	// ConfigFile is an exporter-toolkit web configuration file (TLS, basic
	// auth, response headers), as Prometheus's --web.config.file. Empty:
	// plain HTTP. Options.WebConfigFile overrides it.
	ConfigFile string
	// MaxRequestBodyBytes bounds every request body; larger ones get 413.
	MaxRequestBodyBytes int64
	// MaxHeaderBytes is http.Server.MaxHeaderBytes.
	MaxHeaderBytes int64
	// MaxAlertsPerRequest bounds the alerts of one POST /api/v2/alerts.
	MaxAlertsPerRequest int
	// ReadTimeout bounds the time from a request's headers to the end of
	// its body; a body still arriving then gets 408 and the connection is
	// closed.
	ReadTimeout time.Duration
	// IdleTimeout is http.Server.IdleTimeout: how long a kept-alive
	// connection may wait for its next request.
	IdleTimeout time.Duration
	// MaxRequestBytesInFlight bounds the request bodies held in memory at
	// once, over all connections; a body that does not fit gets 503.
	MaxRequestBytesInFlight int64
	// MaxLabelsPerAlert bounds the labels of an alert posted to
	// /api/v2/alerts and the matchers of a silence.
	MaxLabelsPerAlert int
	// MaxLabelNameBytes and MaxLabelValueBytes bound a label name and
	// value in posted alerts, silences and API filters.
	MaxLabelNameBytes  int64
	MaxLabelValueBytes int64
	// MaxRegexpSize bounds the regular expressions of one API request
	// (filters, receiver, a silence's matchers), together: in bytes of
	// pattern and, compiled, in instructions (twice as many).
	MaxRegexpSize int64
	// RegexpQueryTimeout bounds an API request that matches regular
	// expressions; such requests run one at a time.
	RegexpQueryTimeout time.Duration

	authToken string // content of AuthTokenFile, never printed
}

// AuthRequired reports whether mutating endpoints need a bearer token.
func (w WebConfig) AuthRequired() bool { return w.authToken != "" }

// AuthToken is the bearer token read from web.auth_token_file; empty when
// none is set. It is a secret: compare it, never print it.
func (w WebConfig) AuthToken() string { return w.authToken }

// Section returns the top-level block name (datasource, storage, cluster…)
// re-encoded after ${ENV} expansion, to tell which blocks a reload
// changes; empty when the block is absent.
func (c *Config) Section(name string) string { return c.sections[name] }

// Load reads and validates the file at path. getenv provides ${ENV}
// values (os.Getenv when nil). A file that cannot be read gives an
// *os.PathError; a file with problems gives a *Error that lists them
// all.
func Load(path string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, getenv)
}

// Parse validates data as the contents of the file at path; relative
// paths resolve against path's directory.
func Parse(data []byte, path string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	d := &decoder{file: path, data: data, fromEnv: map[*yaml.Node]bool{}, failed: map[*yaml.Node]bool{}}
	cfg := Default()
	cfg.File = path
	dir := filepath.Dir(path)

	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		d.problems = append(d.problems, yamlSyntaxProblem(path, data, err))
		return nil, &Error{Problems: d.problems}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errorf(&extra, "", "only one YAML document is allowed")
	}
	// Anchors and aliases are allowed, but an alias that contains itself
	// or one that multiplies the document (a "billion laughs") would send
	// the walk below around forever: yaml's own decoder detects both.
	var probe any
	if err := doc.Decode(&probe); err != nil && (strings.Contains(err.Error(), "contains itself") || strings.Contains(err.Error(), "excessive aliasing")) {
		d.errorf(&doc, "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, &Error{Problems: d.problems}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	d.expand(root, getenv, "")

	var (
		externalURL    *url.URL
		externalLabels map[string]string
		runbookBase    *url.URL
		dsType         = DatasourcePrometheus
		ruleFilesNode  *yaml.Node
		packsNode      *yaml.Node
		clusterNode    *yaml.Node
	)
	ds := &cfg.Datasource
	d.mapping(root, "",
		field{"global", func(n *yaml.Node, key string) {
			d.mapping(n, key,
				field{"evaluation_interval", d.duration(&cfg.Global.EvaluationInterval, false)},
				field{"resend_delay", d.duration(&cfg.Global.ResendDelay, false)},
				field{"external_url", d.httpURL(&externalURL)},
				field{"external_labels", d.labelSet(&externalLabels)},
				field{"no_series_after", d.duration(&cfg.Global.NoSeriesAfter, true)},
				field{"align_evaluations", d.boolean(&cfg.Global.AlignEvaluations)},
			)
		}},
		field{"datasource", func(n *yaml.Node, key string) {
			d.mapping(n, key,
				field{"type", d.oneOf(&dsType, DatasourcePrometheus, DatasourceEmbedded)},
				field{"down_after_failures", d.positiveInt(&ds.DownAfterFailures)},
				field{"prometheus", func(n *yaml.Node, key string) {
					d.mapping(n, key,
						field{"url", d.httpURL(&ds.Prometheus.URL)},
						field{"timeout", d.duration(&ds.Prometheus.Timeout, false)},
						field{"combine_queries", d.boolean(&ds.Prometheus.CombineQueries)},
						field{"external_url", d.httpURL(&ds.Prometheus.ExternalURL)},
						field{"generator_url_template", d.generatorTemplate(&ds.Prometheus.GeneratorURLTemplate)},
						field{"http_config", func(n *yaml.Node, key string) {
							d.httpClientConfig(n, key, dir, &ds.Prometheus.HTTPConfig)
						}},
					)
				}},
				field{"embedded", func(n *yaml.Node, key string) {
					d.embedded(n, key, dir, &ds.Embedded)
				}},
			)
		}},
		field{"rule_files", func(n *yaml.Node, key string) {
			ruleFilesNode = n
			d.ruleFiles(n, key, dir, cfg)
		}},
		field{"packs", func(n *yaml.Node, key string) {
			packsNode = n
			d.packsBlock(n, key, dir, cfg)
		}},
		field{"grafana_url", d.httpURL(&cfg.GrafanaURL)},
		field{"runbook_base_url", func(n *yaml.Node, key string) {
			if v, ok := d.scalar(n, key); ok && v == "" {
				return // empty: serve runbooks ourselves
			}
			d.httpURL(&runbookBase)(n, key)
		}},
		field{"storage", func(n *yaml.Node, key string) {
			d.mapping(n, key,
				field{"path", d.nonEmptyPath(&cfg.Storage.Path)},
				field{"history", func(n *yaml.Node, key string) {
					d.mapping(n, key,
						field{"enabled", d.boolean(&cfg.Storage.History.Enabled)},
						field{"retention", d.duration(&cfg.Storage.History.Retention, false)},
						field{"max_bytes", d.largeByteSize(&cfg.Storage.History.MaxBytes, minHistoryBytes)},
					)
				}},
			)
		}},
		field{"web", func(n *yaml.Node, key string) {
			d.mapping(n, key,
				field{"listen_address", d.hostPort(&cfg.Web.ListenAddress)},
				field{"auth_token_file", func(n *yaml.Node, key string) {
					d.authTokenFile(n, key, dir, &cfg.Web)
				}},
				field{"runbooks_dir", d.directory(&cfg.Web.RunbooksDir, dir)},
				field{"config_file", d.webConfigFile(&cfg.Web.ConfigFile, dir)},
				field{"max_request_body_bytes", d.byteSize(&cfg.Web.MaxRequestBodyBytes)},
				field{"max_header_bytes", d.byteSize(&cfg.Web.MaxHeaderBytes)},
				field{"max_alerts_per_request", d.positiveInt(&cfg.Web.MaxAlertsPerRequest)},
				field{"read_timeout", d.duration(&cfg.Web.ReadTimeout, false)},
				field{"idle_timeout", d.duration(&cfg.Web.IdleTimeout, false)},
				field{"max_request_bytes_in_flight", d.byteSize(&cfg.Web.MaxRequestBytesInFlight)},
				field{"max_labels_per_alert", d.positiveInt(&cfg.Web.MaxLabelsPerAlert)},
				field{"max_label_name_bytes", d.byteSize(&cfg.Web.MaxLabelNameBytes)},
				field{"max_label_value_bytes", d.byteSize(&cfg.Web.MaxLabelValueBytes)},
				field{"max_regexp_size", d.byteSize(&cfg.Web.MaxRegexpSize)},
				field{"regexp_query_timeout", d.duration(&cfg.Web.RegexpQueryTimeout, false)},
			)
			if cfg.Web.MaxRequestBytesInFlight < cfg.Web.MaxRequestBodyBytes {
				d.errorf(n, key, "web.max_request_bytes_in_flight (%d bytes) is smaller than web.max_request_body_bytes (%d bytes): no body of the largest size could ever be read",
					cfg.Web.MaxRequestBytesInFlight, cfg.Web.MaxRequestBodyBytes)
			}
		}},
		field{"report", func(n *yaml.Node, key string) {
			d.mapping(n, key,
				field{"time_zone", d.timeZone(&cfg.Report.TimeZone)},
				field{"working_hours", d.workingHours(&cfg.Report.WorkStart, &cfg.Report.WorkEnd)},
				field{"working_days", d.weekdays(&cfg.Report.WorkingDays)},
				field{"flapping_threshold", d.positiveInt(&cfg.Report.FlappingThreshold)},
			)
		}},
		field{"cluster", func(n *yaml.Node, key string) {
			clusterNode = n
			d.cluster(n, key, &cfg.Cluster)
		}},
		field{"notifier", func(n *yaml.Node, key string) {
			if n.Kind != yaml.MappingNode {
				d.errorf(n, key, "expected a mapping, got %s", kindName(n))
				return
			}
			cfg.Notifier = n
			d.notifierFiles(n, key, dir)
			var nc notifier.Config
			if err := nc.UnmarshalYAML(n); err != nil {
				d.notifierProblems(n, err)
				return
			}
			resolveNotifierPaths(&nc, dir)
			cfg.NotifierConfig = &nc
		}},
	)
	cfg.sections = sections(root)

	ds.Type = dsType
	switch ds.Type {
	case DatasourcePrometheus:
		if ds.Prometheus.URL == nil && !d.hasProblemUnder("datasource.prometheus.url") {
			d.errorf(root, "datasource.prometheus.url", "required when datasource.type is prometheus")
		}
	case DatasourceEmbedded:
		if len(ds.Embedded.ScrapeConfigs) == 0 && !d.hasProblemUnder("datasource.embedded") {
			d.errorf(root, "datasource.embedded.scrape_configs", "at least one scrape config is required when datasource.type is embedded")
		}
	}
	if cfg.Cluster.Enabled() && cfg.Notifier == nil && !d.hasProblemUnder("notifier") {
		d.errorf(clusterNode, "cluster", "a cluster gossips the notifier's state: add a notifier block, or remove cluster")
	}
	if ruleFilesNode == nil && packsNode == nil {
		d.errorf(root, "rule_files", "required: list the rule files (globs) to evaluate, or the rule packs under packs:")
	}
	cfg.Global.ExternalLabels = labels.FromMap(externalLabels)
	if externalURL == nil {
		externalURL = &url.URL{Scheme: "http", Host: cfg.Web.ListenAddress}
		cfg.externalURLDefault = true
	}
	cfg.Global.ExternalURL = externalURL
	cfg.defaultExternalScheme()
	cfg.RunbookBaseURL = runbookBase
	if !filepath.IsAbs(cfg.Storage.Path) {
		cfg.Storage.Path = filepath.Join(dir, cfg.Storage.Path)
	}

	if len(d.problems) > 0 {
		sortProblems(d.problems, d.file)
		return nil, &Error{Problems: d.problems}
	}
	return cfg, nil
}

// badByte returns the offset of the first byte YAML refuses: invalid
// UTF-8, or a control character other than tab, line feed and carriage
// return. -1 when there is none.
func badByte(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f || (r >= 0x80 && r < 0xa0 && r != 0x85) || r == 0xfeff && i > 0 {
			return i
		}
		i += size
	}
	return -1
}

// Default is the configuration of an empty paged.yaml: every default of
// DESIGN.md §3, before decoding fills in what the file sets.
func Default() *Config {
	return &Config{
		Global: GlobalConfig{EvaluationInterval: DefaultEvaluationInterval, ResendDelay: DefaultResendDelay, NoSeriesAfter: DefaultNoSeriesAfter, AlignEvaluations: true},
		Datasource: DatasourceConfig{
			Type:              DatasourcePrometheus,
			DownAfterFailures: DefaultDownAfterFailures,
			Prometheus: PrometheusDatasource{
				Timeout:        DefaultDatasourceTimeout,
				HTTPConfig:     promconfig.DefaultHTTPClientConfig,
				CombineQueries: true,
			},
			Embedded: EmbeddedDatasource{ScrapeInterval: DefaultScrapeInterval, Retention: DefaultRetention, Keep: KeepReferenced},
		},
		Storage: StorageConfig{Path: DefaultStoragePath, History: HistoryConfig{Retention: DefaultHistoryRetention, MaxBytes: DefaultHistoryMaxBytes}},
		Web: WebConfig{
			ListenAddress:       DefaultListenAddress,
			MaxRequestBodyBytes: DefaultMaxRequestBodyBytes,
			MaxHeaderBytes:      DefaultMaxHeaderBytes,
			MaxAlertsPerRequest: DefaultMaxAlertsPerRequest,

			ReadTimeout:             DefaultReadTimeout,
			IdleTimeout:             DefaultIdleTimeout,
			MaxRequestBytesInFlight: DefaultMaxRequestBytesInFlight,
			MaxLabelsPerAlert:       DefaultMaxLabelsPerAlert,
			MaxLabelNameBytes:       DefaultMaxLabelNameBytes,
			MaxLabelValueBytes:      DefaultMaxLabelValueBytes,
			MaxRegexpSize:           DefaultMaxRegexpSize,
			RegexpQueryTimeout:      DefaultRegexpQueryTimeout,
		},
		Cluster: defaultClusterConfig(),
		Report:  DefaultReport(),
	}
}

func (d *decoder) hasProblemUnder(key string) bool {
	return slices.ContainsFunc(d.problems, func(p Problem) bool { return strings.HasPrefix(p.Key, key) })
}

// sortProblems orders problems by position: those of the configuration
// file first, then those of the files it names (pack directories), by path.
func sortProblems(ps []Problem, file string) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if a.File != b.File {
			switch file {
			case a.File:
				return -1
			case b.File:
				return 1
			}
			return strings.Compare(a.File, b.File)
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
}

// yamlSyntaxProblem turns a YAML parse error into a positioned problem.
// The errors yaml reports without a line (control characters, invalid
// UTF-8) are placed at the first such byte of data.
func yamlSyntaxProblem(file string, data []byte, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	p := Problem{File: file, Message: "invalid YAML: " + msg}
	at := -1
	if !strings.HasPrefix(msg, "line ") {
		at = badByte(data)
		var anchor string
		if _, err := fmt.Sscanf(msg, "unknown anchor %q referenced", &anchor); err == nil || strings.HasPrefix(msg, "unknown anchor '") {
			name := strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor '"), "' referenced")
			at = bytes.Index(data, []byte("*"+name))
		}
	}
	if at >= 0 {
		line := 1 + bytes.Count(data[:at], []byte("\n"))
		col := 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:at], '\n')+1:at])
		p.Line, p.Column = line, col
		return p
	}
	var line int
	if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr == nil {
		// yaml reports an unclosed flow collection at the line before the
		// one that opens it.
		if strings.Contains(msg, "did not find expected ',' or") {
			line++
		}
		p.Line, p.Column = line, 1
		_, rest, _ := strings.Cut(msg, ": ")
		p.Message = "invalid YAML: " + rest
	}
	return p
}

func (d *decoder) httpClientConfig(n *yaml.Node, key, dir string, dst *promconfig.HTTPClientConfig) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, key, "expected a mapping, got %s", kindName(n))
		return
	}
	before := len(d.problems)
	d.checkKeys(n, reflect.TypeFor[promconfig.HTTPClientConfig](), key)
	if len(d.problems) > before {
		return
	}
	var hc promconfig.HTTPClientConfig
	if err := n.Decode(&hc); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, msg := range te.Errors {
				at, msg := nodeAtLine(n, msg)
				d.errorf(at, key, "%s", redactTypeError(msg))
			}
			return
		}
		// Validate errors (conflicting auth settings) name keys, not values.
		d.errorf(n, key, "%v", err)
		return
	}
	hc.SetDirectory(dir)
	for _, f := range httpConfigFiles(&hc) {
		if _, err := os.Stat(f.path); err != nil {
			d.errorf(findKey(n, f.key), joinKey(key, f.key), "cannot read file %s: %v", f.path, errors.Unwrap(err))
		}
	}
	*dst = hc
}

// redactTypeError keeps yaml's "line N: cannot unmarshal !!map into string"
// but drops the quoted value that some of its messages carry.
func redactTypeError(msg string) string {
	if i := strings.Index(msg, "`"); i >= 0 {
		if j := strings.LastIndex(msg, "`"); j > i {
			msg = msg[:i] + "value" + msg[j+1:]
		}
	}
	return msg
}

// nodeAtLine finds the node a yaml "line N: ..." message points at and
// returns it with the message minus the line prefix.
func nodeAtLine(n *yaml.Node, msg string) (*yaml.Node, string) {
	var line int
	if _, err := fmt.Sscanf(msg, "line %d:", &line); err != nil {
		return n, msg
	}
	_, rest, _ := strings.Cut(msg, ": ")
	var found *yaml.Node
	var walk func(*yaml.Node)
	walk = func(c *yaml.Node) {
		if found != nil || c == nil {
			return
		}
		if c.Line == line && c.Kind != yaml.MappingNode {
			found = c
			return
		}
		for _, cc := range c.Content {
			walk(cc)
		}
	}
	walk(n)
	if found == nil {
		return n, rest
	}
	return found, rest
}

// findKey returns the value node at a dotted key path under n, or n when
// the path is not there (bearer_token_file moves into authorization while
// validating).
func findKey(n *yaml.Node, path string) *yaml.Node {
	cur := n
	for _, k := range strings.Split(path, ".") {
		cur = resolve(cur)
		if cur == nil || cur.Kind != yaml.MappingNode {
			return n
		}
		var next *yaml.Node
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == k {
				next = cur.Content[i+1]
			}
		}
		if next == nil {
			return n
		}
		cur = next
	}
	return cur
}

type fileRef struct{ key, path string }

func httpConfigFiles(hc *promconfig.HTTPClientConfig) []fileRef {
	var out []fileRef
	add := func(key, path string) {
		if path != "" {
			out = append(out, fileRef{key, path})
		}
	}
	if hc.BasicAuth != nil {
		add("basic_auth.username_file", hc.BasicAuth.UsernameFile)
		add("basic_auth.password_file", hc.BasicAuth.PasswordFile)
	}
	if hc.Authorization != nil {
		add("authorization.credentials_file", hc.Authorization.CredentialsFile)
	}
	add("bearer_token_file", hc.BearerTokenFile)
	if hc.OAuth2 != nil {
		add("oauth2.client_secret_file", hc.OAuth2.ClientSecretFile)
	}
	add("tls_config.ca_file", hc.TLSConfig.CAFile)
	add("tls_config.cert_file", hc.TLSConfig.CertFile)
	add("tls_config.key_file", hc.TLSConfig.KeyFile)
	return out
}

func (d *decoder) embedded(n *yaml.Node, key, dir string, dst *EmbeddedDatasource) {
	var scrapeNode *yaml.Node
	d.mapping(n, key,
		field{"scrape_interval", d.duration(&dst.ScrapeInterval, false)},
		field{"scrape_timeout", d.duration(&dst.ScrapeTimeout, false)},
		field{"retention", d.duration(&dst.Retention, false)},
		field{"query", func(n *yaml.Node, key string) {
			d.mapping(n, key,
				field{"timeout", d.duration(&dst.Query.Timeout, false)},
				field{"max_samples", d.positiveInt(&dst.Query.MaxSamples)},
				field{"lookback_delta", d.duration(&dst.Query.LookbackDelta, false)},
			)
		}},
		field{"keep", d.oneOf(&dst.Keep, KeepReferenced, KeepAll)},
		field{"scrape_configs", func(n *yaml.Node, key string) { scrapeNode = n }},
	)
	if dst.ScrapeTimeout > dst.ScrapeInterval {
		d.errorf(findKey(n, "scrape_timeout"), key+".scrape_timeout", "%s is greater than scrape_interval %s", model.Duration(dst.ScrapeTimeout), model.Duration(dst.ScrapeInterval))
		dst.ScrapeTimeout = 0
	}
	if scrapeNode != nil {
		d.scrapeConfigs(scrapeNode, key+".scrape_configs", dir, dst)
	}
}

// ruleFiles expands each glob; a glob that matches nothing is a problem
// that names it.
func (d *decoder) ruleFiles(n *yaml.Node, key, dir string, cfg *Config) {
	seen := map[string]bool{}
	d.list(func(n *yaml.Node, key string) {
		pattern, ok := d.scalar(n, key)
		if !ok {
			return
		}
		if pattern == "" {
			d.errorf(n, key, "empty pattern")
			return
		}
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(dir, pattern)
		}
		matches, err := filepath.Glob(pattern)
		if err != nil {
			d.errorf(n, key, "invalid glob %q: %v", n.Value, err)
			return
		}
		files := matches[:0]
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && !st.IsDir() {
				files = append(files, m)
			}
		}
		if len(files) == 0 {
			d.errorf(n, key, "%q matches no files (resolved to %s)", n.Value, pattern)
			return
		}
		cfg.RuleFiles = append(cfg.RuleFiles, pattern)
		for _, f := range files {
			if !seen[f] {
				seen[f] = true
				cfg.RuleFilePaths = append(cfg.RuleFilePaths, f)
			}
		}
	})(n, key)
	slices.Sort(cfg.RuleFilePaths)
}

func (d *decoder) nonEmptyPath(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		if v == "" {
			d.errorf(n, key, "must not be empty")
			return
		}
		*dst = v
	}
}

func (d *decoder) directory(dst *string, dir string) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok || v == "" {
			return
		}
		if !filepath.IsAbs(v) {
			v = filepath.Join(dir, v)
		}
		st, err := os.Stat(v)
		if err != nil || !st.IsDir() {
			d.errorf(n, key, "%s is not a directory", v)
			return
		}
		*dst = v
	}
}

// authTokenFile reads the bearer token. Its content is a secret: only the
// path appears in messages.
func (d *decoder) authTokenFile(n *yaml.Node, key, dir string, w *WebConfig) {
	v, ok := d.scalar(n, key)
	if !ok || v == "" {
		return
	}
	if !filepath.IsAbs(v) {
		v = filepath.Join(dir, v)
	}
	b, err := readSmallFile(v)
	if err != nil {
		d.errorf(n, key, "cannot read token file %s: %v", v, err)
		return
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		d.errorf(n, key, "token file %s is empty", v)
		return
	}
	w.AuthTokenFile = v
	w.authToken = tok
}

// sections re-encodes every top-level block, for change detection.
func sections(root *yaml.Node) map[string]string {
	out := map[string]string{}
	if root == nil || root.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		v := root.Content[i+1]
		if root.Content[i].Value == "datasource" {
			// The embedded scrape configs and keep mode are applied by a
			// reload, as Prometheus applies scrape_configs; the rest of
			// the datasource needs a restart.
			v = withoutKeys(v, "embedded", "scrape_configs", "keep")
		}
		b, err := yaml.Marshal(v)
		if err == nil {
			out[root.Content[i].Value] = string(b)
		}
	}
	return out
}

// withoutKeys returns a copy of mapping n whose sub-mapping under key has
// the given keys removed; n itself is left alone.
func withoutKeys(n *yaml.Node, key string, drop ...string) *yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return n
	}
	c := *n
	c.Content = slices.Clone(n.Content)
	for i := 0; i+1 < len(c.Content); i += 2 {
		sub := resolve(c.Content[i+1])
		if c.Content[i].Value != key || sub == nil || sub.Kind != yaml.MappingNode {
			continue
		}
		m := *sub
		m.Content = nil
		for j := 0; j+1 < len(sub.Content); j += 2 {
			if !slices.Contains(drop, sub.Content[j].Value) {
				m.Content = append(m.Content, sub.Content[j], sub.Content[j+1])
			}
		}
		c.Content[i+1] = &m
	}
	return &c
}

// maxSecretFileSize bounds what paged reads from a secret file, so a path
// such as /dev/zero cannot hang the loader.
const maxSecretFileSize = 64 << 10

// readSmallFile reads a regular file of at most maxSecretFileSize bytes.
// Errors name the reason, never the content.
func readSmallFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFileSize+1))
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	if len(b) > maxSecretFileSize {
		return nil, fmt.Errorf("larger than %d bytes", maxSecretFileSize)
	}
	return b, nil
}
