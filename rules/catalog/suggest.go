package catalog

import (
	"strings"
)

// Suggest returns the known series name of the same server closest to an
// unknown one, or "" when nothing is close enough to be a likely typo.
// Closeness is the better of two scores: edit distance relative to the
// longer name, and the overlap of the words between _ and : (so that
// vllm:requests_running finds vllm:num_requests_running). A candidate
// with the same suffix (_bucket, _sum, _count, _total) is preferred.
func (c *Catalog) Suggest(name string) string {
	s := c.ServerFor(name)
	if s == nil {
		return ""
	}
	best, bestScore := "", 0.0
	for _, cand := range c.names[s] {
		sc := similarity(name, cand)
		if sameSuffix(name, cand) {
			sc += 0.05
		}
		if sc > bestScore {
			best, bestScore = cand, sc
		}
	}
	if bestScore < 0.7 {
		return ""
	}
	return best
}

func sameSuffix(a, b string) bool {
	for _, s := range []string{"_bucket", "_sum", "_count", "_total"} {
		if strings.HasSuffix(a, s) {
			return strings.HasSuffix(b, s)
		}
	}
	return false
}

func similarity(a, b string) float64 {
	la, lb := len(a), len(b)
	if la == 0 || lb == 0 {
		return 0
	}
	lev := 1 - float64(levenshtein(a, b))/float64(max(la, lb))
	return max(lev, tokenOverlap(a, b))
}

func tokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == '_' || r == ':' }) {
		out[t] = true
	}
	return out
}

// tokenOverlap is the Jaccard index of the two names' words.
func tokenOverlap(a, b string) float64 {
	ta, tb := tokens(a), tokens(b)
	inter := 0
	for t := range ta {
		if tb[t] {
			inter++
		}
	}
	union := len(ta) + len(tb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// levenshtein is the edit distance between two ASCII-ish strings, bounded
// in cost by the lengths of metric names (a few hundred bytes at most).
func levenshtein(a, b string) int {
	if len(a) > 512 || len(b) > 512 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest returns the candidate most similar to name (a label name, say),
// or "" when none is similar enough to be a likely mix-up.
func Closest(name string, candidates []string) string {
	best, bestScore := "", 0.0
	for _, c := range candidates {
		sc := similarity(name, c)
		if strings.Contains(c, name) || strings.Contains(name, c) {
			sc = max(sc, 0.7)
		}
		if sc > bestScore {
			best, bestScore = c, sc
		}
	}
	if bestScore < 0.5 {
		return ""
	}
	return best
}

// wordExpansions spell out the abbreviations people use for the servers'
// latency metrics, so that a made-up name finds the real one by its words.
var wordExpansions = map[string][]string{
	"ttft":   {"time", "to", "first", "token"},
	"itl":    {"inter", "token", "latency"},
	"tpot":   {"time", "per", "output", "token"},
	"reqs":   {"requests"},
	"req":    {"request"},
	"failed": {"failure"},
	"errors": {"error"},
	"total":  {}, // the counter suffix says nothing of the meaning
}

// words are the words of a metric name without the server's prefix, the
// abbreviations spelt out, singular and plural made the same.
func words(name, prefix string) map[string]bool {
	out := map[string]bool{}
	for t := range tokens(strings.TrimPrefix(name, prefix)) {
		ws, ok := wordExpansions[t]
		if !ok {
			ws = []string{t}
		}
		for _, w := range ws {
			out[strings.TrimSuffix(w, "s")] = true
		}
	}
	return out
}

// SuggestByWords returns the known series name of the server closest to
// name by the words they share (their Jaccard index, abbreviations spelt
// out, at least one half), ties broken by edit distance; "" when none
// shares enough. A name without _bucket, _sum or _count gets a
// histogram's base name. It suits names made up from a metric's meaning
// (triton_inference_requests_total) rather than misspelt.
func (c *Catalog) SuggestByWords(name string) string {
	s := c.ServerFor(name)
	if s == nil {
		return ""
	}
	want := words(name, s.Prefix)
	suffixed := false
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		suffixed = suffixed || strings.HasSuffix(name, suf)
	}
	best, bestScore, bestLev := "", 0.0, 0
	for _, cand := range c.names[s] {
		if sr, ok := c.Resolve(cand); ok && sr.Suffix != "" && !suffixed {
			cand = sr.Metric.Name // a histogram named without a suffix: its base name
		}
		got := words(cand, s.Prefix)
		inter := 0
		for w := range want {
			if got[w] {
				inter++
			}
		}
		sc := float64(inter) / float64(len(want)+len(got)-inter)
		lev := levenshtein(name, cand)
		if sc > bestScore || sc == bestScore && lev < bestLev {
			best, bestScore, bestLev = cand, sc, lev
		}
	}
	if bestScore < 0.5 {
		return ""
	}
	return best
}
