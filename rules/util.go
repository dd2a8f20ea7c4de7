package rules

import (
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/parser/posrange"
)

// nodeRange is n.PositionRange(), or false for a nil node (a typed nil in
// an interface included), which the parser never produces but a check must
// survive.
func nodeRange(n parser.Node) (pr posrange.PositionRange, ok bool) {
	if n == nil {
		return pr, false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return n.PositionRange(), true
}

// safeRange is n's position range, or an empty range at 0 when n cannot
// give one (an odd tree built by hand).
func safeRange(n parser.Node) posrange.PositionRange {
	pr, _ := nodeRange(n)
	return pr
}

// quoteExpr is a part of an expression for a message: on one line, and
// shortened when long.
func quoteExpr(e *Expr, pr posrange.PositionRange) string {
	s := strings.Join(strings.Fields(exprSlice(e, pr)), " ")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "( ", "("), " )", ")")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}
