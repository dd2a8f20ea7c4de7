package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules/catalog"
)

// The no-series check: which selectors of a rule to ask about, and how.
//
// A rule whose selectors match no series can never fire, and nothing says
// so: after a server upgrade renamed its metrics, a pack goes quiet
// forever. The engine (PagedRuleNoSeries) and `paged init` ask, for each
// selector of a rule, "is this metric scraped from the targets the rule
// means?" That is not "does the selector match right now": an error
// counter's code="500" series, finished_reason="error", a 5xx status
// appear the first time such a thing happens, and a rule that selects
// them is waiting, not dead. So each selector is reduced first:
//
//   - __name__ and the identity matchers are kept: the labels that say
//     which targets (job, instance, namespace, pod, service, cluster,
//     container, endpoint), which model and engine (model_name, engine),
//     and the labels a pack's selector override adds;
//   - of a metric the catalogue knows, matchers on its value labels (the
//     labels the server sets per series: finished_reason, status, err,
//     reason, le, quantile...) are dropped, and matchers on labels the
//     catalogue does not list (relabelled target labels) are kept;
//   - of a metric the catalogue does not know, every matcher that is not
//     an identity matcher is dropped: paged cannot tell a target label
//     from a value label there, and dropping one only makes the check
//     less strict;
//   - the buckets of a histogram the catalogue knows are counted through
//     its _count series: the same targets, a twentieth of the series.
//
// Selectors that are meant to be empty are not checked: inside absent()
// and absent_over_time(), on the right of unless, on a side of `or` whose
// other side selects nothing (`x or vector(0)`: a fallback for when x has
// no series); ALERTS and ALERTS_FOR_STATE; names that a loaded recording
// rule writes (its own selectors are checked instead); and metrics that
// have no series before the first event they count (catalog AppearsOn).
// Offsets and @ are ignored: the check asks about now.

// DefaultIdentityLabels are the labels whose matchers the no-series check
// always keeps: they say which targets, model and engine a rule means.
var DefaultIdentityLabels = []string{
	"job", "instance", "namespace", "pod", "service", "cluster", "container", "endpoint",
	"model_name", "engine",
}

// SeriesCheck is one selector of a rule as the no-series check sees it.
type SeriesCheck struct {
	// Selector is the selector as written, without offset or @: the
	// `selector` label of PagedRuleNoSeries.
	Selector string
	// Metric is the metric name, "" when the selector has no exact name.
	Metric string
	// Checked is the reduced selector that is asked about; empty when
	// Skip is set.
	Checked string
	// Matchers are Checked's matchers.
	Matchers []*labels.Matcher
	// Dropped names the labels whose matchers were left out, sorted.
	Dropped []string
	// ViaCount is set when the selector reads a histogram's buckets and
	// Checked counts its _count series instead.
	ViaCount bool
	// Hint is what the metric catalogue says about why the selector may
	// match nothing (renamed, removed, not enabled by default...), "" when
	// it knows nothing.
	Hint string
	// Skip says why the selector is not checked; empty when it is.
	Skip string
}

// SeriesCheckOptions tune SeriesChecks.
type SeriesCheckOptions struct {
	// Identity are the labels always kept; nil means
	// DefaultIdentityLabels.
	Identity []string
	// Keep are more labels to keep: those a pack's selector override adds.
	Keep []string
	// Recorded reports names written by a loaded recording rule; they are
	// skipped. Nil: none.
	Recorded func(name string) bool
	// Server is the rule's `server` label (vllm-v0 makes the hints speak
	// of vLLM's legacy V0 engine).
	Server string
}

// maxSeriesChecks bounds the selectors taken from one expression.
const maxSeriesChecks = 1000

// SeriesChecks returns the selectors of expr, each reduced for the
// no-series check or marked skipped, without duplicates, in the order of
// the expression. It never panics on a tree the parser returned.
func SeriesChecks(expr parser.Expr, o SeriesCheckOptions) []SeriesCheck {
	id := o.Identity
	if id == nil {
		id = DefaultIdentityLabels
	}
	keep := map[string]bool{labels.MetricName: true}
	for _, l := range id {
		keep[l] = true
	}
	for _, l := range o.Keep {
		keep[l] = true
	}
	w := &seriesWalker{o: o, keep: keep, seen: map[string]bool{}}
	w.walk(expr, "", 0)
	return w.out
}

type seriesWalker struct {
	o    SeriesCheckOptions
	keep map[string]bool
	seen map[string]bool
	out  []SeriesCheck
}

// Reasons a selector is not checked.
const (
	skipAbsent   = "inside %s(): meant to be empty"
	skipUnless   = "right of unless: meant to be empty most of the time"
	skipFallback = "a side of `or` whose other side is a fallback without series (x or vector(0))"
	skipAlerts   = "paged's own ALERTS series exist only while alerts are active"
	skipRecorded = "written by a recording rule that is loaded (its own selectors are checked)"
	skipAppears  = "has no series until %s"
	skipEmpty    = "no matcher that selects series is left once value labels are dropped"
	skipRename   = "a side of `new or old` over a renamed metric: each release has one of the two names"
)

