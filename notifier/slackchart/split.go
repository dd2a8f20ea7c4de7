package slackchart

import (
	"fmt"

	"github.com/prometheus/prometheus/promql/parser"
)

// Plan is what to chart for a rule: the expression to run as a range
// query and, when the rule compares it with a number, that number.
type Plan struct {
	// Query is the charted expression as the parser prints it.
	Query string
	// Threshold is the number Query is compared with; nil when the rule
	// has no such comparison at its top level.
	Threshold *float64
	// Op is the comparison read with Query on the left (">" for
	// `0.9 < x`); empty when Threshold is nil.
	Op string
}

// Split finds what to chart for a rule's expression. A top-level
// comparison with a number literal, `lhs > 0.9` or `0.9 < rhs` (through
// parentheses, without bool), charts the other side against the number.
// Under and, or and unless the left operand is followed: `a > 0.9 and
// b > 1` charts a with 0.9. Any other expression is charted whole,
// without a threshold.
func Split(expr string) (Plan, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return Plan{}, fmt.Errorf("parse %q: %w", expr, err)
	}
	if p, ok := splitThreshold(e); ok {
		return p, nil
	}
	return Plan{Query: unparen(e).String()}, nil
}

func splitThreshold(e parser.Expr) (Plan, bool) {
	for {
		switch x := e.(type) {
		case *parser.ParenExpr:
			e = x.Expr
			continue
		case *parser.BinaryExpr:
			if x.Op.IsSetOperator() {
				e = x.LHS
				continue
			}
			if !x.Op.IsComparisonOperator() || x.ReturnBool {
				return Plan{}, false
			}
			if v, ok := number(x.RHS); ok {
				if _, both := number(x.LHS); !both {
					return Plan{Query: unparen(x.LHS).String(), Threshold: &v, Op: x.Op.String()}, true
				}
			}
			if v, ok := number(x.LHS); ok {
				if _, both := number(x.RHS); !both {
					return Plan{Query: unparen(x.RHS).String(), Threshold: &v, Op: flip(x.Op)}, true
				}
			}
		}
		return Plan{}, false
	}
}

// number is the value of a number literal, through parentheses and
// unary signs: 0.9, (0.9), -(1), +1.
func number(e parser.Expr) (float64, bool) {
	sign := 1.0
	for {
		switch x := e.(type) {
		case *parser.ParenExpr:
			e = x.Expr
		case *parser.UnaryExpr:
			if x.Op == parser.SUB {
				sign = -sign
			}
			e = x.Expr
		case *parser.NumberLiteral:
			return sign * x.Val, true
		default:
			return 0, false
		}
	}
}

func unparen(e parser.Expr) parser.Expr {
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// flip is the comparison with its operands swapped: 0.9 < x is x > 0.9.
func flip(op parser.ItemType) string {
	switch op {
	case parser.GTR:
		return "<"
	case parser.LSS:
		return ">"
	case parser.GTE:
		return "<="
	case parser.LTE:
		return ">="
	}
	return op.String()
}
