package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	promcfg "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery"
	"github.com/prometheus/prometheus/discovery/file"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/scrape"
	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
)

// Keep modes of datasource.embedded.keep.
const (
	KeepReferenced = "referenced" // store only the metrics the rules read
	KeepAll        = "all"
)

// scrapeConfigs decodes datasource.embedded.scrape_configs with
// Prometheus's own config package, one scrape_config at a time so that
// every bad job is reported, and places Prometheus's messages back on the
// line and column of paged.yaml they are about. Then it checks what
// `promtool check config` checks beyond parsing: credential and TLS files
// exist, file_sd files that exist hold valid target groups, and static
// and file targets survive relabelling.
func (d *decoder) scrapeConfigs(n *yaml.Node, key, dir string, dst *EmbeddedDatasource) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, key, "expected a list, got %s", kindName(n))
		return
	}
	jobs := map[string]*yaml.Node{}
	for i, item := range n.Content {
		ikey := fmt.Sprintf("%s[%d]", key, i)
		sc := d.scrapeConfig(item, ikey, dir, dst)
		if sc == nil {
			continue
		}
		if first, dup := jobs[sc.JobName]; dup {
			d.errorf(findKey(resolve(item), "job_name"), ikey+".job_name", "duplicate job name %q (first at line %d)", sc.JobName, first.Line)
			continue
		}
		jobs[sc.JobName] = findKey(resolve(item), "job_name")
		dst.ScrapeConfigs = append(dst.ScrapeConfigs, sc)
	}
}

// scrapeConfig parses one scrape_config; nil when it has problems (they
// are recorded).
func (d *decoder) scrapeConfig(item *yaml.Node, key, dir string, dst *EmbeddedDatasource) *promcfg.ScrapeConfig {
	item = copyResolved(item)
	if item.Kind != yaml.MappingNode {
		d.errorf(item, key, "expected a mapping (a Prometheus scrape_config), got %s", kindName(item))
		return nil
	}
	missing := false
	for i := 0; i+1 < len(item.Content); i += 2 {
		if msg, ok := missingDiscovery(item.Content[i].Value); ok {
			d.errorf(item.Content[i], key+"."+item.Content[i].Value, "%s", msg)
			missing = true
		}
	}
	if missing {
		return nil
	}
	global := &yaml.Node{Kind: yaml.MappingNode}
	addScalar(global, "scrape_interval", model.Duration(dst.ScrapeInterval).String())
	timeout := dst.ScrapeTimeout
	if timeout == 0 || timeout > dst.ScrapeInterval {
		timeout = min(DefaultScrapeTimeout, dst.ScrapeInterval)
	}
	addScalar(global, "scrape_timeout", model.Duration(timeout).String())
	root := &yaml.Node{Kind: yaml.MappingNode}
	root.Content = append(root.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "global"}, global,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "scrape_configs"}, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{item}})
	text, err := yaml.Marshal(root)
	if err != nil {
		d.errorf(item, key, "cannot render the scrape config: %v", err)
		return nil
	}
	cfg, err := promcfg.Load(string(text), nil)
	if err != nil {
		d.scrapeLoadError(item, key, text, err)
		return nil
	}
	cfg.SetDirectory(dir)
	if len(cfg.ScrapeConfigs) != 1 {
		d.errorf(item, key, "expected one scrape config")
		return nil
	}
	sc := cfg.ScrapeConfigs[0]
	d.promtoolChecks(item, key, sc)
	return sc
}

// scrapeLoadError places the error promcfg.Load gave on the item it came
// from. yaml's type errors carry a line of the rendered text: the rendered
// text is parsed again and walked beside the item to find that line's node
// in paged.yaml. Prometheus's own validation errors carry no position:
// they go on the key they are about when the message names one, else on
// the scrape config.
func (d *decoder) scrapeLoadError(item *yaml.Node, key string, text []byte, err error) {
	lines := lineMap(item, text)
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "unmarshal errors:\n"); ok {
		for _, m := range strings.Split(rest, "\n") {
			m = strings.TrimSpace(m)
			var line int
			at := item
			if _, err := fmt.Sscanf(m, "line %d:", &line); err == nil {
				if n := lines[line]; n != nil {
					at = n
				}
				_, m, _ = strings.Cut(m, ": ")
			}
			d.errorf(at, key, "%s", redactTypeError(m))
		}
		return
	}
	var line int
	if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
		at := item
		if n := lines[line]; n != nil {
			at = n
		}
		_, msg, _ = strings.Cut(msg, ": ")
		d.errorf(at, key, "%s", redactTypeError(msg))
		return
	}
	d.errorf(keyNamedIn(item, msg), key, "%s", msg)
}

