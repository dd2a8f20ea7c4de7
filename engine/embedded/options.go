package embedded

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/config"
)

// Defaults filled in by New.
const (
	DefaultScrapeInterval = 5 * time.Second
	// DefaultScrapeTimeout is Prometheus's default; it is capped at the
	// scrape interval, as Prometheus does.
	DefaultScrapeTimeout = 10 * time.Second
	DefaultRetention     = 24 * time.Hour
	DefaultMetricsPath   = "/metrics"
	DefaultScheme        = "http"
	// DefaultMaxSamplesPerScrape bounds the samples one scrape may ingest;
	// a vLLM server with a handful of models exposes a few thousand.
	// Prometheus itself has no limit by default.
	DefaultMaxSamplesPerScrape = 200_000
	// DefaultBodySizeLimit bounds the uncompressed body of one scrape.
	// A vLLM /metrics page is well under 1 MiB.
	DefaultBodySizeLimit = 16 << 20
	// DefaultLabelLimit, DefaultLabelNameLengthLimit and
	// DefaultLabelValueLengthLimit bound what a hostile target can make
	// paged store per series.
	DefaultLabelLimit            = 64
	DefaultLabelNameLengthLimit  = 256
	DefaultLabelValueLengthLimit = 4096
)

// Options configure an Embedded datasource. New validates them and fills
// the defaults; the zero value of every optional field means "default".
type Options struct {
	// StoragePath is the TSDB directory (blocks and WAL). Required. It
	// must not be shared with another TSDB, e.g. the engine's alert state.
	StoragePath string
	// ScrapeInterval is the default interval of jobs that set none.
	// Default 5s.
	ScrapeInterval time.Duration
	// ScrapeTimeout is the default timeout of jobs that set none.
	// Default 10s, capped at the job's interval.
	ScrapeTimeout time.Duration
	// Retention is how long samples are kept. Default 24h. The TSDB's
	// block range is derived from it (see docs/embedded.md).
	Retention time.Duration
	// RetentionSize, if positive, also caps the bytes on disk of
	// persisted blocks (the WAL and the in-memory head come on top).
	RetentionSize int64
	// ScrapeConfigs lists jobs to scrape in paged's shorthand (static
	// targets). ScrapeConfigs and PromScrapeConfigs together hold at least
	// one job, and job names are unique across both.
	ScrapeConfigs []ScrapeConfig
	// PromScrapeConfigs are Prometheus scrape_configs, verbatim: every
	// service discovery, relabel_configs, metric_relabel_configs, auth,
	// TLS, honor_labels and limits, as config.Load parsed them (with
	// global scrape_interval/scrape_timeout already applied). Limits they
	// leave at 0 get the paged defaults below.
	PromScrapeConfigs []*config.ScrapeConfig
	// Keep, when not nil, drops at scrape time every series whose metric
	// name it does not select (see Keep). Nil stores everything.
	Keep *Keep

	// MaxSamplesPerScrape fails a scrape that exposes more samples
	// (Prometheus's sample_limit). Default 200000; negative: unlimited.
	MaxSamplesPerScrape int
	// BodySizeLimit fails a scrape whose uncompressed body is larger, in
	// bytes (Prometheus's body_size_limit). Default 16 MiB; negative:
	// unlimited.
	BodySizeLimit int64
	// LabelLimit, LabelNameLengthLimit and LabelValueLengthLimit fail a
	// scrape with a series beyond them. Defaults 64, 256 and 4096;
	// negative: unlimited.
	LabelLimit            int
	LabelNameLengthLimit  int
	LabelValueLengthLimit int

	// Logger gets the scrape manager's and the TSDB's logs; nil discards.
	Logger *slog.Logger
	// Registerer receives the scrape manager's and TSDB's metrics
	// (prometheus_target_*, prometheus_tsdb_*). Nil: a private registry.
	// Close unregisters them, so an Embedded may follow another on the
	// same Registerer; two open at the same time must not share one.
	Registerer prometheus.Registerer
}

