package main

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/pagedhq/paged/rules/catalog"
)

// The Rust servers (TGI's router and backends, SGLang's model gateway)
// record metrics with the metrics crate's macros: counter!("name",
// "label" => value), gauge!, histogram!, and declare help texts with
// describe_counter! and the like. metrics-exporter-prometheus renders a
// histogram as a Prometheus histogram only when buckets are set for it
// (set_buckets_for_metric with a Matcher), and as a summary otherwise.

var (
	rustMacroRe   = regexp.MustCompile(`(?:metrics::)?(counter|gauge|histogram|describe_counter|describe_gauge|describe_histogram)!\s*\(`)
	rustLabelRe   = regexp.MustCompile(`"([a-zA-Z_][a-zA-Z0-9_]*)"\s*=>\s*("([^"]*)")?`)
	rustNameRe    = regexp.MustCompile(`^\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"`)
	rustMatcherRe = regexp.MustCompile(`let\s+(\w+)\s*=\s*Matcher::(Full|Prefix|Suffix)\(\s*String::from\("([^"]+)"\)`)
	rustBucketsRe = regexp.MustCompile(`\.set_buckets_for_metric\(\s*(\w+)`)
)

// rustMacroArgs returns the text between the parentheses of a macro call
// that starts at open (the index of its opening parenthesis).
func rustMacroArgs(src string, open int) string {
	depth := 0
	inStr := false
	for i := open; i < len(src); i++ {
		c := src[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return src[open+1 : i]
			}
		}
	}
	return ""
}

// uncomment blanks // comments so that commented-out calls do not count.
func uncomment(src string) string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if j := strings.Index(l, "//"); j >= 0 && strings.Count(l[:j], `"`)%2 == 0 {
			lines[i] = l[:j] + strings.Repeat(" ", len(l)-j)
		}
	}
	return strings.Join(lines, "\n")
}

// rustMetrics reads the metric macros of the Rust files under dirs.
func rustMetrics(root string, dirs []string, prefix string) (*upstream, error) {
	up := &upstream{}
	type matcher struct{ kind, value string }
	matchers := map[string]matcher{}
	var bucketVars []string
	recorded := map[string]bool{}
	for _, d := range dirs {
		err := walkFiles(root, d, []string{".rs"}, func(rel string, data []byte) error {
			src := uncomment(string(data))
			for _, m := range rustMatcherRe.FindAllStringSubmatch(src, -1) {
				matchers[m[1]] = matcher{m[2], m[3]}
			}
			for _, m := range rustBucketsRe.FindAllStringSubmatch(src, -1) {
				bucketVars = append(bucketVars, m[1])
			}
			for _, loc := range rustMacroRe.FindAllStringSubmatchIndex(src, -1) {
				kind := src[loc[2]:loc[3]]
				args := rustMacroArgs(src, loc[1]-1)
				nm := rustNameRe.FindStringSubmatch(args)
				if nm == nil || !strings.HasPrefix(nm[1], prefix) {
					continue // a name built at run time, or another program's
				}
				f := family{Name: nm[1], Where: rel + ":" + strconv.Itoa(lineOf(data, loc[0]))}
				switch strings.TrimPrefix(kind, "describe_") {
				case "counter":
					f.Type = catalog.Counter
				case "gauge":
					f.Type = catalog.Gauge
				case "histogram":
					f.Type = catalog.Histogram
				}
				if !strings.HasPrefix(kind, "describe_") {
					recorded[f.Name] = true
					f.Labels = []string{}
					for _, lm := range rustLabelRe.FindAllStringSubmatch(args[len(nm[0]):], -1) {
						f.Labels = append(f.Labels, lm[1])
						if lm[2] != "" {
							if f.Values == nil {
								f.Values = map[string][]string{}
							}
							f.Values[lm[1]] = append(f.Values[lm[1]], lm[3])
						}
					}
				}
				up.add(f)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, f := range up.families {
		f.DescribedOnly = !recorded[f.Name]
	}
	// Histograms without buckets are exposed as summaries.
	for _, f := range up.families {
		if f.Type != catalog.Histogram {
			continue
		}
		bucketed := false
		for _, v := range bucketVars {
			m, ok := matchers[v]
			switch {
			case !ok:
			case m.kind == "Full" && f.Name == m.value,
				m.kind == "Prefix" && strings.HasPrefix(f.Name, m.value),
				m.kind == "Suffix" && strings.HasSuffix(f.Name, m.value):
				bucketed = true
			}
		}
		if !bucketed && len(matchers) > 0 {
			f.Type = catalog.Summary
		}
	}
	return up, nil
}

func readTGI(dir string) (*upstream, error) {
	return rustMetrics(dir, []string{"router", "backends/v3"}, "tgi_")
}
