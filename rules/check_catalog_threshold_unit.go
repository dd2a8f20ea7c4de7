package rules

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules/catalog"
)

// CheckCatalogThresholdUnit reports a comparison whose threshold is of a
// magnitude the metric's unit makes implausible: a threshold written in
// another unit.
const CheckCatalogThresholdUnit = "catalog/threshold-unit"

var checkCatalogThresholdUnit = &Check{
	Name: CheckCatalogThresholdUnit,
	Help: "A threshold compared with a catalogued metric fits the metric's unit (the catalogue's, or the one its name says): " +
		"a percentage against a 0-1 fraction (vllm:kv_cache_usage_perc > 90), a byte count against a gauge in MiB " +
		"(DCGM_FI_DEV_FB_FREE < 500000000), a millisecond value above the largest bucket a histogram_quantile of a histogram " +
		"in seconds can return, less than one unit of a histogram in ms or µs. Only magnitudes the unit rules out are reported, " +
		"each with the unit named; unit conversions in the expression (* 100, / 1000, / 1024 / 1024) are followed.",
	Severity: Warning,
	File:     perRule(catalogThresholdUnit),
}

// gpuMemoryMaxMiB bounds one GPU's framebuffer: the largest NVIDIA GPUs
// shipped by 2026 have 288 GB (B300, Rubin), about 275 000 MiB. A
// threshold above this, in MiB, is no GPU's memory.
const gpuMemoryMaxMiB = 400_000

func catalogThresholdUnit(p *Pass, r *Rule, ff *fileFacts) {
	if !ruleExprOK(r) {
		return
	}
	walkAST(r.Expr.AST, func(n parser.Node, _ []parser.Node) {
		b, ok := n.(*parser.BinaryExpr)
		if !ok || b == nil || !b.Op.IsComparisonOperator() {
			return
		}
		side, lit, op := b.LHS, numberLiteral(b.RHS), b.Op.String()
		if lit == nil {
			side, lit, op = b.RHS, numberLiteral(b.LHS), flipComparison(b.Op.String())
		}
		if lit == nil || numberLiteral(side) != nil {
			return
		}
		q := quantityOf(side, r, ff)
		if q == nil || q.kind != qValue || q.k == 0 {
			return
		}
		if msg := implausible(q, lit.Val, op); msg != "" {
			p.ReportExpr(r, safeRange(b), "%s", msg)
		}
	})
}

// qkind is what an expression's value is, in terms of a catalogued metric.
type qkind int

const (
	qValue   qkind = iota // the metric's value, or one observation (histogram_quantile, a mean)
	qBuckets              // a histogram's _bucket series, rated or summed
	qSum                  // a histogram's or summary's _sum, rated
	qCount                // its _count, rated
	qRate                 // the rate of a counter with a unit (µs of Triton's duration counters)
	qEvents               // the rate of a counter without one (requests)
	qRaw                  // a counter's raw value
)

// quantity is an expression's value as a multiple of a metric's unit:
// value of the expression = value in the unit × k.
type quantity struct {
	kind      qkind
	what      string // the metric, or the ratio, for messages
	metric    *catalog.Metric
	unit      string // normalised: fraction, percent, MiB, bytes, seconds, ms, us, ns, C; "" unknown
	unitText  string // the catalogue's words for it
	k         float64
	quantile  bool    // the result of histogram_quantile
	maxBucket float64 // its largest finite bucket, when the catalogue knows the buckets
}

func (q *quantity) with(kind qkind) *quantity {
	c := *q
	c.kind = kind
	return &c
}

// quantityOf works out what an expression measures, or nil when it cannot
// tell: only the shapes whose unit is certain are followed.
func quantityOf(e parser.Expr, r *Rule, ff *fileFacts) *quantity {
	switch n := unwrapParens(e).(type) {
	case *parser.VectorSelector:
		return selectorQuantity(n, r, ff)
	case *parser.MatrixSelector:
		return selectorQuantity(vectorSelectorOf(n), r, ff)
	case *parser.Call:
		return callQuantity(n, r, ff)
	case *parser.AggregateExpr:
		if n == nil {
			return nil
		}
		q := quantityOf(n.Expr, r, ff)
		if q == nil {
			return nil
		}
		switch n.Op {
		case parser.AVG, parser.MIN, parser.MAX, parser.QUANTILE, parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
			return q
		case parser.SUM:
			if q.kind != qValue && q.kind != qRaw {
				return q // a sum of rates or buckets, read by a ratio or histogram_quantile
			}
		}
		return nil
	case *parser.BinaryExpr:
		return binaryQuantity(n, r, ff)
	}
	return nil
}