func (w *seriesWalker) walk(n parser.Node, skip string, depth int) {
	if isNilNode(n) || depth > maxWalkDepth || len(w.out) >= maxSeriesChecks {
		return
	}
	switch n := n.(type) {
	case *parser.VectorSelector:
		w.selector(n, skip)
		return
	case *parser.Call:
		if fn := callName(n); skip == "" && (fn == "absent" || fn == "absent_over_time") {
			skip = fmt.Sprintf(skipAbsent, fn)
		}
	case *parser.BinaryExpr:
		lhs, rhs := skip, skip
		switch {
		case skip != "":
		case n.Op == parser.LUNLESS:
			rhs = skipUnless
		case n.Op == parser.LOR && !hasSelector(n.RHS):
			lhs = skipFallback
		case n.Op == parser.LOR && !hasSelector(n.LHS):
			rhs = skipFallback
		case n.Op == parser.LOR && renamePair(n.LHS, n.RHS):
			lhs, rhs = skipRename, skipRename
		}
		w.walk(n.LHS, lhs, depth+1)
		w.walk(n.RHS, rhs, depth+1)
		return
	}
	for _, c := range astChildren(n) {
		w.walk(c, skip, depth+1)
	}
}

// renamePair reports whether the two sides of an `or` read the new and
// the old name of a metric the catalogue knows was renamed
// (vllm:inter_token_latency_seconds or vllm:time_per_output_token_seconds):
// a rule written for releases on both sides of the rename, where one of
// the two sides has no series by design.
func renamePair(a, b parser.Expr) bool {
	cat := llmCatalog()
	metrics := func(e parser.Expr) []string {
		var out []string
		walkAST(e, func(n parser.Node, _ []parser.Node) {
			if vs, ok := n.(*parser.VectorSelector); ok && vs != nil {
				if name, exact := selectorName(vs); exact {
					if s, ok := cat.Resolve(name); ok {
						out = append(out, s.Metric.Name)
					}
				}
			}
		})
		return out
	}
	ma, mb := metrics(a), metrics(b)
	for _, x := range ma {
		for _, y := range mb {
			if slices.Contains(cat.Replaces(x), y) || slices.Contains(cat.Replaces(y), x) {
				return true
			}
		}
	}
	return false
}

// hasSelector reports whether an expression reads any series.
func hasSelector(e parser.Expr) bool {
	found := false
	walkAST(e, func(n parser.Node, _ []parser.Node) {
		if vs, ok := n.(*parser.VectorSelector); ok && vs != nil {
			found = true
		}
	})
	return found
}

func (w *seriesWalker) selector(vs *parser.VectorSelector, skip string) {
	written := (&parser.VectorSelector{Name: vs.Name, LabelMatchers: vs.LabelMatchers}).String()
	if w.seen[written] {
		return
	}
	w.seen[written] = true
	sc := SeriesCheck{Selector: written}
	name, exact := selectorName(vs)
	if exact {
		sc.Metric = name
	}
	cat := llmCatalog()
	var (
		m      *catalog.Metric
		suffix string
	)
	if exact {
		if s, ok := cat.Resolve(name); ok {
			m, suffix = s.Metric, s.Suffix
		}
	}
	switch {
	case skip != "":
		sc.Skip = skip
	case name == "ALERTS" || name == "ALERTS_FOR_STATE":
		sc.Skip = skipAlerts
	case exact && w.o.Recorded != nil && w.o.Recorded(name):
		sc.Skip = skipRecorded
	case m != nil && m.AppearsOn != "" && m.Status != catalog.Removed:
		sc.Skip = fmt.Sprintf(skipAppears, m.AppearsOn)
	}
	if sc.Skip != "" {
		w.out = append(w.out, sc)
		return
	}

	// Value labels of a known metric: every catalogued label that is not
	// an identity label, and le and quantile.
	var known map[string]bool
	if m != nil && m.Labels != nil {
		known = map[string]bool{"le": true, "quantile": true}
		for _, l := range m.Labels {
			known[l] = true
		}
	}
	var kept []*labels.Matcher
	dropped := map[string]bool{}
	var labelHints []string
	for _, lm := range vs.LabelMatchers {
		if lm == nil {
			continue
		}
		switch {
		case w.keep[lm.Name]:
			kept = append(kept, lm)
		case known != nil && !known[lm.Name]:
			// A label the server does not set: a target label from
			// relabelling, or a mistake. Kept either way; a mistake is
			// what the hint is for.
			kept = append(kept, lm)
			if cat.KnownLabel(lm.Name) {
				labelHints = append(labelHints, fmt.Sprintf("%s has no label %s (its labels: %s)", m.Name, lm.Name, strings.Join(m.Labels, ", ")))
			}
		default:
			dropped[lm.Name] = true
		}
	}
	if !slices.ContainsFunc(kept, func(lm *labels.Matcher) bool { return !lm.Matches("") }) {
		sc.Skip = skipEmpty
		w.out = append(w.out, sc)
		return
	}
	checkedName := vs.Name
	if m != nil && m.Type == catalog.Histogram && suffix == "_bucket" {
		// A classic histogram's _count has the same targets as its
		// buckets, with one series where the buckets have twenty: count
		// that instead.
		checkedName = m.Name + "_count"
		sc.ViaCount = true
		for i, lm := range kept {
			if lm.Name == labels.MetricName {
				kept[i] = labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, checkedName)
			}
		}
		if vs.Name == "" {
			checkedName = ""
		}
	}
	sc.Matchers = kept
	sc.Checked = (&parser.VectorSelector{Name: checkedName, LabelMatchers: kept}).String()
	for l := range dropped {
		sc.Dropped = append(sc.Dropped, l)
	}
	slices.Sort(sc.Dropped)
	hints := labelHints
	if exact {
		if h := SeriesHint(name, w.o.Server); h != "" {
			hints = append([]string{h}, hints...)
		}
	}
	sc.Hint = strings.Join(hints, "; ")
	w.out = append(w.out, sc)
}