// ScrapeConfig is the subset of Prometheus's scrape_config the embedded
// mode accepts (DESIGN.md §3).
type ScrapeConfig struct {
	JobName       string
	StaticConfigs []StaticConfig
	// MetricsPath default /metrics; Scheme http (default) or https.
	MetricsPath string
	Scheme      string
	// ScrapeInterval and ScrapeTimeout override Options' for this job.
	ScrapeInterval time.Duration
	ScrapeTimeout  time.Duration
}

// StaticConfig is a list of host:port targets with labels added to every
// series scraped from them.
type StaticConfig struct {
	Targets []string
	Labels  map[string]string
}

// fill validates o and fills its defaults; the returned error joins every
// problem found, each naming the field.
func (o *Options) fill() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("embedded: %s: %s", field, fmt.Sprintf(format, args...)))
	}
	if o.StoragePath == "" {
		bad("storage path", "required")
	}
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = DefaultScrapeInterval
	}
	checkDuration(bad, "scrape_interval", o.ScrapeInterval)
	if o.ScrapeTimeout == 0 {
		o.ScrapeTimeout = DefaultScrapeTimeout
	}
	checkDuration(bad, "scrape_timeout", o.ScrapeTimeout)
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.Retention < time.Minute {
		bad("retention", "%s is too short (at least 1m)", o.Retention)
	}
	if o.RetentionSize < 0 {
		bad("retention size", "%d is negative", o.RetentionSize)
	}
	o.MaxSamplesPerScrape = limit(o.MaxSamplesPerScrape, DefaultMaxSamplesPerScrape)
	o.BodySizeLimit = int64(limit(int(o.BodySizeLimit), DefaultBodySizeLimit))
	o.LabelLimit = limit(o.LabelLimit, DefaultLabelLimit)
	o.LabelNameLengthLimit = limit(o.LabelNameLengthLimit, DefaultLabelNameLengthLimit)
	o.LabelValueLengthLimit = limit(o.LabelValueLengthLimit, DefaultLabelValueLengthLimit)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}

	if len(o.ScrapeConfigs) == 0 && len(o.PromScrapeConfigs) == 0 {
		bad("scrape_configs", "at least one scrape config is required")
	}
	jobs := map[string]string{} // job name: where it first appears
	for i, sc := range o.PromScrapeConfigs {
		field := fmt.Sprintf("prometheus scrape_configs[%d]", i)
		switch {
		case sc == nil:
			bad(field, "nil scrape config")
		case sc.JobName == "":
			bad(field+".job_name", "required")
		default:
			if first, dup := jobs[sc.JobName]; dup {
				bad(field+".job_name", "duplicate job name %q (first in %s)", sc.JobName, first)
			} else {
				jobs[sc.JobName] = field
			}
		}
	}
	if o.Keep != nil {
		for i, p := range o.Keep.Patterns {
			if _, err := regexp.Compile("^(?:" + p + ")$"); err != nil {
				bad(fmt.Sprintf("keep.patterns[%d]", i), "%q: %v", p, err)
			}
		}
	}
	for i := range o.ScrapeConfigs {
		sc := &o.ScrapeConfigs[i]
		field := fmt.Sprintf("scrape_configs[%d]", i)
		switch {
		case sc.JobName == "":
			bad(field+".job_name", "required")
		case !utf8.ValidString(sc.JobName):
			bad(field+".job_name", "not valid UTF-8")
		default:
			if first, dup := jobs[sc.JobName]; dup {
				bad(field+".job_name", "duplicate job name %q (first in %s)", sc.JobName, first)
			} else {
				jobs[sc.JobName] = field
			}
		}
		if sc.MetricsPath == "" {
			sc.MetricsPath = DefaultMetricsPath
		}
		if !strings.HasPrefix(sc.MetricsPath, "/") || strings.ContainsAny(sc.MetricsPath, "?# \t\n") {
			bad(field+".metrics_path", "%q must be a path starting with / (no query, fragment or spaces)", sc.MetricsPath)
		}
		if sc.Scheme == "" {
			sc.Scheme = DefaultScheme
		}
		if sc.Scheme != "http" && sc.Scheme != "https" {
			bad(field+".scheme", "%q is not http or https", sc.Scheme)
		}
		explicitTimeout := sc.ScrapeTimeout != 0
		if sc.ScrapeInterval == 0 {
			sc.ScrapeInterval = o.ScrapeInterval
		} else {
			checkDuration(bad, field+".scrape_interval", sc.ScrapeInterval)
		}
		if explicitTimeout {
			checkDuration(bad, field+".scrape_timeout", sc.ScrapeTimeout)
			if sc.ScrapeTimeout > sc.ScrapeInterval {
				bad(field+".scrape_timeout", "%s is greater than the scrape interval %s", sc.ScrapeTimeout, sc.ScrapeInterval)
			}
		} else {
			sc.ScrapeTimeout = min(o.ScrapeTimeout, sc.ScrapeInterval)
		}

		seen := map[string]bool{}
		n := 0
		for j, st := range sc.StaticConfigs {
			sfield := fmt.Sprintf("%s.static_configs[%d]", field, j)
			for k, t := range st.Targets {
				tfield := fmt.Sprintf("%s.targets[%d]", sfield, k)
				if err := checkTarget(t); err != nil {
					bad(tfield, "%v", err)
					continue
				}
				if seen[t] {
					bad(tfield, "duplicate target %q in job %q", t, sc.JobName)
				}
				seen[t] = true
				n++
			}
			for name, value := range st.Labels {
				if err := checkLabel(name, value); err != nil {
					bad(sfield+".labels."+name, "%v", err)
				}
			}
		}
		if n == 0 && !listsTargets(sc) {
			bad(field+".static_configs", "job %q has no targets", sc.JobName)
		}
	}
	return errors.Join(errs...)
}

