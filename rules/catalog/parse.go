package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The layout of catalog.yaml (schema_version 1). Only the fields the
// checks use are read; prose fields stay in the file.
type rawFile struct {
	SchemaVersion int                  `yaml:"schema_version"`
	Servers       map[string]rawServer `yaml:"servers"`
}

type rawServer struct {
	Prefix         string      `yaml:"prefix"`
	ClientLibrary  string      `yaml:"client_library"`
	CounterNaming  string      `yaml:"counter_naming"`
	DefaultLabels  yaml.Node   `yaml:"default_labels"` // a list, or {v0: [...], v1: [...]}
	Labels         []string    `yaml:"labels"`
	Metrics        []rawMetric `yaml:"metrics"`
	DefaultMetrics []rawMetric `yaml:"default_metrics"`
	Removed        []rawMetric `yaml:"removed"`
	// Corrections (additions.yaml only) replace the research catalogue's
	// entry of the same name: what upstream source contradicts in it.
	Corrections []rawMetric `yaml:"corrections"`
	// Absent (additions.yaml only): releases of the server that export
	// none of its metrics, with the source saying so.
	Absent         map[string]string `yaml:"absent"`
	NotReal        []rawNotReal      `yaml:"not_real"`
	Optional       []string          `yaml:"optional_commented_out"`
	BackendMetrics map[string]string `yaml:"backend_metrics"`
	HTTPMetrics    struct {
		Metrics []rawMetric `yaml:"metrics"`
	} `yaml:"http_metrics"`
}

type rawMetric struct {
	Name         string               `yaml:"name"`
	Family       string               `yaml:"family"`
	Type         string               `yaml:"type"`
	Labels       *[]string            `yaml:"labels"`
	ExtraLabels  []string             `yaml:"extra_labels"`
	LabelValues  map[string][]string  `yaml:"label_values"`
	Engines      []string             `yaml:"engines"`
	Status       string               `yaml:"status"`
	Since        string               `yaml:"since"`
	DeprecatedIn string               `yaml:"deprecated_in"`
	HiddenIn     string               `yaml:"hidden_in"`
	Until        string               `yaml:"until"`
	ReplacedBy   string               `yaml:"replaced_by"`
	Note         string               `yaml:"note"`
	Condition    string               `yaml:"condition"`
	Confidence   string               `yaml:"confidence"`
	Source       string               `yaml:"source"`
	Unit         string               `yaml:"unit"`
	DeclaredType string               `yaml:"declared_type"`
	Rest         map[string]yaml.Node `yaml:",inline"`
}

type rawNotReal struct {
	Name           string `yaml:"name"`
	RealEquivalent string `yaml:"real_equivalent"`
}

var (
	labelNameRe  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	metricNameRe = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	trtNameRe    = regexp.MustCompile(`\bnv_trt_llm_[a-z_]+`)
	parenRe      = regexp.MustCompile(`\s*\([^)]*\)`)
)

