package rules

import (
	"regexp"
	"slices"
	"testing"
)

// labelRefRe is what labelRefs implements by hand.
var labelRefRe = regexp.MustCompile(`(?:\$labels|\.Labels)\.([a-zA-Z_][a-zA-Z0-9_]*)|index\s+(?:\$labels|\.Labels)\s+"([^"]+)"`)

func labelRefsByRegexp(v string) [][2]int {
	var out [][2]int
	for _, m := range labelRefRe.FindAllStringSubmatchIndex(v, -1) {
		start, end := m[2], m[3]
		if start < 0 {
			start, end = m[4], m[5]
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

func labelRefsByHand(v string) [][2]int {
	var out [][2]int
	for start, end := range labelRefs(v) {
		out = append(out, [2]int{start, end})
	}
	return out
}

var labelRefCases = []string{
	"{{ $labels.instance }} on {{ $labels.job }}",
	"{{ .Labels.pod_name }} {{ .Labels.2x }} {{ $labels._a1 }}",
	"{{ $labels. }} {{ $labels.}} $labels.x outside",
	`{{ index $labels "le" }} {{ index .Labels "a b" }} {{index  $labels	"x"}}`,
	`{{ index $labels "" }} {{ index $labels "unterminated }}`,
	`{{ index $labels"x" }} {{ index$labels "x" }} {{ indexes $labels "x" }}`,
	"{{ index \n\f\r $labels \n \"multi\nline\" }}",
	"{{ $labels.$labels.a }} .Labels.Labels.b $$labels.c",
	"{{ index $labels.instance }} index index $labels \"a\"",
	"Ünïcödé {{ $labels.ä }} {{ $labels.aé }} {{ index $labels \"é\" }}",
	"{{ index\v$labels \"vt\" }}",
}

func TestLabelRefsMatchRegexp(t *testing.T) {
	for _, v := range labelRefCases {
		if got, want := labelRefsByHand(v), labelRefsByRegexp(v); !slices.Equal(got, want) {
			t.Errorf("labelRefs(%q) = %v, the regexp finds %v", v, got, want)
		}
	}
	if got := labelRefsByHand(labelRefCases[0]); len(got) != 2 {
		t.Errorf("found %v in %q, want instance and job", got, labelRefCases[0])
	}
}

func FuzzLabelRefs(f *testing.F) {
	for _, v := range labelRefCases {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := labelRefsByHand(v), labelRefsByRegexp(v); !slices.Equal(got, want) {
			t.Errorf("labelRefs(%q) = %v, the regexp finds %v", v, got, want)
		}
	})
}