// listsTargets reports whether sc lists any target, valid or not (the
// invalid ones are reported on their own).
func listsTargets(sc *ScrapeConfig) bool {
	for _, st := range sc.StaticConfigs {
		if len(st.Targets) > 0 {
			return true
		}
	}
	return false
}

// limit maps a user limit to the one passed to Prometheus: 0 is the
// default, negative is unlimited (Prometheus's 0).
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// checkDuration rejects durations Prometheus cannot represent in its
// millisecond config format.
func checkDuration(bad func(field, format string, args ...any), field string, d time.Duration) {
	switch {
	case d < 0:
		bad(field, "%s is negative", d)
	case d < 10*time.Millisecond:
		bad(field, "%s is too short (at least 10ms)", d)
	case d%time.Millisecond != 0:
		bad(field, "%s is not a whole number of milliseconds", d)
	}
}

// checkTarget accepts host:port, as in a Prometheus static_config. A URL
// gets a hint, since scheme and path are separate fields.
func checkTarget(t string) error {
	if t == "" {
		return errors.New("empty target")
	}
	if !utf8.ValidString(t) {
		return errors.New("target is not valid UTF-8")
	}
	if strings.Contains(t, "://") {
		return fmt.Errorf("%q is a URL; give host:port and set scheme and metrics_path instead", t)
	}
	if strings.ContainsAny(t, "/?# \t\n@") {
		return fmt.Errorf("%q is not host:port", t)
	}
	host, port, err := net.SplitHostPort(t)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", t, err)
	}
	if host == "" {
		return fmt.Errorf("%q has no host", t)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%q: port %q is not a number in 1-65535", t, port)
	}
	return nil
}

// checkLabel accepts the labels a static_config may add: a valid name that
// is not reserved (__*), and a UTF-8 value.
func checkLabel(name, value string) error {
	if !model.LegacyValidation.IsValidLabelName(name) {
		return fmt.Errorf("%q is not a valid label name", name)
	}
	if strings.HasPrefix(name, model.ReservedLabelPrefix) {
		return fmt.Errorf("label name %q is reserved (starts with %s)", name, model.ReservedLabelPrefix)
	}
	if !utf8.ValidString(value) {
		return fmt.Errorf("value of %q is not valid UTF-8", name)
	}
	return nil
}