func selectorQuantity(vs *parser.VectorSelector, r *Rule, ff *fileFacts) *quantity {
	name, ok := selectorName(vs)
	if !ok || ff.isRecorded(name) {
		return nil
	}
	s, ok := resolveFor(name, r)
	if !ok || !s.Valid() || s.Metric.Status == catalog.Removed && !targetsV0(r) {
		return nil
	}
	m := s.Metric
	unit, text := metricUnit(m)
	q := &quantity{what: m.Name, metric: m, unit: unit, unitText: text, k: 1}
	switch s.Suffix {
	case "_bucket":
		q.kind = qBuckets
	case "_sum":
		q.kind = qSum
	case "_count":
		q.kind, q.unit = qCount, ""
	case "":
		switch m.Type {
		case catalog.Gauge:
			q.kind = qValue
		case catalog.Counter:
			q.kind = qRaw
		default:
			return nil
		}
	default:
		return nil
	}
	return q
}

func callQuantity(c *parser.Call, r *Rule, ff *fileFacts) *quantity {
	name := callName(c)
	if len(c.Args) == 0 {
		return nil
	}
	switch name {
	case "rate", "irate", "increase":
		q := quantityOf(c.Args[0], r, ff)
		if q == nil {
			return nil
		}
		switch q.kind {
		case qBuckets, qSum, qCount:
			return q
		case qRaw:
			if q.unit != "" {
				return q.with(qRate)
			}
			return q.with(qEvents)
		}
		return nil
	case "histogram_quantile":
		if len(c.Args) != 2 {
			return nil
		}
		q := quantityOf(c.Args[1], r, ff)
		if q == nil || q.kind != qBuckets {
			return nil
		}
		v := q.with(qValue)
		v.quantile = true
		for _, set := range q.metric.Buckets {
			for _, b := range set {
				if !math.IsInf(b, 1) && b > v.maxBucket {
					v.maxBucket = b
				}
			}
		}
		return v
	case "abs", "ceil", "floor", "round", "clamp", "clamp_min", "clamp_max",
		"avg_over_time", "min_over_time", "max_over_time", "last_over_time", "quantile_over_time":
		q := quantityOf(firstVectorArg(c), r, ff)
		if q == nil || q.kind != qValue {
			return nil
		}
		return q
	}
	return nil
}

// firstVectorArg is the argument of a function that carries its series.
func firstVectorArg(c *parser.Call) parser.Expr {
	for _, a := range c.Args {
		switch a.Type() {
		case parser.ValueTypeVector, parser.ValueTypeMatrix:
			return a
		}
	}
	return nil
}

func binaryQuantity(b *parser.BinaryExpr, r *Rule, ff *fileFacts) *quantity {
	if b == nil {
		return nil
	}
	if lit := numberLiteral(b.RHS); lit != nil {
		return scaled(quantityOf(b.LHS, r, ff), b.Op, lit.Val, false)
	}
	if lit := numberLiteral(b.LHS); lit != nil {
		return scaled(quantityOf(b.RHS, r, ff), b.Op, lit.Val, true)
	}
	switch {
	case b.Op.IsComparisonOperator() && !b.ReturnBool, b.Op == parser.LAND, b.Op == parser.LUNLESS:
		return quantityOf(b.LHS, r, ff) // a filter keeps the left side's values
	case b.Op != parser.DIV:
		return nil
	}
	if q := usedShare(b, r, ff); q != nil {
		return q
	}
	num, den := quantityOf(b.LHS, r, ff), quantityOf(b.RHS, r, ff)
	if num == nil || den == nil {
		return nil
	}
	switch {
	case num.kind == qSum && den.kind == qCount && num.metric == den.metric,
		num.kind == qRate && den.kind == qEvents:
		// A mean observation: rate(x_sum) / rate(x_count), or Triton's
		// rate(nv_inference_request_duration_us) / rate(nv_inference_request_success).
		v := num.with(qValue)
		v.k = num.k / den.k
		return v
	}
	return nil
}

