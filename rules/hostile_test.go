package rules

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Hostile input gives a clear finding, never a panic or a hang.
func TestHostileInput(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 'b'; i <= 'z'; i++ {
		fmt.Fprintf(&laughs, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	laughs.WriteString("groups:\n  - name: g\n    labels: *z\n    rules: *z\n")

	var big bytes.Buffer
	big.WriteString("groups:\n  - name: big\n    rules:\n")
	for i := 0; big.Len() < 10<<20; i++ {
		fmt.Fprintf(&big, "      - record: r%d\n        expr: sum by (job) (rate(http_requests_total{code=~\"5..\"}[5m]))\n", i)
	}

	long := "groups:\n  - name: g\n    rules:\n      - alert: Long\n        expr: " + strings.Repeat("up + ", 20000) + "up > 1\n"
	deep := "groups:\n  - name: g\n    rules:\n      - alert: Deep\n        expr: " + strings.Repeat("(", 5000) + "up" + strings.Repeat(")", 5000) + " > 1\n"
	nested := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)

	cases := []struct {
		name    string
		content []byte
		want    string // substring of the first error finding; "" = any finding or none
	}{
		{"binary", []byte{0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 0xff, 0xfe}, "binary"},
		{"invalid utf8", []byte("groups:\n  - name: \xff\xfe\xfd\xfc\xfb\n"), ""},
		{"billion laughs", []byte(laughs.String()), "groups"},
		{"10MB", big.Bytes(), ""},
		{"100k expression", []byte(long), ""},
		{"deep parens", []byte(deep), ""},
		{"deep yaml", []byte(nested), ""},
		{"scalar", []byte("just a string"), "mapping"},
		{"list", []byte("- a\n- b\n"), "mapping"},
		{"groups scalar", []byte("groups: 3\n"), "list"},
		{"rules scalar", []byte("groups:\n  - name: g\n    rules: {a: b}\n"), "list"},
		{"labels list", []byte("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        labels: [a]\n"), "mapping"},
		{"tabs", []byte("groups:\n\t- name: g\n"), ""},
		{"null everywhere", []byte("groups:\n  - name:\n    rules:\n      - alert:\n        expr:\n        labels:\n        annotations:\n"), ""},
		{"alias cycle-ish", []byte("groups: &g\n  - name: g\n    rules: *g\n"), ""},
		{"merge scalar", []byte("groups:\n  - name: g\n    rules:\n      - <<: 3\n        alert: A\n        expr: up\n"), "merge"},
		{"huge numbers", []byte("groups:\n  - name: g\n    limit: 99999999999999999999999\n    interval: 99999999999y\n    rules: []\n"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := ParseFile("hostile.yaml", c.content, ParseOptions{})
			fs := Lint([]*File{f}, DefaultConfig())
			var buf bytes.Buffer
			for _, format := range Formats {
				buf.Reset()
				if err := WriteFindings(&buf, format, fs, func(string, int) string { return "" }, false); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
			}
			if c.want == "" {
				return
			}
			for _, fd := range fs {
				if fd.Severity == Error && strings.Contains(fd.Message, c.want) {
					if fd.Range.Start.Line < 1 || fd.Range.Start.Column < 1 {
						t.Errorf("finding without a position: %s", fd)
					}
					return
				}
			}
			t.Errorf("no error finding mentioning %q; got %v", c.want, fs)
		})
	}
}

func FuzzLint(f *testing.F) {
	seeds := []string{
		"groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: sum by (a) (rate(x_total[5m])) > 1\n        for: 5m\n        annotations:\n          summary: '{{ $labels.a }} {{ $value }}'\n",
		"groups:\n  - name: g\n    rules:\n      - record: a:b\n        expr: |\n          histogram_quantile(0.9,\n            sum by (le) (rate(x_bucket[1m])))\n",
		"apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nspec:\n  groups:\n    - name: x\n      rules:\n        - alert: Y\n          expr: \"up == 0\"\n",
		"groups:\n  - &a\n    name: g\n    rules: []\n  - *a\n",
		"groups:\n- name: g\n  rules:\n  - alert: A # paged:disable alerts/labels\n    expr: >\n      up\n      == 0\n",
		// The semantic checks: absent branches, fallbacks, division, regexps, topk, matching.
		"groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up{job=\"a\"} == 0 or absent(up{job=\"a\"})\n    annotations: {s: '{{ $labels.instance }}'}\n",
		"groups:\n- name: g\n  rules:\n  - record: a:b\n    expr: sum by (c) (x{c=~\"2..\"} or vector(0)) / sum(a / (b > 0))\n  - record: a:b\n    expr: sum by (c) (x{c=~\"3..\"})\n",
		"groups:\n- name: g\n  rules:\n  - alert: A\n    expr: topk(3, x{job=~\"^.*a.*$\", job=\"b.*\"}) * on (i) group_left (__name__, z) sum by (i) (y) > 1\n",
		"groups:\n- name: g\n  rules:\n  - alert: A\n    expr: sum(rate(x[5m]])) > 1 and on (job) y{job=\"a\"} unless z{job=\"b\"}\n",
		"groups:\n  - name: g\n    rules:\n      - alert: A\n\t      expr: up == 0\n",
		"rule_files: [a.yaml]\ntests:\n  - input_series: []\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file := ParseFile("fuzz.yaml", b, ParseOptions{})
		fs := Lint([]*File{file}, DefaultConfig())
		for _, fd := range fs {
			if fd.Range.Start.Line < 1 || fd.Range.Start.Column < 1 {
				t.Fatalf("finding without a position: %s", fd)
			}
		}
		_ = file.RuleGroups()
	})
}
