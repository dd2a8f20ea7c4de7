package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alecthomas/units"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// decoder walks a paged.yaml node tree once. It never stops at the first
// problem: every check records a Problem and the walk goes on, so a user
// sees everything that is wrong in one run.
type decoder struct {
	file     string
	data     []byte // the file's content, to place errors inside values
	problems []Problem
	// fromEnv marks scalars whose value came from ${ENV} expansion. Their
	// values may be secrets and are never quoted in a message.
	fromEnv map[*yaml.Node]bool
	// failed marks scalars whose expansion failed; they are not checked
	// again, so one mistake gives one problem.
	failed map[*yaml.Node]bool
}

func (d *decoder) errorf(n *yaml.Node, key, format string, args ...any) {
	p := Problem{File: d.file, Key: key, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	d.problems = append(d.problems, p)
}

// quote shows a scalar's value in a message, unless it came from the
// environment.
func (d *decoder) quote(n *yaml.Node) string {
	if d.fromEnv[n] {
		return "(value from environment)"
	}
	v := n.Value
	if len(v) > 80 {
		v = v[:80] + "..."
	}
	return strconv.Quote(v)
}

// expand replaces ${ENV} in every scalar value of the tree (keys are left
// alone). Expanded plain scalars lose their resolved tag, so "${PORT}" can
// become an integer.
func (d *decoder) expand(n *yaml.Node, getenv func(string) string, key string) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			k := key
			if n.Kind == yaml.SequenceNode {
				k = fmt.Sprintf("%s[%d]", key, i)
			}
			d.expand(c, getenv, k)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			d.expand(n.Content[i+1], getenv, joinKey(key, n.Content[i].Value))
		}
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "${") {
			return
		}
		v, err := expandEnv(n.Value, getenv)
		if strings.HasPrefix(key, scrapeConfigsKey) {
			// In a scrape config, relabelling's ${1} is a regex group.
			v, err = expandEnvKeepGroups(n.Value, getenv)
		}
		if err != nil {
			d.errorf(n, key, "%v", err)
			d.failed[n] = true
			return
		}
		if v != n.Value {
			n.Value = v
			d.fromEnv[n] = true
			if n.Style == 0 || n.Style == yaml.TaggedStyle {
				n.Tag = ""
			}
		}
	}
}

func joinKey(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// field is one key a mapping accepts and how its value is decoded.
type field struct {
	name   string
	decode func(n *yaml.Node, key string)
}

// isNull reports whether n is absent or an explicit null, which leaves the
// default in place.
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		}
		return "a string"
	}
	return "an unexpected node"
}

// mapping decodes a mapping node with the given fields, rejecting unknown
// and duplicate keys.
func (d *decoder) mapping(n *yaml.Node, key string, fields ...field) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, key, "expected a mapping, got %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			d.errorf(k, joinKey(key, k.Value), "duplicate key")
			continue
		}
		seen[k.Value] = true
		idx := slices.IndexFunc(fields, func(f field) bool { return f.name == k.Value })
		if idx < 0 {
			names := make([]string, len(fields))
			for j, f := range fields {
				names[j] = f.name
			}
			d.errorf(k, joinKey(key, k.Value), "unknown key (valid keys here: %s)", strings.Join(names, ", "))
			continue
		}
		v = resolve(v)
		if isNull(v) || d.failed[v] {
			continue
		}
		fields[idx].decode(v, joinKey(key, k.Value))
	}
}

// scalar returns the value of a scalar node, or records a problem.
func (d *decoder) scalar(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, key, "expected a string, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) str(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if v, ok := d.scalar(n, key); ok {
			*dst = v
		}
	}
}

func (d *decoder) oneOf(dst *string, values ...string) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		if !slices.Contains(values, v) {
			d.errorf(n, key, "must be one of %s, got %s", strings.Join(values, ", "), d.quote(n))
			return
		}
		*dst = v
	}
}

// duration parses a Prometheus duration ("30s", "1m30s", "2h"). Zero is
// rejected unless allowZero.
func (d *decoder) duration(dst *time.Duration, allowZero bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		md, err := model.ParseDuration(v)
		if err != nil {
			d.errorf(n, key, "invalid duration %s (use Prometheus durations such as 30s, 5m, 1h)", d.quote(n))
			return
		}
		if md == 0 && !allowZero {
			d.errorf(n, key, "must be greater than 0")
			return
		}
		*dst = time.Duration(md)
	}
}

// boolean parses true or false (YAML 1.2: no yes/no/on/off).
func (d *decoder) boolean(dst *bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			d.errorf(n, key, "expected true or false, got %s", kindName(n))
			return
		}
		*dst = n.Value == "true"
	}
}

func (d *decoder) positiveInt(dst *int) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			d.errorf(n, key, "expected a whole number, got %s", kindName(n))
			return
		}
		v, err := strconv.Atoi(n.Value)
		if err != nil || v <= 0 {
			d.errorf(n, key, "must be a whole number greater than 0")
			return
		}
		*dst = v
	}
}

// maxByteSize keeps a size within what an int holds on any platform, so
// web.max_header_bytes fits http.Server.MaxHeaderBytes.
const maxByteSize = 1<<31 - 1

// byteSize parses a size in bytes: a whole number, or a number with a
// base-2 unit as Prometheus writes them ("512KiB", "4MiB", "1GiB"; "KB" and
// "MB" are base 2 too). It must be greater than 0.
func (d *decoder) byteSize(dst *int64) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, key, "expected a size such as 4MiB, got %s", kindName(n))
			return
		}
		v, err := parseSize(n.Value)
		switch {
		case err != nil:
			d.errorf(n, key, "invalid size %s (use bytes or a unit: 512KiB, 4MiB, 1GiB)", d.quote(n))
		case v <= 0:
			d.errorf(n, key, "must be greater than 0")
		case v > maxByteSize:
			d.errorf(n, key, "must be at most 2GiB-1 (%d bytes)", maxByteSize)
		default:
			*dst = v
		}
	}
}

