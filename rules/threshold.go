package rules

import "github.com/prometheus/prometheus/promql/parser"

// Threshold is the numeric literal of an alerting expression's top-level
// comparison, `lhs > 0.9` or `0.9 < lhs`. Through `and`, `or` and
// `unless`, the left operand is followed: in `a > 5 and b > 1` the
// threshold is 5. `paged backtest --set` and the packs' `set:` override
// both change this literal, and only this one.
type Threshold struct {
	// LHS is the compared expression, charted against the threshold.
	LHS string `json:"lhs"`
	// Op is the comparison as read left to right with LHS first.
	Op string `json:"op"`
	// Value is the threshold used; Original the one in the rule file.
	Value    float64 `json:"value"`
	Original float64 `json:"original"`
	// Overridden is set when Set changed Value.
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
			if lit := numberLiteral(e.RHS); lit != nil {
				return &Threshold{LHS: e.LHS.String(), Op: e.Op.String(), Value: lit.Val, Original: lit.Val, lit: lit}
			}
			if lit := numberLiteral(e.LHS); lit != nil {
				return &Threshold{LHS: e.RHS.String(), Op: flipComparison(e.Op.String()), Value: lit.Val, Original: lit.Val, lit: lit}
			}
		}
		return nil
	}
}

// Set changes the threshold, in the parsed expression too: printing the
// expression afterwards shows the new value.
func (t *Threshold) Set(v float64) {
	t.Value, t.Overridden = v, v != t.Original
	t.lit.Val = v
}

func numberLiteral(e parser.Expr) *parser.NumberLiteral {
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

func flipComparison(op string) string {
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
