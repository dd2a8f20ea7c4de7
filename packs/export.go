package packs

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Export formats.
const (
	// FormatRules is a Prometheus rule file (groups:), as Prometheus's
	// rule_files and `promtool check rules` read it.
	FormatRules = "rules"
	// FormatPrometheusRule is a prometheus-operator PrometheusRule
	// manifest (monitoring.coreos.com/v1), as kube-prometheus-stack loads
	// it through its ruleSelector.
	FormatPrometheusRule = "prometheusrule"
	// FormatMimir is a Mimir/Cortex ruler namespace file, as `mimirtool
	// rules load` reads it.
	FormatMimir = "mimir"
)

// Formats lists the export formats.
var Formats = []string{FormatRules, FormatPrometheusRule, FormatMimir, FormatGrafana}

// PrometheusRule's API version and kind.
const (
	PrometheusRuleAPIVersion = "monitoring.coreos.com/v1"
	PrometheusRuleKind       = "PrometheusRule"
)

// ExportOptions configure Export.
type ExportOptions struct {
	// Format is FormatRules, FormatPrometheusRule or FormatMimir.
	Format string
	// Name is the PrometheusRule's metadata.name; it needs exactly one
	// pack. Default "paged-<pack>".
	Name string
	// Namespace is the PrometheusRule's metadata.namespace (none by
	// default: kubectl's current namespace), or the Mimir ruler namespace
	// (default: the pack's name; with several packs it must stay unset,
	// since mimirtool refuses a namespace in two files).
	Namespace string
	// Labels are the PrometheusRule's metadata.labels, for the
	// ruleSelector of kube-prometheus-stack (release: <helm release>).
	Labels map[string]string
	// Generator names what wrote the files, in their first comment:
	// "paged 0.4.0".
	Generator string
}

// Output is one exported file.
type Output struct {
	Pack    string // the pack it holds
	File    string // a file name for it: <pack>.yaml
	Content []byte
}

// Export writes each rendered pack in the format: one Output per pack,
// in the order given. Invalid manifest metadata is an error that names
// the option.
func Export(rs []*Rendered, o ExportOptions) ([]Output, error) {
	if err := o.check(rs); err != nil {
		return nil, err
	}
	out := make([]Output, 0, len(rs))
	if o.Format == FormatGrafana {
		for _, r := range rs {
			d, err := GrafanaDashboard(r)
			if err != nil {
				return nil, err
			}
			b, err := GrafanaJSON(d)
			if err != nil {
				return nil, fmt.Errorf("export %s: %w", r.Pack.Name, err)
			}
			out = append(out, Output{Pack: r.Pack.Name, File: r.Pack.Name + ".json", Content: b})
		}
		return out, nil
	}
	for _, r := range rs {
		groups, err := groupsNode(r)
		if err != nil {
			return nil, err
		}
		root := &yaml.Node{Kind: yaml.MappingNode}
		switch o.Format {
		case FormatRules:
			addPair(root, "groups", groups)
		case FormatPrometheusRule:
			name := o.Name
			if name == "" {
				name = "paged-" + r.Pack.Name
			}
			meta := &yaml.Node{Kind: yaml.MappingNode}
			addPair(meta, "name", str(name))
			if o.Namespace != "" {
				addPair(meta, "namespace", str(o.Namespace))
			}
			if len(o.Labels) > 0 {
				lbls := &yaml.Node{Kind: yaml.MappingNode}
				for _, k := range sortedKeys(o.Labels) {
					addPair(lbls, k, str(o.Labels[k]))
				}
				addPair(meta, "labels", lbls)
			}
			spec := &yaml.Node{Kind: yaml.MappingNode}
			addPair(spec, "groups", groups)
			addPair(root, "apiVersion", str(PrometheusRuleAPIVersion))
			addPair(root, "kind", str(PrometheusRuleKind))
			addPair(root, "metadata", meta)
			addPair(root, "spec", spec)
		case FormatMimir:
			ns := o.Namespace
			if ns == "" {
				ns = r.Pack.Name
			}
			addPair(root, "namespace", str(ns))
			addPair(root, "groups", groups)
		}
		doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}, HeadComment: exportHeader(r, o)}
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return nil, fmt.Errorf("export %s: %w", r.Pack.Name, err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("export %s: %w", r.Pack.Name, err)
		}
		out = append(out, Output{Pack: r.Pack.Name, File: r.Pack.Name + ".yaml", Content: buf.Bytes()})
	}
	return out, nil
}