// SeriesHint says what the metric catalogue knows about why a metric
// name may match no series: it was renamed or removed (with the version
// and the replacement), it exists only with a flag or in one vLLM engine,
// it is newer than some releases, its counter suffix is wrong, it was
// never exported. "" when the catalogue has nothing to say. server is
// the rule's `server` label.
func SeriesHint(name, server string) string {
	cat := llmCatalog()
	v0 := server == "vllm-v0"
	s := classify(cat, name, v0, strings.HasPrefix(server, "vllm"))
	switch s.Verdict {
	case vRemoved:
		return removedText(s, false)
	case vWrongSuffix:
		m := s.Series.Metric
		if s.Series.Suffix == "" && m.Type == catalog.Histogram {
			return fmt.Sprintf("%s is a classic histogram: its series are %s_bucket, %s_sum and %s_count", name, m.Name, m.Name, m.Name)
		}
		return fmt.Sprintf("%s is a %s: %s exposes no %s series for it", m.Name, typeName(m.Type), m.Server.Title, s.Series.Suffix)
	case vMissingTotal:
		return fmt.Sprintf("%s exposes this counter as %s (prometheus_client adds _total)", s.Server.Title, s.AltName)
	case vExtraTotal:
		if s.Alt.Metric.Type == catalog.Gauge {
			return fmt.Sprintf("%s is a gauge, it has no _total", s.AltName)
		}
		return fmt.Sprintf("%s counters have no _total suffix: use %s", s.Server.Title, s.AltName)
	case vNotReal:
		return fmt.Sprintf("%s was never exported by %s: use %s", name, s.NotReal.Server.Title, s.NotReal.Advice)
	case vUnknown:
		if sug := cat.Suggest(name); sug != "" {
			return fmt.Sprintf("%s is not a %s metric; did you mean %s?", name, s.Server.Title, sug)
		}
		return ""
	case vNearMiss:
		return fmt.Sprintf("%s does not have %s's prefix %s: did you mean %s?", name, s.Server.Title, s.AltPrefix, s.AltName)
	case vEngine:
		return fmt.Sprintf("%s exists only in vLLM's V1 engine, and this rule is for the legacy V0 engine (server: vllm-v0)", name)
	case vKnown:
		return knownHint(cat, s, v0)
	}
	return ""
}

// versionRe is a release number (0.11.0, v2.3.1), not a date (2023-02)
// or a bound (<=0.4).
var versionRe = regexp.MustCompile(`^v?\d+\.\d+`)

// knownHint is the hint for a metric the server exports in some releases
// or setups.
func knownHint(cat *catalog.Catalog, s llmSelector, v0 bool) string {
	m := s.Series.Metric
	switch {
	case m.Status == catalog.Removed && v0:
		// Accepted in a rule for V0, but gone from current vLLM.
		return removedText(s, false) + "; a server that moved to the V1 engine needs the vllm pack instead of vllm-v0"
	case m.Status == catalog.Conditional:
		cond := m.Condition
		if cond == "" {
			cond = "a setting that is off by default"
		}
		return fmt.Sprintf("%s exists only with %s (not enabled by default)", s.Name, cond)
	case m.Status == catalog.Described:
		return fmt.Sprintf("%s is registered by %s but never set", s.Name, s.Server.Title)
	}
	since := ""
	if versionRe.MatchString(m.Since) && !strings.Contains(m.Since, "?") {
		since = " since " + m.Since
	}
	if old := cat.Replaces(m.Name); len(old) > 0 {
		for i, o := range old {
			old[i] = replacement(o, s.Series.Suffix)
		}
		return fmt.Sprintf("%s exists in %s%s; older releases expose %s instead", s.Name, s.Server.Title, since, strings.Join(old, " or "))
	}
	if since != "" {
		return fmt.Sprintf("%s exists in %s%s: an older server does not expose it", s.Name, s.Server.Title, since)
	}
	return ""
}