// parseSize reads a size as byteSize and largeByteSize take it: a whole
// number of bytes, or a number with a base-2 unit.
func parseSize(text string) (int64, error) {
	text = strings.TrimSpace(text)
	if v, err := strconv.ParseInt(text, 10, 64); err == nil {
		return v, nil
	}
	b, err := units.ParseBase2Bytes(text)
	return int64(b), err
}

// minHistoryBytes is the smallest storage.history.max_bytes: below it the
// history could not hold a day of a quiet paged.
const minHistoryBytes = 1 << 20

// largeByteSize parses a size in bytes as byteSize does, with no upper
// bound, and at least min bytes (for files, not buffers).
func (d *decoder) largeByteSize(dst *int64, min int64) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, key, "expected a size such as 1GiB, got %s", kindName(n))
			return
		}
		v, err := parseSize(n.Value)
		switch {
		case err != nil:
			d.errorf(n, key, "invalid size %s (use bytes or a unit: 512MiB, 1GiB, 10GiB)", d.quote(n))
		case v < min:
			d.errorf(n, key, "must be at least %s (%d bytes)", units.Base2Bytes(min), min)
		default:
			*dst = v
		}
	}
}

// httpURL parses an absolute http(s) URL. The value is never quoted in a
// message: URLs carry tokens and passwords.
func (d *decoder) httpURL(dst **url.URL) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		u, err := parseHTTPURL(v)
		if err != nil {
			d.errorf(n, key, "invalid URL: %v", err)
			return
		}
		*dst = u
	}
}

func parseHTTPURL(v string) (*url.URL, error) {
	u, err := url.Parse(v)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL; keep only the reason
		}
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("scheme must be http or https")
	}
	if u.Host == "" {
		return nil, errors.New("missing host")
	}
	return u, nil
}

func (d *decoder) hostPort(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			d.errorf(n, key, "expected host:port, got %s", d.quote(n))
			return
		}
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			d.errorf(n, key, "invalid port in %s", d.quote(n))
			return
		}
		*dst = v
	}
}

// list decodes a sequence, calling each for every element.
func (d *decoder) list(each func(n *yaml.Node, key string)) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, key, "expected a list, got %s", kindName(n))
			return
		}
		for i, c := range n.Content {
			each(resolve(c), fmt.Sprintf("%s[%d]", key, i))
		}
	}
}

// labelSet decodes a mapping of label names to values, validated as
// Prometheus 3 does (UTF-8 names; names starting with __ are reserved).
func (d *decoder) labelSet(dst *map[string]string) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind != yaml.MappingNode {
			d.errorf(n, key, "expected a mapping of label names to values, got %s", kindName(n))
			return
		}
		m := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], resolve(n.Content[i+1])
			lk := joinKey(key, k.Value)
			switch {
			case k.Value == "" || !utf8.ValidString(k.Value):
				d.errorf(k, lk, "invalid label name")
				continue
			case strings.HasPrefix(k.Value, "__"):
				d.errorf(k, lk, "label names starting with __ are reserved")
				continue
			case !model.LabelName(k.Value).IsValid():
				d.errorf(k, lk, "invalid label name")
				continue
			}
			if _, dup := m[k.Value]; dup {
				d.errorf(k, lk, "duplicate label")
				continue
			}
			if v.Kind != yaml.ScalarNode || isNull(v) {
				d.errorf(v, lk, "label value must be a string, got %s", kindName(v))
				continue
			}
			if !utf8.ValidString(v.Value) {
				d.errorf(v, lk, "label value is not valid UTF-8")
				continue
			}
			m[k.Value] = v.Value
		}
		*dst = m
	}
}

// checkKeys rejects mapping keys that the Go type t (a struct with yaml
// tags, as in prometheus/common's HTTPClientConfig) does not declare, so a
// typo inside a library-defined block is reported with its position too.
func (d *decoder) checkKeys(n *yaml.Node, t reflect.Type, key string) {
	n = resolve(n)
	if n == nil || isNull(n) {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return // the decoder reports the type error
		}
		known := map[string]reflect.Type{}
		var anyKey reflect.Type
		collectYAMLKeys(t, known, &anyKey)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if ft, ok := known[k.Value]; ok {
				d.checkKeys(v, ft, joinKey(key, k.Value))
				continue
			}
			if anyKey != nil {
				d.checkKeys(v, anyKey, joinKey(key, k.Value))
				continue
			}
			names := make([]string, 0, len(known))
			for name := range known {
				names = append(names, name)
			}
			slices.Sort(names)
			d.errorf(k, joinKey(key, k.Value), "unknown key (valid keys here: %s)", strings.Join(names, ", "))
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			d.checkKeys(n.Content[i+1], t.Elem(), joinKey(key, n.Content[i].Value))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range n.Content {
			d.checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i))
		}
	}
}

// collectYAMLKeys lists the keys a struct accepts, following inline fields.
// An inline map accepts any key; its element type is stored in anyKey.
func collectYAMLKeys(t reflect.Type, known map[string]reflect.Type, anyKey *reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch ft.Kind() {
			case reflect.Struct:
				collectYAMLKeys(ft, known, anyKey)
			case reflect.Map:
				*anyKey = ft.Elem()
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		known[name] = f.Type
	}
}
