package notificationtest

import "strings"

// lineDiff renders expected and got as a line diff: "-" for an expected
// line that is missing, "+" for a line that was not expected, " " for a
// line both have.
func lineDiff(exp, got []string) string {
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
	if n == 0 && m == 0 {
		return "  (nothing)"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// indent prefixes every line but the first with prefix.
func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
