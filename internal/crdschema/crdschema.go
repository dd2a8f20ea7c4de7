// Package crdschema validates Kubernetes objects against the
// openAPIV3Schema of a CustomResourceDefinition, as the API server does on
// `kubectl apply --validate=strict`, for the schema keywords
// prometheus-operator's CRDs use. A keyword it does not implement is an
// error, never skipped, so a check can only pass when every constraint of
// the schema was applied. metadata is checked as the API server checks
// ObjectMeta: name, namespace, label keys and values.
package crdschema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Schema is one served version of a CRD.
type Schema struct {
	Group, Kind, Version string
	root                 map[string]any
}

// Load reads a CRD manifest and returns the schema of version.
func Load(crd []byte, version string) (*Schema, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(crd, &doc); err != nil {
		return nil, fmt.Errorf("CRD: %w", err)
	}
	if doc["kind"] != "CustomResourceDefinition" {
		return nil, fmt.Errorf("CRD: kind is %v, not CustomResourceDefinition", doc["kind"])
	}
	spec, _ := doc["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	s := &Schema{Version: version}
	s.Group, _ = spec["group"].(string)
	s.Kind, _ = names["kind"].(string)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if vm["name"] != version {
			continue
		}
		schema, _ := vm["schema"].(map[string]any)
		s.root, _ = schema["openAPIV3Schema"].(map[string]any)
	}
	if s.root == nil {
		return nil, fmt.Errorf("CRD %s: no openAPIV3Schema for version %s", s.Kind, version)
	}
	return s, nil
}

// ValidateYAML validates every document of a YAML stream. Documents of
// another apiVersion or kind are errors too.
func (s *Schema) ValidateYAML(data []byte) []error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var errs []error
	for i := 0; ; i++ {
		var obj any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return append(errs, fmt.Errorf("document %d: %w", i, err))
		}
		if obj == nil {
			continue
		}
		for _, e := range s.Validate(obj) {
			errs = append(errs, fmt.Errorf("document %d: %w", i, e))
		}
	}
	return errs
}

// Validate validates one decoded object.
func (s *Schema) Validate(obj any) []error {
	v := &validator{}
	m, ok := obj.(map[string]any)
	if !ok {
		return []error{errors.New("the object is not a mapping")}
	}
	if want := s.Group + "/" + s.Version; m["apiVersion"] != want {
		v.errorf("apiVersion", "is %v, want %s", m["apiVersion"], want)
	}
	if m["kind"] != s.Kind {
		v.errorf("kind", "is %v, want %s", m["kind"], s.Kind)
	}
	v.metadata(m["metadata"])
	v.validate("", s.root, obj)
	return v.errs
}

type validator struct{ errs []error }