// keyNamedIn returns the value of the item's key that msg is about, or
// the item itself.
func keyNamedIn(item *yaml.Node, msg string) *yaml.Node {
	// A value the message quotes ("unknown relabel action \"explode\"").
	for _, m := range quotedRE.FindAllString(msg, -1) {
		if v, err := strconv.Unquote(m); err == nil && v != "" {
			if n := scalarValued(item, v); n != nil {
				return n
			}
		}
	}
	lower := strings.ToLower(msg)
	hints := map[string]string{
		"scrape timeout":  "scrape_timeout",
		"scrape interval": "scrape_interval",
		"relabel":         "relabel_configs",
		"metric_relabel":  "metric_relabel_configs",
		"basic_auth":      "basic_auth",
		"bearer_token":    "bearer_token",
		"authorization":   "authorization",
		"oauth2":          "oauth2",
		"tls":             "tls_config",
		"proxy":           "proxy_url",
		"scrape_protocol": "scrape_protocols",
		"fallback":        "fallback_scrape_protocol",
	}
	var best *yaml.Node
	for i := 0; i+1 < len(item.Content); i += 2 {
		k := item.Content[i].Value
		if strings.HasSuffix(k, "_sd_configs") && strings.Contains(lower, strings.TrimSuffix(k, "_sd_configs")) {
			return item.Content[i]
		}
		if strings.Contains(lower, k) {
			best = item.Content[i]
		}
	}
	if best != nil {
		return best
	}
	for hint, k := range hints {
		if strings.Contains(lower, hint) {
			if n := keyNode(item, k); n != nil {
				return n
			}
		}
	}
	return item
}

var quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// scalarValued finds the first value (not key) scalar of n equal to v.
func scalarValued(n *yaml.Node, v string) *yaml.Node {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == v {
			return n
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if f := scalarValued(n.Content[i], v); f != nil {
				return f
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if f := scalarValued(c, v); f != nil {
				return f
			}
		}
	}
	return nil
}

// keyNode returns the key node k of mapping n, nil when absent.
func keyNode(n *yaml.Node, k string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i]
		}
	}
	return nil
}

// lineMap maps each line of the rendered text to the node of item that
// was rendered there: the text is parsed again and walked beside item,
// which has the same shape.
func lineMap(item *yaml.Node, text []byte) map[int]*yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil || len(doc.Content) != 1 {
		return nil
	}
	seq := findKey(doc.Content[0], "scrape_configs")
	if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 {
		return nil
	}
	out := map[int]*yaml.Node{}
	var walk func(orig, rendered *yaml.Node)
	walk = func(orig, rendered *yaml.Node) {
		if orig == nil || rendered == nil {
			return
		}
		if _, ok := out[rendered.Line]; !ok || (orig.Kind != yaml.MappingNode && out[rendered.Line].Kind == yaml.MappingNode) {
			out[rendered.Line] = orig
		}
		for i := 0; i < len(orig.Content) && i < len(rendered.Content); i++ {
			walk(orig.Content[i], rendered.Content[i])
		}
	}
	walk(item, seq.Content[0])
	return out
}

// copyResolved deep-copies n with its aliases replaced by what they
// point at, so it renders on its own; positions are kept.
func copyResolved(n *yaml.Node) *yaml.Node {
	n = resolve(n)
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, cc := range n.Content {
		c.Content[i] = copyResolved(cc)
	}
	return &c
}

func addScalar(m *yaml.Node, k, v string) {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
}

