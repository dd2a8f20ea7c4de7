package rules_test

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules"
)

// Set changes the literal in the parsed expression, so the printed
// expression carries the new threshold and nothing else changes.
func TestThresholdSet(t *testing.T) {
	cases := map[string]string{
		`max by (a) (x) > 0.95`:                  `max by (a) (x) > 0.9`,
		`10 < sum(rate(y[5m]))`:                  `0.9 < sum(rate(y[5m]))`,
		`(x / y) > 0.05 and sum(z) > 0.1`:        `(x / y) > 0.9 and sum(z) > 0.1`,
		`histogram_quantile(0.99, sum(b)) > (5)`: `histogram_quantile(0.99, sum(b)) > (0.9)`,
	}
	p := parser.NewParser(parser.Options{})
	for in, want := range cases {
		e, err := p.ParseExpr(in)
		if err != nil {
			t.Fatal(err)
		}
		th := rules.SplitThreshold(e)
		if th == nil {
			t.Fatalf("%s: no threshold", in)
		}
		th.Set(0.9)
		if got := e.String(); got != want || !th.Overridden || th.Value != 0.9 {
			t.Errorf("%s: Set(0.9) gives %q (overridden %v), want %q", in, got, th.Overridden, want)
		}
	}
	for _, in := range []string{`x > bool 1`, `absent(up)`, `x > y`, `sum(x)`} {
		e, err := p.ParseExpr(in)
		if err != nil {
			t.Fatal(err)
		}
		if th := rules.SplitThreshold(e); th != nil {
			t.Errorf("%s: threshold %+v, want none", in, th)
		}
	}
}
