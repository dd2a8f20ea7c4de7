package ruletest

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
)

// alertInstance is an alert as compared: its labels and annotations.
type alertInstance struct {
	Labels      labels.Labels
	Annotations labels.Labels
}

func (a alertInstance) text() string {
	return "Labels:" + a.Labels.String() + "\nAnnotations:" + a.Annotations.String()
}

func sortAlerts(as []alertInstance) {
	slices.SortFunc(as, func(x, y alertInstance) int {
		if c := labels.Compare(x.Labels, y.Labels); c != 0 {
			return c
		}
		return labels.Compare(x.Annotations, y.Annotations)
	})
}

func alertsEqual(exp, got []alertInstance) bool {
	return slices.EqualFunc(exp, got, func(x, y alertInstance) bool {
		return labels.Equal(x.Labels, y.Labels) && labels.Equal(x.Annotations, y.Annotations)
	})
}

// alertsText renders a list of alerts the way promtool prints them:
// "[]" when empty, else numbered entries with their labels and annotations.
func alertsText(as []alertInstance) string {
	if len(as) == 0 {
		return "[]"
	}
	var b strings.Builder
	b.WriteString("[")
	for i, a := range as {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + strconv.Itoa(i) + ":")
		b.WriteString(indent("\n"+a.text(), "  "))
	}
	b.WriteString("\n]")
	return b.String()
}

// indent prefixes every line but the first with prefix.
func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// sample is a query result or an expected sample, as compared.
type sample struct {
	Labels    labels.Labels
	Value     float64
	Histogram string // the promqltest notation of a native histogram
}

func (s sample) text() string {
	if s.Histogram != "" {
		return s.Labels.String() + " " + s.Histogram
	}
	return s.Labels.String() + " " + strconv.FormatFloat(s.Value, 'E', -1, 64)
}

func samplesText(ss []sample) string {
	if len(ss) == 0 {
		return "nil"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.text()
	}
	return strings.Join(parts, ", ")
}

func sortSamples(ss []sample) {
	slices.SortStableFunc(ss, func(x, y sample) int { return labels.Compare(x.Labels, y.Labels) })
}

// floatsEqual compares exactly, or within one unit in the last place when
// fuzzy is set (promtool's fuzzy_compare). NaN equals NaN: promtool can never
// match an expected NaN, which no test can rely on, so paged accepts it.
func floatsEqual(x, y float64, fuzzy bool) bool {
	if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
		return true
	}
	return fuzzy && (math.Nextafter(x, math.Inf(-1)) == y || math.Nextafter(x, math.Inf(1)) == y)
}

func samplesEqual(exp, got []sample, fuzzy bool) bool {
	return slices.EqualFunc(exp, got, func(x, y sample) bool {
		return labels.Equal(x.Labels, y.Labels) && x.Histogram == y.Histogram && floatsEqual(x.Value, y.Value, fuzzy)
	})
}

// LineDiff renders expected and got as a line diff: "-" for an expected
// line that is missing, "+" for a line that was not expected, " " for a
// line both have. It is what --diff prints, for rule and notification
// tests alike.
func LineDiff(exp, got []string) string {
	// Longest common subsequence; the lists are short.
	n, m := len(exp), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if exp[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && exp[i] == got[j]:
			b.WriteString("  " + exp[i] + "\n")
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			b.WriteString("- " + exp[i] + "\n")
			i++
		default:
			b.WriteString("+ " + got[j] + "\n")
			j++
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func alertLines(as []alertInstance) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Labels.String() + " " + a.Annotations.String()
	}
	return out
}

func sampleLines(ss []sample) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.text()
	}
	return out
}
