// Package catalog is paged's knowledge of the Prometheus metrics that LLM
// inference servers expose: names, types, labels, bucket boundaries, and
// what was renamed or removed in which version.
//
// The facts come from the research catalogue (catalog.yaml, embedded in
// the binary) plus a few additions kept in extra.go. Nothing is read from
// disk at run time.
package catalog

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// Type is a metric type as the server declares it.
type Type string

const (
	Counter   Type = "counter"
	Gauge     Type = "gauge"
	Histogram Type = "histogram"
	Summary   Type = "summary"
	Unknown   Type = ""
)

// Status of a metric in the current release of its server.
type Status string

const (
	Current     Status = "current"
	Conditional Status = "conditional" // exists only with a flag or feature
	Removed     Status = "removed"
	Described   Status = "described_only" // HELP registered, never set
)

// Server is one LLM serving stack.
type Server struct {
	Key    string // catalog key: vllm, tgi, sglang, triton, dcgm_exporter, gaie
	Title  string // for messages: vLLM, TGI, SGLang, Triton, dcgm-exporter
	Prefix string // metric name prefix that identifies the server
	// CounterTotal is true when the client library always exposes a
	// counter as <family>_total (Python prometheus_client).
	CounterTotal bool
	// Created is true when counters and histograms also expose
	// <family>_created series.
	Created bool
	// Open means the catalogue of this server is known to be partial
	// (dcgm-exporter exposes any DCGM field the user configures): unknown
	// names are reported only when they look like a typo of a known one.
	Open bool
	// Absent lists releases that export none of the server's metrics,
	// each with the statement and its source (GAIE v1.6.0 removed its
	// endpoint picker).
	Absent map[string]string
}

// Metric is one metric family.
type Metric struct {
	Name   string // the name to write in PromQL (the base name for histograms and summaries)
	Family string // the name in the server's source code, when it differs
	Server *Server
	Type   Type
	// Labels on every series of the family ("le" and "quantile" are
	// implied by the type). Nil when the label set is not known.
	Labels      []string
	LabelValues map[string][]string
	Engines     []string // vLLM: v0, v1
	Status      Status
	Since       string
	Deprecated  string
	Hidden      string
	Until       string // first version without it
	ReplacedBy  string
	Note        string
	Condition   string
	Confidence  string
	Source      string // where the facts were read: repository@commit:path, a PR
	// DeclaredType is the type the server's # TYPE line says when the
	// catalogue types the metric by its behaviour instead (dcgm-exporter's
	// default file declares DCGM_EXP_GPU_HEALTH_STATUS a counter; it is a
	// status). Empty when they agree.
	DeclaredType Type
	// Unit is the unit the catalogue gives ("MiB", "seconds", "fraction
	// 0..1"); empty when it gives none (the name may still say: _seconds).
	Unit string
	// Layer groups metrics a server exposes through a library of its own
	// rather than its engine: "http" for vLLM's prometheus-fastapi-
	// instrumentator families. Empty for the engine's metrics.
	Layer string
	// AppearsOn is set for metrics none of whose series exist until the
	// first event they count (a failure, a request): no series then is
	// normal, not a sign that the metric is gone. It names the event.
	AppearsOn string
	// Buckets are the known bucket sets (upper bounds, without +Inf) of a
	// histogram, one per server version; nil when they are configurable.
	Buckets [][]float64
}

// HasEngine reports whether a vLLM metric exists in the engine ("v0" or
// "v1"). Metrics without an engine list exist in every engine.
func (m *Metric) HasEngine(e string) bool {
	return len(m.Engines) == 0 || slices.Contains(m.Engines, e)
}

// HasLabel reports whether series of the metric carry the label. It is
// true for any label when the label set is unknown.
func (m *Metric) HasLabel(l string) bool {
	return m.Labels == nil || slices.Contains(m.Labels, l)
}

// NotReal is a name seen in blog posts or generated configurations that
// the server never exported, with what to use instead.
type NotReal struct {
	Name   string
	Server *Server
	Advice string
}

// Series is what a series name refers to: a metric and the suffix that
// was added to its name ("_bucket", "_sum", "_count", "_created" or "").
type Series struct {
	Metric *Metric
	Suffix string
}

// Type is the type of the series itself: _bucket, _sum and _count of a
// histogram or summary are counters, _created is a gauge, the bare name of
// a summary holds quantiles (gauges), the bare name of a histogram is a
// native histogram. Unknown when the suffix does not fit the metric.
func (s Series) Type() Type {
	if s.Metric == nil {
		return Unknown
	}
	t := s.Metric.Type
	switch s.Suffix {
	case "":
		if t == Summary {
			return Gauge
		}
		return t
	case "_bucket":
		if t == Histogram {
			return Counter
		}
	case "_sum", "_count":
		if t == Histogram || t == Summary {
			return Counter
		}
	case "_created":
		return Gauge
	}
	return Unknown
}

