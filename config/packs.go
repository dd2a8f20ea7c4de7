package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/packs"
	"github.com/pagedhq/paged/rules"
)

// PackConfig is one entry of paged.yaml's packs: block: a built-in pack or
// a pack directory, with its overrides applied.
type PackConfig struct {
	// Name is the entry's name: a built-in pack, or a path to a pack
	// directory as written.
	Name      string
	Overrides packs.Overrides
	// Rendered is the pack with the overrides applied: what the engine
	// loads, under Rendered.Source ("pack:vllm").
	Rendered *packs.Rendered
}

// packNodes keeps where each override was written, for positioned errors.
type packNodes struct {
	name, selector *yaml.Node
	// keys and values of the set, for, severity and labels mappings.
	keys, values map[string]map[string]*yaml.Node
	disable      []*yaml.Node
}

// packsBlock decodes packs:, resolves every pack and applies its
// overrides; every problem is reported at the key or value it is about.
func (d *decoder) packsBlock(n *yaml.Node, key, dir string, cfg *Config) {
	seen := map[string]string{} // pack name -> key of the entry that loaded it
	d.list(func(n *yaml.Node, key string) {
		if n.Kind == yaml.ScalarNode && !isNull(n) {
			// `- vllm` is short for `- name: vllm`.
			n = &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column,
				Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "name", Line: n.Line, Column: n.Column}, n}}
		}
		pc := &PackConfig{}
		nodes := &packNodes{keys: map[string]map[string]*yaml.Node{}, values: map[string]map[string]*yaml.Node{}}
		before := len(d.problems)
		o := &pc.Overrides
		d.mapping(n, key,
			field{"name", func(n *yaml.Node, key string) {
				nodes.name = n
				if v, ok := d.scalar(n, key); ok {
					if v == "" {
						d.errorf(n, key, "must not be empty: a built-in pack (%s) or a path to a pack directory", joinNames(packs.BuiltinNames()))
						return
					}
					pc.Name = v
				}
			}},
			field{packs.KeySelector, func(n *yaml.Node, key string) {
				nodes.selector = n
				d.str(&o.Selector)(n, key)
			}},
			field{packs.KeySet, d.alertMap(nodes, packs.KeySet, func(n *yaml.Node, key, alert string) {
				v, ok := d.number(n, key)
				if ok {
					if o.Set == nil {
						o.Set = map[string]float64{}
					}
					o.Set[alert] = v
				}
			})},
			field{packs.KeyFor, d.alertMap(nodes, packs.KeyFor, func(n *yaml.Node, key, alert string) {
				v, ok := d.scalar(n, key)
				if !ok {
					return
				}
				md, err := model.ParseDuration(v)
				if err != nil {
					d.errorf(n, key, "invalid duration %s (use Prometheus durations such as 30s, 5m, 1h)", d.quote(n))
					return
				}
				if o.For == nil {
					o.For = map[string]model.Duration{}
				}
				o.For[alert] = md
			})},
			field{packs.KeySeverity, d.alertMap(nodes, packs.KeySeverity, func(n *yaml.Node, key, alert string) {
				if v, ok := d.scalar(n, key); ok {
					if o.Severity == nil {
						o.Severity = map[string]string{}
					}
					o.Severity[alert] = v
				}
			})},
			field{packs.KeyLabels, func(n *yaml.Node, key string) {
				d.labelSet(&o.Labels)(n, key)
				d.recordPairs(nodes, packs.KeyLabels, n)
			}},
			field{packs.KeyDisable, d.list(func(n *yaml.Node, key string) {
				if v, ok := d.scalar(n, key); ok {
					o.Disable = append(o.Disable, v)
					nodes.disable = append(nodes.disable, n)
				}
			})},
		)
		if nodes.name == nil && n.Kind == yaml.MappingNode {
			d.errorf(n, key+".name", "required: a built-in pack (%s) or a path to a pack directory", joinNames(packs.BuiltinNames()))
			return
		}
		if pc.Name == "" {
			return
		}
		// With problems above, the overrides that did decode are still
		// applied, so that every problem of the entry shows in one run.
		decoded := len(d.problems) == before
		p, err := packs.Resolve(pc.Name, dir)
		if err != nil {
			d.packLoadError(nodes.name, key+".name", err)
			return
		}
		if prev, dup := seen[p.Name]; dup {
			d.errorf(nodes.name, key+".name", "pack %s is already loaded by %s: its alerts would fire twice (a selector can match several jobs)", p.Name, prev)
			return
		}
		seen[p.Name] = key
		r, err := p.Apply(pc.Overrides)
		if err != nil {
			d.overrideErrors(nodes, key, err)
			return
		}
		if decoded {
			pc.Rendered = r
			cfg.Packs = append(cfg.Packs, pc)
		}
	})(n, key)
}

