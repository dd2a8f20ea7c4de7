package main

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/pagedhq/paged/rules/catalog"
)

// The Python servers (vLLM, SGLang) declare their families with
// prometheus_client constructors, directly (Gauge(name="sglang:...", ...),
// prometheus_client.Counter(...)) or through a class attribute
// (self._gauge_cls(name="vllm:...", ...)). The name is the name= keyword
// or the first positional string; the labels are labelnames=, a list
// literal, a variable assigned a list literal in the same file, or a sum
// of those; anything else (labels.keys()) is not followed and the labels
// are not compared. prometheus_client exposes a counter as <name>_total
// whether or not the source writes the suffix.

var pyCallRe = regexp.MustCompile(`\b(_?(?:gauge|counter|histogram|summary)_cls|Gauge|Counter|Histogram|Summary)\s*\(`)

var pyTypes = map[string]catalog.Type{
	"gauge": catalog.Gauge, "counter": catalog.Counter, "histogram": catalog.Histogram, "summary": catalog.Summary,
}

// pyArgs returns the text between the parentheses of the call whose
// opening parenthesis is at open, skipping strings of either quote.
func pyArgs(src string, open int) string {
	depth := 0
	var quote byte
	for i := open; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
			if depth == 0 {
				return src[open+1 : i]
			}
		}
	}
	return ""
}

// pySplitAt splits s at each sep that stands outside brackets and string
// literals, trimming the parts.
func pySplitAt(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == sep && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// pySplit splits an argument list at its top-level commas. Python allows a
// trailing comma, so an empty last part is no argument.
func pySplit(args string) []string {
	out := pySplitAt(args, ',')
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// pyString reads a string literal, or adjacent literals ("a" "b").
func pyString(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '"' && s[0] != '\'') {
		return "", false
	}
	var out strings.Builder
	for s != "" {
		q := s[0]
		if q != '"' && q != '\'' {
			return "", false
		}
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return "", false
		}
		out.WriteString(s[1 : end+1])
		s = strings.TrimSpace(s[end+2:])
	}
	return out.String(), true
}

// pyFile resolves the names a file assigns: name = "text" and
// name = [ ... ], self.name included, the last assignment before a place.
type pyFile struct {
	src     string
	assigns map[string][]pyAssign
}

type pyAssign struct {
	at    int
	value string
}

var pyAssignRe = regexp.MustCompile(`(?m)^[ \t]*(?:self\.)?(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*([\["'])`)

func newPyFile(src string) *pyFile {
	f := &pyFile{src: src, assigns: map[string][]pyAssign{}}
	for _, m := range pyAssignRe.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		at := m[4]
		var value string
		if src[at] == '[' {
			value = "[" + pyArgs(src, at) + "]"
		} else {
			end := strings.IndexByte(src[at:], '\n')
			if end < 0 {
				end = len(src) - at
			}
			value = src[at : at+end]
		}
		f.assigns[name] = append(f.assigns[name], pyAssign{at: m[0], value: value})
	}
	return f
}

func (f *pyFile) lookup(name string, before int) (string, bool) {
	name = strings.TrimPrefix(name, "self.")
	var best string
	found := false
	for _, a := range f.assigns[name] {
		if a.at < before {
			best, found = a.value, true
		}
	}
	return best, found
}

func (f *pyFile) str(expr string, at int) (string, bool) {
	if s, ok := pyString(expr); ok {
		return s, true
	}
	if isIdent(expr) {
		if v, ok := f.lookup(expr, at); ok {
			return pyString(v)
		}
	}
	return "", false
}

// labels reads a labelnames= expression: lists, variables holding lists,
// and sums of them.
func (f *pyFile) labels(expr string, at int, depth int) ([]string, bool) {
	if depth > 10 {
		return nil, false
	}
	var out []string
	for _, term := range pySplitPlus(expr) {
		switch {
		case strings.HasPrefix(term, "[") || strings.HasPrefix(term, "("):
			for _, el := range pySplit(term[1 : len(term)-1]) {
				s, ok := f.str(el, at)
				if !ok {
					return nil, false
				}
				out = append(out, s)
			}
		case isIdent(term):
			v, ok := f.lookup(term, at)
			if !ok {
				return nil, false
			}
			ls, ok := f.labels(v, at, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, ls...)
		default:
			return nil, false
		}
	}
	return out, true
}

// pySplitPlus splits a + b + c at its top level. An empty term (a +) is
// kept, so that labels gives up on it.
func pySplitPlus(expr string) []string { return pySplitAt(expr, '+') }

var identRe = regexp.MustCompile(`^(?:self\.)?[A-Za-z_]\w*$`)

func isIdent(s string) bool { return identRe.MatchString(strings.TrimSpace(s)) }

// pythonMetrics reads the prometheus_client families of the Python files
// under dirs whose names start with prefix.
func pythonMetrics(root string, dirs []string, prefix string) (*upstream, error) {
	up := &upstream{families: map[string]*family{}}
	for _, d := range dirs {
		err := walkFiles(root, d, []string{".py"}, func(rel string, data []byte) error {
			src := string(data)
			if !strings.Contains(src, prefix) {
				return nil
			}
			pf := newPyFile(src)
			for _, loc := range pyCallRe.FindAllStringSubmatchIndex(src, -1) {
				callee := strings.ToLower(strings.Trim(src[loc[2]:loc[3]], "_"))
				t := pyTypes[strings.TrimSuffix(callee, "_cls")]
				args := pySplit(pyArgs(src, loc[1]-1))
				var name, labelExpr string
				haveName := false
				for i, a := range args {
					k, v, kw := strings.Cut(a, "=")
					if !kw || !isIdent(k) {
						if i == 0 {
							name, haveName = pf.str(a, loc[0])
						}
						continue
					}
					switch strings.TrimSpace(k) {
					case "name":
						name, haveName = pf.str(strings.TrimSpace(v), loc[0])
					case "labelnames":
						labelExpr = strings.TrimSpace(v)
					}
				}
				if !haveName || !strings.HasPrefix(name, prefix) {
					continue
				}
				if t == catalog.Counter {
					name = strings.TrimSuffix(name, "_total") + "_total"
				}
				f := family{Name: name, Type: t, Where: rel + ":" + strconv.Itoa(lineOf(data, loc[0])), Labels: []string{}}
				if labelExpr != "" {
					f.Labels, _ = pf.labels(labelExpr, loc[0], 0)
				}
				up.add(f)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return up, nil
}

// readVLLM reads every prometheus_client family of vLLM's package: the
// V1 loggers, speculative decoding, the KV connectors (NIXL), offloading.
func readVLLM(dir string) (*upstream, error) {
	return pythonMetrics(dir, []string{"vllm"}, "vllm:")
}

// readSGLang reads SGLang's runtime: the scheduler, tokenizer and cache
// collectors.
func readSGLang(dir string) (*upstream, error) {
	return pythonMetrics(dir, []string{"python/sglang"}, "sglang:")
}

// readSGLangGateway reads the model gateway's Rust metrics (smg_*).
func readSGLangGateway(dir string) (*upstream, error) {
	return rustMetrics(dir, []string{"sgl-model-gateway/src", "sgl-router/src"}, "smg_")
}