// promtoolChecks are the checks `promtool check config` makes on a scrape
// config beyond loading it (cmd/promtool's checkConfig), with the same
// messages, placed on the keys they are about.
func (d *decoder) promtoolChecks(item *yaml.Node, key string, sc *promcfg.ScrapeConfig) {
	hc := sc.HTTPClientConfig
	if a := hc.Authorization; a != nil && a.CredentialsFile != "" {
		if _, err := os.Stat(a.CredentialsFile); err != nil {
			at := findKey(item, "authorization.credentials_file")
			if at == item {
				at = findKey(item, "bearer_token_file")
			}
			d.errorf(at, key, "error checking authorization credentials or bearer token file %q: %v", a.CredentialsFile, errors.Unwrap(err))
		}
	}
	d.tlsFiles(findKey(item, "tls_config"), key+".tls_config", hc.TLSConfig)
	for _, c := range sc.ServiceDiscoveryConfigs {
		if k, tc, ok := sdTLSConfig(c); ok {
			d.tlsFiles(keyNodeOr(item, k), key+"."+k, tc)
		}
		switch c := c.(type) {
		case *file.SDConfig:
			at := keyNodeOr(item, "file_sd_configs")
			for _, pattern := range c.Files {
				files, err := filepath.Glob(pattern)
				if err != nil {
					d.errorf(at, key+".file_sd_configs", "%q: %v", pattern, err)
					continue
				}
				for _, f := range files {
					tgs, err := checkSDFile(f)
					if err != nil {
						d.errorf(at, key+".file_sd_configs", "checking SD file %q: %v", pattern, err)
						continue
					}
					if err := checkTargetGroups(tgs, sc); err != nil {
						d.errorf(at, key+".file_sd_configs", "%s: %v", f, err)
					}
				}
				// A file that does not exist yet is only a warning for
				// promtool: targets may be written later.
			}
		case discovery.StaticConfig:
			if err := checkTargetGroups(c, sc); err != nil {
				d.errorf(keyNodeOr(item, "static_configs"), key+".static_configs", "%v", err)
			}
		}
	}
}

func keyNodeOr(item *yaml.Node, k string) *yaml.Node {
	if n := keyNode(item, k); n != nil {
		return n
	}
	return item
}

func (d *decoder) tlsFiles(at *yaml.Node, key string, tc promconfig.TLSConfig) {
	switch {
	case tc.CertFile != "" && tc.KeyFile == "":
		d.errorf(at, key, "client cert file %q specified without client key file", tc.CertFile)
		return
	case tc.KeyFile != "" && tc.CertFile == "":
		d.errorf(at, key, "client key file %q specified without client cert file", tc.KeyFile)
		return
	}
	if tc.CertFile != "" {
		if _, err := os.Stat(tc.CertFile); err != nil {
			d.errorf(at, key, "error checking client cert file %q: %v", tc.CertFile, errors.Unwrap(err))
		}
	}
	if tc.KeyFile != "" {
		if _, err := os.Stat(tc.KeyFile); err != nil {
			d.errorf(at, key, "error checking client key file %q: %v", tc.KeyFile, errors.Unwrap(err))
		}
	}
}

// checkSDFile reads a file_sd file as Prometheus's file discovery does.
func checkSDFile(name string) ([]*targetgroup.Group, error) {
	content, err := readSmallFile(name)
	if err != nil {
		return nil, err
	}
	var tgs []*targetgroup.Group
	switch ext := filepath.Ext(name); strings.ToLower(ext) {
	case ".json":
		if err := json.Unmarshal(content, &tgs); err != nil {
			return nil, err
		}
	case ".yml", ".yaml":
		if err := yamlv2.UnmarshalStrict(content, &tgs); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("invalid file extension: %q", ext)
	}
	for i, tg := range tgs {
		if tg == nil {
			return nil, fmt.Errorf("nil target group item found (index %d)", i)
		}
	}
	return tgs, nil
}

// checkTargetGroups builds the targets of groups as the scrape manager
// would and returns the first failure (a bad address after relabelling).
func checkTargetGroups(tgs []*targetgroup.Group, sc *promcfg.ScrapeConfig) error {
	var targets []*scrape.Target
	lb := labels.NewBuilder(labels.EmptyLabels())
	for _, tg := range tgs {
		var failures []error
		targets, failures = scrape.TargetsFromGroup(tg, sc, targets, lb)
		if len(failures) > 0 {
			return failures[0]
		}
	}
	return nil
}

// StaticTargets lists the targets of a scrape config's static_configs.
func StaticTargets(sc *promcfg.ScrapeConfig) []string {
	var out []string
	for _, c := range sc.ServiceDiscoveryConfigs {
		if st, ok := c.(discovery.StaticConfig); ok {
			for _, g := range st {
				for _, t := range g.Targets {
					out = append(out, string(t[model.AddressLabel]))
				}
			}
		}
	}
	return out
}

const scrapeConfigsKey = "datasource.embedded.scrape_configs"