// alertMap decodes a mapping of alert names to values.
func (d *decoder) alertMap(nodes *packNodes, which string, each func(n *yaml.Node, key, alert string)) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind != yaml.MappingNode {
			d.errorf(n, key, "expected a mapping of alert names to values, got %s", kindName(n))
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], resolve(n.Content[i+1])
			ak := joinKey(key, k.Value)
			if seen[k.Value] {
				d.errorf(k, ak, "duplicate key")
				continue
			}
			seen[k.Value] = true
			if isNull(v) {
				d.errorf(v, ak, "missing value")
				continue
			}
			each(v, ak, k.Value)
		}
		d.recordPairs(nodes, which, n)
	}
}

func (d *decoder) recordPairs(nodes *packNodes, which string, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	keys, values := map[string]*yaml.Node{}, map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys[n.Content[i].Value] = n.Content[i]
		values[n.Content[i].Value] = resolve(n.Content[i+1])
	}
	nodes.keys[which], nodes.values[which] = keys, values
}

// number decodes a YAML number (a threshold).
func (d *decoder) number(n *yaml.Node, key string) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		d.errorf(n, key, "expected a number, got %s", kindName(n))
		return 0, false
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		// YAML spellings strconv does not take: .inf, .nan, 0x10, 1_000.
		var f float64
		if derr := n.Decode(&f); derr != nil {
			d.errorf(n, key, "invalid number %s", d.quote(n))
			return 0, false
		}
		v = f
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(n, key, "threshold %s: want a finite number", d.quote(n))
		return 0, false
	}
	return v, true
}

// packLoadError reports a pack that cannot be loaded: problems in its
// files at their own positions, anything else at the name.
func (d *decoder) packLoadError(n *yaml.Node, key string, err error) {
	var le *packs.LoadError
	if !errors.As(err, &le) {
		d.errorf(n, key, "%v", err)
		return
	}
	if le.Err != nil {
		d.errorf(n, key, "pack %s: %v", le.Dir, le.Err)
	}
	for _, f := range le.Findings {
		d.problems = append(d.problems, Problem{
			File: f.Path, Line: f.Range.Start.Line, Column: f.Range.Start.Column,
			Message: fmt.Sprintf("%s [%s] %s", f.Severity, f.Check, f.Message),
		})
	}
	if len(le.Findings) > 0 && le.Err == nil {
		d.errorf(n, key, "pack %s does not load: %d problem(s) in its files", le.Dir, len(le.Findings))
	}
}

// overrideErrors reports the overrides a pack refused, each at the node
// it is about.
func (d *decoder) overrideErrors(nodes *packNodes, key string, err error) {
	var es packs.Errors
	if !errors.As(err, &es) {
		d.errorf(nodes.name, key+".name", "%v", err)
		return
	}
	for _, e := range es {
		at, k := nodes.name, key
		switch e.Key {
		case packs.KeySelector:
			at, k = nodes.selector, key+"."+packs.KeySelector
			if at != nil && e.Offset >= 0 && !d.fromEnv[at] {
				pos := rules.ScalarPos(d.data, at, e.Offset)
				d.problems = append(d.problems, Problem{File: d.file, Line: pos.Line, Column: pos.Column, Key: k, Message: e.Msg})
				continue
			}
		case packs.KeyDisable:
			k = fmt.Sprintf("%s.%s[%d]", key, packs.KeyDisable, e.Index)
			if e.Index < len(nodes.disable) {
				at = nodes.disable[e.Index]
			}
		default:
			k = key + "." + e.Key + "." + e.Name
			src := nodes.keys[e.Key]
			if e.Value {
				src = nodes.values[e.Key]
			}
			if n := src[e.Name]; n != nil {
				at = n
			}
		}
		d.errorf(at, k, "%s", e.Msg)
	}
}

func joinNames(names []string) string { return strings.Join(names, ", ") }

// PackSources returns the packs of the configuration, overrides applied,
// as the engine loads them beside the rule files.
func (c *Config) PackSources() []engine.RuleSource {
	out := make([]engine.RuleSource, 0, len(c.Packs))
	for _, p := range c.Packs {
		src := engine.RuleSource{Name: p.Rendered.Source, Groups: p.Rendered.RuleGroups()}
		if c.GrafanaURL != nil {
			addDashboardURLs(src.Groups, p.Rendered, c.GrafanaURL)
		}
		if ms, err := packs.ParseSelector(p.Overrides.Selector); err == nil && p.Overrides.Selector != "" {
			for _, m := range ms {
				src.KeepLabels = append(src.KeepLabels, m.Name)
			}
		}
		out = append(out, src)
	}
	return out
}
