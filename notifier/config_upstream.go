package notifier

import (
	"errors"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	amconfig "github.com/prometheus/alertmanager/config"
	commoncfg "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v3"
)

// Receivers other than Slack and webhooks (PagerDuty, Opsgenie, email,
// Microsoft Teams and every other type in Alertmanager's notify/
// packages) are Alertmanager's: their YAML goes to Alertmanager's config
// package unchanged, which applies its defaults, the `global:` block's
// smtp_* and *_api_url settings, and its validation. paged only positions
// the problems: each `<type>_configs` item is loaded on its own, so an
// error names the item's line and column, and every broken item is
// reported in one pass.

// upstreamKeys are the `<type>_configs` keys of Alertmanager's receiver
// that paged hands to Alertmanager (all but slack_configs and
// webhook_configs, which paged implements itself).
var upstreamKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[amconfig.Receiver]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if strings.HasSuffix(name, "_configs") && name != "slack_configs" && name != "webhook_configs" {
			keys[name] = true
		}
	}
	return keys
})

// UpstreamTypes lists the receiver types paged builds from Alertmanager's
// notify/ packages, as their `<type>_configs` keys.
func UpstreamTypes() []string {
	var out []string
	for k := range upstreamKeys() {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// upstreamReceiverName is the receiver's name in the documents paged
// gives Alertmanager's config package; it never reaches a message.
const upstreamReceiverName = "paged"

// upstreamDoc is an alertmanager.yml with the global block, a route to
// one receiver and that receiver's items.
func upstreamDoc(global *yaml.Node, key string, items ...*yaml.Node) *yaml.Node {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	if global != nil {
		doc.Content = append(doc.Content, str("global"), global)
	}
	recv := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("name"), str(upstreamReceiverName)}}
	if key != "" {
		recv.Content = append(recv.Content, str(key), &yaml.Node{Kind: yaml.SequenceNode, Content: items})
	}
	doc.Content = append(doc.Content,
		str("route"), &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("receiver"), str(upstreamReceiverName)}},
		str("receivers"), &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{recv}},
	)
	return doc
}

// loadUpstream lets Alertmanager's config package load doc and maps its
// errors back to the nodes of paged.yaml; at is where an error without a
// line is reported, prefix names what it concerns.
func loadUpstream(doc, at *yaml.Node, prefix string) (*amconfig.Config, error) {
	text, err := yaml.Marshal(doc)
	if err != nil {
		return nil, posErr(at, "%s: %v", prefix, err)
	}
	am, err := loadAM(string(text))
	if err == nil {
		return am, nil
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	locs := amLineRe.FindAllStringSubmatchIndex(msg, -1)
	if locs == nil {
		return nil, posErr(at, "%s: %s", prefix, redactYAMLValue(msg))
	}
	lines := lineMap(doc, text)
	var errs []error
	for i, loc := range locs {
		end := len(msg)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		line, _ := strconv.Atoi(msg[loc[2]:loc[3]])
		text := redactYAMLValue(strings.TrimSpace(msg[loc[1]:end]))
		n := at
		if ln, ok := lines[line]; ok {
			n = ln
		}
		// Point at the value yaml names by its line, where there is one.
		e := &PosError{Line: n.Line, Column: n.Column, Msg: prefix + ": " + text}
		if c := valueColumn(at, n.Line); c != 1 {
			e.Column = c
		}
		errs = append(errs, e)
	}
	return nil, errors.Join(errs...)
}

// redactYAMLValue drops the value yaml v2 quotes in a type error
// ("cannot unmarshal !!str `xoxb-…` into …"): it may be a secret put
// under the wrong key.
func redactYAMLValue(msg string) string {
	for {
		i := strings.Index(msg, "`")
		if i < 0 {
			return msg
		}
		j := strings.Index(msg[i+1:], "`")
		if j < 0 {
			return msg
		}
		msg = msg[:i] + "<value>" + msg[i+1+j+1:]
	}
}

// decodeGlobal validates the `global:` block of the notifier, Alertmanager's
// own (smtp_*, *_api_url, http_config...), which gives defaults to the
// Alertmanager receivers. It returns the node to hand on with each item,
// nil when the block is missing or broken.
func decodeGlobal(k, v *yaml.Node) (*yaml.Node, error) {
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, posErr(v, "global: expected a mapping")
	}
	if _, err := loadUpstream(upstreamDoc(v, ""), k, "global"); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeUpstream loads the items of one `<type>_configs` key of a receiver
// with Alertmanager's config package and appends them to r.Upstream.
func decodeUpstream(r *Receiver, global, k, v *yaml.Node) []error {
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return []error{posErr(v, "%s: expected a list", k.Value)}
	}
	var errs []error
	for _, item := range v.Content {
		if item.Kind != yaml.MappingNode {
			errs = append(errs, posErr(item, "%s: expected a mapping", k.Value))
			continue
		}
		am, err := loadUpstream(upstreamDoc(global, k.Value, item), item, k.Value)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		appendUpstream(&r.Upstream, &am.Receivers[0])
	}
	return errs
}

// appendUpstream appends every integration of src to dst.
func appendUpstream(dst, src *amconfig.Receiver) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range d.NumField() {
		if f := d.Field(i); f.Kind() == reflect.Slice {
			f.Set(reflect.AppendSlice(f, s.Field(i)))
		}
	}
}

// upstreamCount is the number of Alertmanager integrations of r.
func upstreamCount(r *amconfig.Receiver) int {
	n := 0
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Slice {
			n += f.Len()
		}
	}
	return n
}

// AlertmanagerVersion is the version of Alertmanager whose configuration
// syntax and integrations paged embeds ("v0.35.0").
var AlertmanagerVersion = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/prometheus/alertmanager" {
				return m.Version
			}
		}
	}
	return "v0.35"
}()

// SetUpstreamDirectory makes the relative paths of the Alertmanager
// integrations (every `*_file` field, http_config and tls_config files)
// relative to dir, the configuration file's directory, as Alertmanager's
// LoadFile does for alertmanager.yml.
func (r *Receiver) SetUpstreamDirectory(dir string) {
	v := reflect.ValueOf(&r.Upstream).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Slice {
			for j := range f.Len() {
				setDirectory(f.Index(j), dir)
			}
		}
	}
}

var (
	httpConfigType = reflect.TypeFor[commoncfg.HTTPClientConfig]()
	tlsConfigType  = reflect.TypeFor[commoncfg.TLSConfig]()
)

func setDirectory(v reflect.Value, dir string) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	switch v.Type() {
	case httpConfigType:
		v.Addr().Interface().(*commoncfg.HTTPClientConfig).SetDirectory(dir)
		return
	case tlsConfigType:
		v.Addr().Interface().(*commoncfg.TLSConfig).SetDirectory(dir)
		return
	}
	t := v.Type()
	for i := range t.NumField() {
		f, sf := v.Field(i), t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		switch {
		case f.Kind() == reflect.String && strings.HasSuffix(name, "_file"):
			if p := f.String(); p != "" && !filepath.IsAbs(p) {
				f.SetString(filepath.Join(dir, p))
			}
		case f.Kind() == reflect.Struct || f.Kind() == reflect.Pointer:
			setDirectory(f, dir)
		case f.Kind() == reflect.Slice:
			for j := range f.Len() {
				setDirectory(f.Index(j), dir)
			}
		}
	}
}