// Parse reads a catalogue in catalog.yaml's format and adds the facts of
// extra.go. Entries it cannot use (prose, lists written as text) are
// skipped; a structural error in the YAML is returned.
func Parse(b []byte) (*Catalog, error) {
	var raw rawFile
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if raw.SchemaVersion != 1 {
		return nil, fmt.Errorf("catalog: schema_version %d, want 1", raw.SchemaVersion)
	}
	c := &Catalog{
		metrics:  map[string]*Metric{},
		families: map[string]*Metric{},
		notReal:  map[string]*NotReal{},
		names:    map[*Server][]string{},
		labels:   map[string]bool{},
		replaces: map[string][]string{},
	}
	adds, err := parseAdditions()
	if err != nil {
		return nil, err
	}
	c.setVersions(adds)
	keys := make([]string, 0, len(raw.Servers))
	for k := range raw.Servers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		rs := raw.Servers[key]
		if rs.Prefix == "" && len(rs.Metrics) == 0 && len(rs.DefaultMetrics) == 0 {
			continue // ollama, cross_engine_equivalents: no metrics of their own
		}
		s := &Server{
			Key:          key,
			Title:        titles[key],
			Prefix:       rs.Prefix,
			CounterTotal: strings.Contains(rs.ClientLibrary, "prometheus_client"),
			Created:      strings.Contains(rs.CounterNaming, "_created"),
		}
		if s.Title == "" {
			s.Title = key
		}
		if p, ok := prefixOverride[key]; ok {
			s.Prefix = p
		}
		s.Open = openServers[key]
		c.servers = append(c.servers, s)
		defaults := append(defaultLabels(&rs), extraDefaultLabels[key]...)
		all := slices.Concat(rs.Metrics, rs.DefaultMetrics)
		for _, rm := range all {
			c.addRaw(s, rm, defaults, Current)
		}
		for _, rm := range rs.Removed {
			c.addRaw(s, rm, defaults, Removed)
		}
		add := adds.Servers[key]
		for _, rm := range add.Metrics {
			c.addRaw(s, rm, defaults, Current)
		}
		for _, rm := range add.Removed {
			c.addRaw(s, rm, defaults, Removed)
		}
		s.Absent = add.Absent
		for _, rm := range rs.HTTPMetrics.Metrics {
			for _, m := range buildRaw(s, rm, nil, Current) {
				m.Layer = "http"
				c.add(m)
			}
		}
		for _, name := range rs.Optional {
			c.add(&Metric{Name: name, Server: s, Labels: slices.Clone(defaults), Status: Conditional,
				Condition: "commented out in the default counters file"})
		}
		for _, text := range rs.BackendMetrics {
			for _, name := range trtNameRe.FindAllString(text, -1) {
				c.add(&Metric{Name: name, Server: s, Type: Gauge, Status: Conditional,
					Condition: "TensorRT-LLM backend", Confidence: "medium"})
			}
		}
		for _, nr := range rs.NotReal {
			for _, name := range splitNames(nr.Name) {
				if _, dup := c.notReal[name]; !dup {
					c.notReal[name] = &NotReal{Name: name, Server: s, Advice: nr.RealEquivalent}
				}
			}
		}
		for _, rm := range add.Corrections {
			c.correct(s, rm, defaults)
		}
	}
	// Servers the research catalogue has no section for: all their
	// metrics are in additions.yaml.
	for _, es := range extraServers {
		s := es
		c.servers = append(c.servers, &s)
		add := adds.Servers[s.Key]
		for _, rm := range add.Metrics {
			c.addRaw(&s, rm, nil, Current)
		}
		for _, rm := range add.Removed {
			c.addRaw(&s, rm, nil, Removed)
		}
		s.Absent = add.Absent
	}
	addExtra(c)
	c.dcgmFields = parseFieldList(dcgmFieldList)
	c.index()
	return c, nil
}

var titles = map[string]string{
	"vllm": "vLLM", "tgi": "TGI", "sglang": "SGLang", "triton": "Triton",
	"dcgm_exporter": "dcgm-exporter",
}

func defaultLabels(rs *rawServer) []string {
	var out []string
	n := &rs.DefaultLabels
	switch n.Kind {
	case yaml.SequenceNode:
		_ = n.Decode(&out)
	case yaml.MappingNode:
		var m map[string][]string
		if n.Decode(&m) == nil {
			for _, k := range slices.Sorted(mapKeys(m)) {
				for _, l := range m[k] {
					if !slices.Contains(out, l) {
						out = append(out, l)
					}
				}
			}
		}
	}
	for _, l := range rs.Labels {
		out = append(out, parseLabelText(l)...)
	}
	return out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// parseLabelText reads label entries written as prose:
// "hostname (older releases: Hostname)", "GPU_I_PROFILE/GPU_I_ID (MIG)".
func parseLabelText(s string) []string {
	var out []string
	if i := strings.Index(s, "older releases:"); i >= 0 {
		rest := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s[i+len("older releases:"):]), ")"))
		if labelNameRe.MatchString(rest) {
			out = append(out, rest)
		}
	}
	main := parenRe.ReplaceAllString(s, "")
	for _, p := range strings.Split(main, "/") {
		p = strings.TrimSpace(p)
		if labelNameRe.MatchString(p) {
			out = append(out, p)
		}
	}
	return out
}

// splitNames reads "a / b / c (bare)" as the names a, b and c.
func splitNames(s string) []string {
	var out []string
	for _, p := range strings.Split(parenRe.ReplaceAllString(s, ""), "/") {
		p = strings.TrimSpace(p)
		if metricNameRe.MatchString(p) {
			out = append(out, p)
		}
	}
	return out
}

func (c *Catalog) addRaw(s *Server, rm rawMetric, defaults []string, listStatus Status) {
	for _, m := range buildRaw(s, rm, defaults, listStatus) {
		c.add(m)
	}
}