// scaled is q multiplied or divided by a number: x * 100, x / 1024.
func scaled(q *quantity, op parser.ItemType, c float64, numberFirst bool) *quantity {
	if q == nil || q.kind != qValue || c == 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return nil
	}
	v := *q
	switch {
	case op == parser.MUL:
		v.k *= c
	case op == parser.DIV && !numberFirst:
		v.k /= c
	case op.IsComparisonOperator() && !numberFirst:
		return &v // x > 5 as a filter: x's values
	default:
		return nil
	}
	return &v
}

// usedShare recognises used / (used + free): a share between 0 and 1 of
// gauges in one unit (DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED +
// DCGM_FI_DEV_FB_FREE)), whatever aggregation is around each term.
func usedShare(b *parser.BinaryExpr, r *Rule, ff *fileFacts) *quantity {
	num := gaugeTerm(b.LHS, r, ff)
	if num == nil {
		return nil
	}
	sum, ok := unwrapParens(b.RHS).(*parser.BinaryExpr)
	if !ok || sum == nil || sum.Op != parser.ADD {
		return nil
	}
	var terms []parser.Expr
	var collect func(e parser.Expr) bool
	collect = func(e parser.Expr) bool {
		if s, ok := unwrapParens(e).(*parser.BinaryExpr); ok && s != nil && s.Op == parser.ADD && s.VectorMatching != nil {
			return collect(s.LHS) && collect(s.RHS)
		}
		terms = append(terms, e)
		return len(terms) < 8
	}
	if !collect(sum) {
		return nil
	}
	found := false
	for _, t := range terms {
		q := gaugeTerm(t, r, ff)
		if q == nil || q.unit != num.unit {
			return nil
		}
		found = found || q.metric == num.metric
	}
	if !found {
		return nil
	}
	return &quantity{kind: qValue, what: b.String(), unit: "fraction", unitText: "a share from 0 to 1", k: 1}
}

// gaugeTerm is a gauge with a unit, under any number of aggregations that
// keep its sign (sum, avg, min, max).
func gaugeTerm(e parser.Expr, r *Rule, ff *fileFacts) *quantity {
	for i := 0; i < maxWalkDepth; i++ {
		agg, ok := unwrapParens(e).(*parser.AggregateExpr)
		if !ok || agg == nil {
			break
		}
		switch agg.Op {
		case parser.SUM, parser.AVG, parser.MIN, parser.MAX:
			e = agg.Expr
			continue
		}
		return nil
	}
	vs, ok := unwrapParens(e).(*parser.VectorSelector)
	if !ok {
		return nil
	}
	q := selectorQuantity(vs, r, ff)
	if q == nil || q.kind != qValue || q.unit == "" || q.unit == "fraction" || q.unit == "percent" {
		return nil
	}
	return q
}

// metricUnit normalises the catalogue's unit of a metric, or takes it from
// the name; it returns the normalised unit and the words to name it with.
func metricUnit(m *catalog.Metric) (string, string) {
	u := strings.TrimSpace(m.Unit)
	lower := strings.ToLower(u)
	switch {
	case strings.HasPrefix(lower, "fraction"), lower == "ratio":
		return "fraction", u
	case lower == "%", lower == "percent":
		return "percent", "%"
	case u == "MiB":
		return "MiB", "MiB"
	case lower == "bytes":
		return "bytes", "bytes"
	case lower == "seconds", lower == "s":
		return "seconds", "seconds"
	case lower == "ms":
		return "ms", "milliseconds"
	case lower == "us", lower == "µs":
		return "us", "microseconds"
	case lower == "ns":
		return "ns", "nanoseconds"
	case u == "C":
		return "C", "°C"
	case u != "":
		return "", u
	}
	switch {
	case strings.HasSuffix(m.Name, "_seconds"):
		return "seconds", "seconds"
	case strings.HasSuffix(m.Name, "_ms"):
		return "ms", "milliseconds"
	case strings.HasSuffix(m.Name, "_us"):
		return "us", "microseconds"
	case strings.HasSuffix(m.Name, "_bytes"):
		return "bytes", "bytes"
	}
	return "", ""
}