func (v *validator) errorf(path, format string, args ...any) {
	if path == "" {
		path = "<root>"
	}
	v.errs = append(v.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

// known are the schema keywords implemented below.
var known = []string{
	"description", "type", "properties", "additionalProperties", "items", "required",
	"pattern", "minLength", "maxLength", "enum", "anyOf", "format", "minimum", "maximum",
	"x-kubernetes-int-or-string", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
}

func (v *validator) validate(path string, schema map[string]any, val any) {
	for k := range schema {
		if !slices.Contains(known, k) {
			v.errorf(path, "schema keyword %q is not implemented by this validator", k)
		}
	}
	if alts, ok := schema["anyOf"].([]any); ok {
		matched := false
		for _, alt := range alts {
			sub := &validator{}
			if am, ok := alt.(map[string]any); ok {
				sub.validate(path, am, val)
			}
			if len(sub.errs) == 0 {
				matched = true
			}
		}
		if !matched {
			v.errorf(path, "matches none of anyOf")
		}
	}
	typ, _ := schema["type"].(string)
	if schema["x-kubernetes-int-or-string"] == true {
		if !isInt(val) && !isString(val) {
			v.errorf(path, "must be an integer or a string")
		}
	} else if typ != "" && !hasType(val, typ) {
		v.errorf(path, "must be of type %s, got %T", typ, val)
		return
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, val) {
		v.errorf(path, "%v is not one of %v", val, enum)
	}
	switch x := val.(type) {
	case string:
		if n, ok := number(schema["minLength"]); ok && float64(len([]rune(x))) < n {
			v.errorf(path, "shorter than %v characters", n)
		}
		if n, ok := number(schema["maxLength"]); ok && float64(len([]rune(x))) > n {
			v.errorf(path, "longer than %v characters", n)
		}
		if p, ok := schema["pattern"].(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				v.errorf(path, "schema pattern %q: %v", p, err)
			} else if !re.MatchString(x) {
				v.errorf(path, "%q does not match %s", x, p)
			}
		}
		if f, ok := schema["format"].(string); ok {
			v.format(path, f, x)
		}
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		addl, hasAddl := schema["additionalProperties"].(map[string]any)
		for _, r := range asStrings(schema["required"]) {
			if _, ok := x[r]; !ok {
				v.errorf(join(path, r), "is required")
			}
		}
		for _, k := range sortedKeys(x) {
			switch sub, ok := props[k].(map[string]any); {
			case ok:
				v.validate(join(path, k), sub, x[k])
			case hasAddl:
				v.validate(join(path, k), addl, x[k])
			case props == nil && !hasAddl:
				// type: object without properties keeps any field
				// (metadata, which metadata checks).
			default:
				v.errorf(join(path, k), "unknown field")
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i, it := range x {
			if items != nil {
				v.validate(fmt.Sprintf("%s[%d]", path, i), items, it)
			}
		}
		if schema["x-kubernetes-list-type"] == "map" {
			keys := asStrings(schema["x-kubernetes-list-map-keys"])
			seen := map[string]int{}
			for i, it := range x {
				im, _ := it.(map[string]any)
				var parts []string
				for _, k := range keys {
					parts = append(parts, fmt.Sprint(im[k]))
				}
				id := strings.Join(parts, "/")
				if j, dup := seen[id]; dup {
					v.errorf(fmt.Sprintf("%s[%d]", path, i), "duplicate entry with %v %q (also at [%d])", keys, id, j)
				}
				seen[id] = i
			}
		}
	case int, int64, uint64, float64:
		n, _ := number(x)
		if lo, ok := number(schema["minimum"]); ok && n < lo {
			v.errorf(path, "%v is less than %v", n, lo)
		}
		if hi, ok := number(schema["maximum"]); ok && n > hi {
			v.errorf(path, "%v is more than %v", n, hi)
		}
		if f, ok := schema["format"].(string); ok && f == "int64" && (n != math.Trunc(n)) {
			v.errorf(path, "not an int64")
		}
	}
}

func (v *validator) format(path, f, s string) {
	switch f {
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			v.errorf(path, "%q is not a date-time", s)
		}
	default:
		v.errorf(path, "format %q is not implemented by this validator", f)
	}
}

// metadata checks ObjectMeta as the API server does for the fields a
// generated manifest sets.
func (v *validator) metadata(val any) {
	m, ok := val.(map[string]any)
	if !ok {
		v.errorf("metadata", "is required and must be a mapping")
		return
	}
	name, _ := m["name"].(string)
	if name == "" {
		v.errorf("metadata.name", "is required")
	}
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		v.errorf("metadata.name", "%q: %s", name, msg)
	}
	if ns, ok := m["namespace"]; ok {
		s, _ := ns.(string)
		for _, msg := range validation.IsDNS1123Label(s) {
			v.errorf("metadata.namespace", "%q: %s", s, msg)
		}
	}
	for _, key := range []string{"labels", "annotations"} {
		raw, ok := m[key]
		if !ok {
			continue
		}
		lm, ok := raw.(map[string]any)
		if !ok {
			v.errorf("metadata."+key, "must be a mapping of strings")
			continue
		}
		for _, k := range sortedKeys(lm) {
			for _, msg := range validation.IsQualifiedName(k) {
				v.errorf("metadata."+key+"."+k, "%s", msg)
			}
			s, ok := lm[k].(string)
			if !ok {
				v.errorf("metadata."+key+"."+k, "must be a string")
				continue
			}
			if key == "labels" {
				for _, msg := range validation.IsValidLabelValue(s) {
					v.errorf("metadata.labels."+k, "%s", msg)
				}
			}
		}
	}
	for _, k := range sortedKeys(m) {
		switch k {
		case "name", "namespace", "labels", "annotations", "generateName":
		default:
			v.errorf("metadata."+k, "not set by hand in a manifest")
		}
	}
}

func hasType(val any, typ string) bool {
	switch typ {
	case "object":
		_, ok := val.(map[string]any)
		return ok
	case "array":
		_, ok := val.([]any)
		return ok
	case "string":
		return isString(val)
	case "integer":
		return isInt(val)
	case "number":
		_, ok := number(val)
		return ok
	case "boolean":
		_, ok := val.(bool)
		return ok
	}
	return false
}

func isString(val any) bool { _, ok := val.(string); return ok }

func isInt(val any) bool {
	switch val.(type) {
	case int, int64, uint64:
		return true
	}
	return false
}

func number(val any) (float64, bool) {
	switch x := val.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func asStrings(val any) []string {
	l, _ := val.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