// Join puts exported files into one stream for standard output: YAML
// documents separated by ---. A Prometheus rule file is one document, so
// for FormatRules the groups of all packs go into one file; a group name
// in two packs is then an error.
func Join(rs []*Rendered, o ExportOptions) ([]byte, error) {
	if o.Format != FormatRules || len(rs) <= 1 {
		outs, err := Export(rs, o)
		if err != nil {
			return nil, err
		}
		var parts [][]byte
		for _, out := range outs {
			parts = append(parts, out.Content)
		}
		if o.Format == FormatGrafana {
			// One JSON document after the other, as jq reads them.
			return bytes.Join(parts, nil), nil
		}
		return bytes.Join(parts, []byte("---\n")), nil
	}
	all := &yaml.Node{Kind: yaml.SequenceNode}
	owner := map[string]string{}
	var names []string
	for _, r := range rs {
		groups, err := groupsNode(r)
		if err != nil {
			return nil, err
		}
		for _, g := range groups.Content {
			if n := mapValue(g, "name"); n != nil {
				if prev, dup := owner[n.Value]; dup {
					return nil, fmt.Errorf("group %s is in packs %s and %s: a rule file cannot hold both; write one file per pack with -o DIR", n.Value, prev, r.Pack.Name)
				}
				owner[n.Value] = r.Pack.Name
			}
		}
		all.Content = append(all.Content, groups.Content...)
		names = append(names, r.Pack.Name)
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	addPair(root, "groups", all)
	var head []string
	for _, r := range rs {
		head = append(head, exportHeader(r, o))
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}, HeadComment: strings.Join(head, "\n")}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("export %s: %w", strings.Join(names, ", "), err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (o ExportOptions) check(rs []*Rendered) error {
	var errs []error
	if !slices.Contains(Formats, o.Format) {
		errs = append(errs, fmt.Errorf("format %q: want one of %s", o.Format, strings.Join(Formats, ", ")))
	}
	if len(rs) == 0 {
		errs = append(errs, errors.New("no pack to export"))
	}
	switch o.Format {
	case FormatPrometheusRule:
		if o.Name != "" {
			if len(rs) > 1 {
				errs = append(errs, fmt.Errorf("--name names one manifest, but %d packs are exported (each gets paged-<pack>)", len(rs)))
			}
			for _, msg := range validation.IsDNS1123Subdomain(o.Name) {
				errs = append(errs, fmt.Errorf("name %q: %s", o.Name, msg))
			}
		} else {
			for _, r := range rs {
				name := "paged-" + r.Pack.Name
				for _, msg := range validation.IsDNS1123Subdomain(name) {
					errs = append(errs, fmt.Errorf("manifest name %q (from pack %s): %s; set one with --name", name, r.Pack.Name, msg))
				}
			}
		}
		if o.Namespace != "" {
			for _, msg := range validation.IsDNS1123Label(o.Namespace) {
				errs = append(errs, fmt.Errorf("namespace %q: %s", o.Namespace, msg))
			}
		}
		for _, k := range sortedKeys(o.Labels) {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, fmt.Errorf("label %q: %s", k, msg))
			}
			for _, msg := range validation.IsValidLabelValue(o.Labels[k]) {
				errs = append(errs, fmt.Errorf("label %s=%q: %s", k, o.Labels[k], msg))
			}
		}
	case FormatMimir:
		if o.Namespace != "" && len(rs) > 1 {
			errs = append(errs, fmt.Errorf("--namespace gives %d packs the same ruler namespace, which mimirtool refuses across files; leave it unset (each pack is its own namespace) or export one pack at a time", len(rs)))
		}
		if o.Name != "" || len(o.Labels) > 0 {
			errs = append(errs, errors.New("--name and manifest labels are for --format prometheusrule"))
		}
	case FormatRules, FormatGrafana:
		if o.Name != "" || o.Namespace != "" || len(o.Labels) > 0 {
			errs = append(errs, errors.New("--name, --namespace and manifest labels are for --format prometheusrule (and --namespace for mimir)"))
		}
	}
	return errors.Join(errs...)
}

// groupsNode returns the groups: list of a rendered pack, parsed afresh.
func groupsNode(r *Rendered) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(r.Content, &doc); err != nil {
		return nil, fmt.Errorf("export %s: %w", r.Pack.Name, err)
	}
	g := mapValue(docMapping(&doc), "groups")
	if g == nil || g.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("export %s: no groups", r.Pack.Name)
	}
	return g, nil
}

func exportHeader(r *Rendered, o ExportOptions) string {
	gen := "paged export"
	if o.Generator != "" {
		gen = "paged export (" + o.Generator + ")"
	}
	return comment(fmt.Sprintf("Generated by %s --format %s.\n%sDo not edit: change the pack's overrides and export again.",
		gen, o.Format, r.Pack.header(r.Overrides)))
}

func addPair(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