// correct replaces the entry of a name that the research catalogue has
// wrong. A correction whose name the catalogue lacks is left out (a test
// keeps every correction pointed at an entry).
func (c *Catalog) correct(s *Server, rm rawMetric, defaults []string) {
	for _, m := range buildRaw(s, rm, defaults, Current) {
		if prev := c.metrics[m.Name]; prev != nil && prev.Server == s {
			if prev.Family != "" && prev.Family != m.Family {
				delete(c.families, prev.Family)
			}
			c.metrics[m.Name] = m
			if m.Family != "" && m.Family != m.Name {
				c.families[m.Family] = m
			}
		}
	}
}

// buildRaw turns an entry into the metrics it names.
func buildRaw(s *Server, rm rawMetric, defaults []string, listStatus Status) []*Metric {
	names := splitNames(rm.Name)
	if len(names) == 0 {
		return nil
	}
	m := Metric{
		Family:      rm.Family,
		Server:      s,
		Type:        Type(rm.Type),
		LabelValues: rm.LabelValues,
		Engines:     rm.Engines,
		Since:       rm.Since,
		Deprecated:  rm.DeprecatedIn,
		Hidden:      rm.HiddenIn,
		Until:       rm.Until,
		ReplacedBy:  rm.ReplacedBy,
		Note:        rm.Note,
		Condition:   rm.Condition,
		Confidence:  rm.Confidence,
		Source:      rm.Source,
		Unit:        rm.Unit,
	}
	if rm.DeclaredType != "" {
		m.DeclaredType = Type(rm.DeclaredType)
	}
	switch m.Type {
	case Counter, Gauge, Histogram, Summary:
	default:
		m.Type = Unknown
	}
	m.Status = parseStatus(rm.Status, listStatus)
	if rm.Labels != nil {
		for _, l := range *rm.Labels {
			if !labelNameRe.MatchString(l) {
				m.Labels = nil // prose: "<every CacheConfig field ...>"; label set unknown
				break
			}
			m.Labels = append(m.Labels, l)
		}
		if m.Labels == nil && len(*rm.Labels) == 0 {
			m.Labels = []string{}
		}
	} else {
		m.Labels = slices.Clone(defaults)
	}
	if m.Labels != nil {
		m.Labels = append(m.Labels, rm.ExtraLabels...)
		for l := range rm.LabelValues {
			if !slices.Contains(m.Labels, l) {
				m.Labels = append(m.Labels, l)
			}
		}
	}
	for k, n := range rm.Rest {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = *n.Alias
		}
		if !strings.HasPrefix(k, "buckets") || n.Kind != yaml.SequenceNode {
			continue
		}
		var bs []float64
		if n.Decode(&bs) == nil && len(bs) > 0 {
			m.Buckets = append(m.Buckets, bs)
		}
	}
	slices.SortFunc(m.Buckets, func(a, b []float64) int { return len(b) - len(a) })
	out := make([]*Metric, 0, len(names))
	for _, name := range names {
		mm := m
		mm.Name = name
		if len(names) > 1 {
			mm.Type = Unknown // a list of names written together: no type given
		}
		out = append(out, &mm)
	}
	return out
}

func parseStatus(s string, def Status) Status {
	switch {
	case s == "":
		return def
	case strings.HasPrefix(s, "removed"):
		return Removed
	case s == string(Conditional):
		return Conditional
	case s == string(Described):
		return Described
	}
	return Current
}

func (c *Catalog) add(m *Metric) {
	if prev, dup := c.metrics[m.Name]; dup {
		// The current entry wins over a removed one of the same name
		// (vllm:spec_decode_efficiency is listed twice).
		if prev.Status != Removed || m.Status == Removed {
			return
		}
	}
	c.metrics[m.Name] = m
	if m.Family != "" && m.Family != m.Name {
		c.families[m.Family] = m
	}
}

// index builds the suggestion lists and the label set.
func (c *Catalog) index() {
	for _, m := range c.metrics {
		if m.Status == Removed {
			if r := m.ReplacedBy; r != "" && metricNameRe.MatchString(r) {
				c.replaces[r] = append(c.replaces[r], m.Name)
			}
			continue
		}
		var forms []string
		switch m.Type {
		case Histogram:
			forms = []string{"_bucket", "_sum", "_count"}
		case Summary:
			forms = []string{"", "_sum", "_count"}
		default:
			forms = []string{""}
		}
		for _, f := range forms {
			c.names[m.Server] = append(c.names[m.Server], m.Name+f)
		}
		for _, l := range m.Labels {
			if !targetLabels[l] {
				c.labels[l] = true
			}
		}
	}
	c.labels["le"] = true
	c.labels["quantile"] = true
	for _, s := range c.servers {
		slices.Sort(c.names[s])
	}
	for _, r := range c.replaces {
		slices.Sort(r)
	}
}
