package backtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// Threshold is the numeric literal of an alerting expression's top-level
// comparison, `lhs > 0.9` or `0.9 < lhs`. Through `and`, `or` and
// `unless`, the left operand is followed: in `a > 5 and b > 1` the
// threshold is 5.
type Threshold struct {
	// LHS is the compared expression, charted against the threshold.
	LHS string `json:"lhs"`
	// Op is the comparison as read left to right with LHS first.
	Op string `json:"op"`
	// Value is the threshold used; Original the one in the rule file.
	Value    float64 `json:"value"`
	Original float64 `json:"original"`
	// Overridden is set when --set changed Value.
	Overridden bool `json:"overridden"`

	lit *parser.NumberLiteral
}

// SplitThreshold finds the threshold of expr. It returns nil when the
// expression has no top-level comparison with a number.
func SplitThreshold(expr parser.Expr) *Threshold {
	for {
		switch e := expr.(type) {
		case *parser.ParenExpr:
			expr = e.Expr
			continue
		case *parser.BinaryExpr:
			if e.Op.IsSetOperator() {
				expr = e.LHS
				continue
			}
			if !e.Op.IsComparisonOperator() || e.ReturnBool {
				return nil
			}
			if lit := number(e.RHS); lit != nil {
				return &Threshold{LHS: e.LHS.String(), Op: e.Op.String(), Value: lit.Val, Original: lit.Val, lit: lit}
			}
			if lit := number(e.LHS); lit != nil {
				return &Threshold{LHS: e.RHS.String(), Op: flip(e.Op.String()), Value: lit.Val, Original: lit.Val, lit: lit}
			}
		}
		return nil
	}
}

// set changes the threshold in the parsed expression.
func (t *Threshold) set(v float64) {
	t.Value, t.Overridden = v, v != t.Original
	t.lit.Val = v
}

func number(e parser.Expr) *parser.NumberLiteral {
	for {
		switch x := e.(type) {
		case *parser.ParenExpr:
			e = x.Expr
		case *parser.NumberLiteral:
			return x
		default:
			return nil
		}
	}
}

func flip(op string) string {
	switch op {
	case ">":
		return "<"
	case "<":
		return ">"
	case ">=":
		return "<="
	case "<=":
		return ">="
	}
	return op
}

// ParseSet parses --set values, NAME=VALUE, into a map by alert name.
func ParseSet(values []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, s := range values {
		name, val, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("--set %q: want ALERTNAME=NUMBER", s)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("--set %q: %q is not a number", s, val)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--set %q: %s is set twice", s, name)
		}
		out[name] = v
	}
	return out, nil
}