// Valid reports whether the suffix exists for the metric's type.
func (s Series) Valid() bool {
	if s.Metric == nil {
		return false
	}
	switch s.Suffix {
	case "":
		return s.Metric.Type != Histogram
	case "_bucket":
		return s.Metric.Type == Histogram
	case "_sum", "_count":
		return s.Metric.Type == Histogram || s.Metric.Type == Summary
	case "_created":
		return s.Metric.Server != nil && s.Metric.Server.Created && s.Metric.Type != Gauge
	}
	return false
}

// Catalog is the set of known servers and metrics. It is immutable.
type Catalog struct {
	servers  []*Server
	metrics  map[string]*Metric // by Name
	families map[string]*Metric // by Family (counters whose exposed name adds _total)
	notReal  map[string]*NotReal
	names    map[*Server][]string // every valid series name, for suggestions
	labels   map[string]bool      // every label name of any known metric
	replaces map[string][]string  // current name -> removed names it replaced

	releases  map[string][]string             // release line -> releases, oldest first
	lifecycle map[string]map[string]Lifecycle // release line -> metric -> history

	dcgmFields map[string]bool // every DCGM field name (dcgm_fields.txt)
}

//go:embed catalog.yaml
var embedded []byte

// Embedded returns the catalogue's source text compiled into the binary.
func Embedded() []byte { return slices.Clone(embedded) }

var defaultCatalog = sync.OnceValues(func() (*Catalog, error) { return Parse(embedded) })

// Default returns the catalogue compiled into the binary. It panics only
// if the embedded file is broken, which a test rules out.
func Default() *Catalog {
	c, err := defaultCatalog()
	if err != nil {
		panic("catalog: embedded catalog.yaml: " + err.Error())
	}
	return c
}

// DCGMField reports whether name is a DCGM field (dcgm_fields.h), one
// that dcgm-exporter exposes under that name once its collectors file
// lists it, whether or not the default counters do.
func (c *Catalog) DCGMField(name string) bool { return c.dcgmFields[name] }

// DCGMFields lists every DCGM field name, sorted.
func (c *Catalog) DCGMFields() []string {
	out := make([]string, 0, len(c.dcgmFields))
	for n := range c.dcgmFields {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// WithLabel lists the metrics of a server's layer (Metric.Layer) other
// than except that carry label l, sorted: where a label missing on one
// HTTP metric is found instead.
func (c *Catalog) WithLabel(s *Server, layer, l, except string) []string {
	var out []string
	for _, m := range c.metrics {
		if m.Server == s && m.Layer == layer && m.Name != except && m.Status != Removed &&
			m.Labels != nil && slices.Contains(m.Labels, l) {
			out = append(out, m.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Servers lists the known servers.
func (c *Catalog) Servers() []*Server { return slices.Clone(c.servers) }

// ServerFor returns the server whose prefix the metric name carries.
func (c *Catalog) ServerFor(name string) *Server {
	for _, s := range c.servers {
		if s.Prefix != "" && strings.HasPrefix(name, s.Prefix) {
			return s
		}
	}
	return nil
}

// Server returns a server by catalog key.
func (c *Catalog) Server(key string) *Server {
	for _, s := range c.servers {
		if s.Key == key {
			return s
		}
	}
	return nil
}

// Metric returns the metric with this exact name.
func (c *Catalog) Metric(name string) *Metric { return c.metrics[name] }

// Metrics returns every metric, sorted by name.
func (c *Catalog) Metrics() []*Metric {
	out := make([]*Metric, 0, len(c.metrics))
	for _, m := range c.metrics {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Metric) int { return strings.Compare(a.Name, b.Name) })
	return out
}

var suffixes = []string{"_bucket", "_sum", "_count", "_created"}

// Resolve finds the metric a series name belongs to. The exact name wins
// (tgi_request_count is a counter, not the _count of tgi_request); then
// the histogram and summary suffixes; then <family>_created.
func (c *Catalog) Resolve(name string) (Series, bool) {
	if m := c.metrics[name]; m != nil {
		return Series{Metric: m}, true
	}
	for _, suf := range suffixes {
		base, ok := strings.CutSuffix(name, suf)
		if !ok {
			continue
		}
		if m := c.metrics[base]; m != nil {
			return Series{Metric: m, Suffix: suf}, true
		}
		if suf == "_created" {
			if m := c.families[base]; m != nil {
				return Series{Metric: m, Suffix: suf}, true
			}
		}
	}
	return Series{}, false
}

// NotReal returns the advice for a name the server never exported.
func (c *Catalog) NotReal(name string) (*NotReal, bool) {
	n, ok := c.notReal[name]
	return n, ok
}

// Replaces lists the removed metrics whose replacement is name, sorted
// (vllm:kv_cache_usage_perc replaced vllm:gpu_cache_usage_perc).
func (c *Catalog) Replaces(name string) []string { return slices.Clone(c.replaces[name]) }

// KnownLabel reports whether any catalogued metric carries the label.
// Checks use it to tell a server label written on the wrong metric from
// a target label added by relabelling, which they cannot know.
func (c *Catalog) KnownLabel(l string) bool { return c.labels[l] }

// SeriesNames lists every valid series name of a server, sorted.
func (c *Catalog) SeriesNames(s *Server) []string { return slices.Clone(c.names[s]) }