// implausible returns the finding for a threshold t compared with q by
// op (q op t), or "" when t is plausible in q's unit.
func implausible(q *quantity, lit float64, op string) string {
	t := lit / q.k // the threshold in the metric's unit
	shown := fmt.Sprintf("%s %s", op, fmtNum(lit))
	switch {
	case q.unit == "fraction" && t > 1:
		hint := ""
		if t <= 100 {
			hint = fmt.Sprintf("; as a fraction, %s%% is %s", fmtNum(t), fmtNum(t/100*q.k))
		}
		return fmt.Sprintf("%s is %s, never above 1: %s is %s%s", q.what, describeFraction(q), shown, truth(op), hint)
	case q.unit == "percent" && t > 100:
		return fmt.Sprintf("%s is in %% (0 to 100): %s is %s", q.what, shown, truth(op))
	case q.unit == "C" && t > 150:
		return fmt.Sprintf("%s is in °C: %s°C is hotter than any GPU runs (they throttle near 90°C), so %s is %s; is the threshold in °F or K?",
			q.what, fmtNum(t), shown, truth(op))
	case gpuMemory(q) && toMiB(q, t) > gpuMemoryMaxMiB:
		mib := toMiB(q, t)
		return fmt.Sprintf("%s is in %s: %s %s is %s, more memory than any GPU has, so %s is %s; write the threshold in %s "+
			"(read as bytes, %s is %s MiB; as KiB, %s MiB)",
			q.what, q.unitText, fmtNum(t), q.unitText, humanMiB(mib), shown, truth(op), q.unitText,
			fmtNum(t), fmtNum(t/(1<<20)), fmtNum(t/(1<<10)))
	case q.quantile && q.maxBucket > 0 && t > q.maxBucket:
		ms := ""
		if q.unit == "seconds" && t >= 100 {
			ms = fmt.Sprintf("; is the threshold in milliseconds (%s ms is %s s)?", fmtNum(t), fmtNum(t/1000))
		}
		return fmt.Sprintf("histogram_quantile over %s (%s) never returns more than its largest finite bucket, %s%s: %s is %s%s",
			q.what, q.unitText, fmtNum(q.maxBucket), unitSymbol(q.unit), shown, truth(op), ms)
	case (q.unit == "ms" || q.unit == "us") && t > 0 && t < 1 && strings.Contains(op, ">"):
		what := map[string]string{"ms": "a millisecond", "us": "a microsecond"}[q.unit]
		factor := map[string]float64{"ms": 1e3, "us": 1e6}[q.unit]
		return fmt.Sprintf("%s is in %s: %s means less than %s, which no request takes; is the threshold in seconds "+
			"(%s s is %s %s)?", q.what, q.unitText, shown, what, fmtNum(t), fmtNum(t*factor), q.unit)
	}
	return ""
}

// truth says what a comparison with a threshold above every value the
// quantity can take always gives.
func truth(op string) string {
	if op == ">" || op == ">=" || op == "==" {
		return "never true"
	}
	return "always true"
}

func describeFraction(q *quantity) string {
	if q.metric == nil {
		return q.unitText
	}
	return "a fraction from 0 to 1 (catalogue: " + q.unitText + ")"
}

func gpuMemory(q *quantity) bool {
	return strings.HasPrefix(q.what, "DCGM_FI_DEV_FB_") && q.unit == "MiB" ||
		strings.HasPrefix(q.what, "nv_gpu_memory_") && q.unit == "bytes"
}

func toMiB(q *quantity, t float64) float64 {
	if q.unit == "bytes" {
		return t / (1 << 20)
	}
	return t
}

func humanMiB(mib float64) string {
	if mib >= 1<<20 {
		return fmtNum(mib/(1<<20)) + " TiB"
	}
	return fmtNum(mib/(1<<10)) + " GiB"
}

// fmtNum prints a number without an exponent: whole above 1000, else
// with three significant digits.
func fmtNum(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return strconv.FormatFloat(f, 'g', -1, 64)
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.FormatFloat(f, 'f', -1, 64)
	case math.Abs(f) >= 1000:
		return strconv.FormatFloat(math.Round(f), 'f', -1, 64)
	}
	g, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 3, 64), 64)
	return strconv.FormatFloat(g, 'f', -1, 64)
}

// unitSymbol is the short form of a normalised unit, after a number.
func unitSymbol(u string) string {
	switch u {
	case "seconds":
		return " s"
	case "us":
		return " µs"
	case "ms", "ns", "MiB":
		return " " + u
	case "bytes":
		return " bytes"
	}
	return ""
}
