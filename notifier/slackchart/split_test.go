package slackchart

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		expr, query string
		threshold   float64
		op          string // empty: no threshold
	}{
		{expr: `up > 0.9`, query: `up`, threshold: 0.9, op: ">"},
		{expr: `up >= 1`, query: `up`, threshold: 1, op: ">="},
		{expr: `up < 1`, query: `up`, threshold: 1, op: "<"},
		{expr: `up <= 1`, query: `up`, threshold: 1, op: "<="},
		{expr: `up == 0`, query: `up`, threshold: 0, op: "=="},
		{expr: `up != 1`, query: `up`, threshold: 1, op: "!="},
		// The literal on the left: the operator as read with the query first.
		{expr: `0.9 < up`, query: `up`, threshold: 0.9, op: ">"},
		{expr: `0.9 >= up`, query: `up`, threshold: 0.9, op: "<="},
		{expr: `1 == up`, query: `up`, threshold: 1, op: "=="},
		// Parentheses around everything, around either side, around the number.
		{expr: `((sum(rate(x[5m])) > 10))`, query: `sum(rate(x[5m]))`, threshold: 10, op: ">"},
		{expr: `(x / y) > 0.05`, query: `x / y`, threshold: 0.05, op: ">"},
		{expr: `x > (5)`, query: `x`, threshold: 5, op: ">"},
		{expr: `x > ((5))`, query: `x`, threshold: 5, op: ">"},
		// Signs.
		{expr: `x < -1`, query: `x`, threshold: -1, op: "<"},
		{expr: `x < -(2)`, query: `x`, threshold: -2, op: "<"},
		{expr: `x < +(2)`, query: `x`, threshold: 2, op: "<"},
		{expr: `-(3) > x`, query: `x`, threshold: -3, op: "<"},
		{expr: `x > 1e3`, query: `x`, threshold: 1000, op: ">"},
		{expr: `x > 0x10`, query: `x`, threshold: 16, op: ">"},
		// Set operators: the left comparison.
		{expr: `a > 0.9 and b > 1`, query: `a`, threshold: 0.9, op: ">"},
		{expr: `(a > 0.9) unless on (job) b`, query: `a`, threshold: 0.9, op: ">"},
		{expr: `a > 5 or b > 1 and c`, query: `a`, threshold: 5, op: ">"},
		{expr: `(a > 5 or b > 1) and c`, query: `a`, threshold: 5, op: ">"},
		{expr: `a == 48 or a == 62`, query: `a`, threshold: 48, op: "=="},
		// A number minus a vector is a vector, not a threshold.
		{expr: `(1 - x) > 0.5`, query: `1 - x`, threshold: 0.5, op: ">"},
		// No threshold: the whole expression, without outer parentheses.
		{expr: `x > bool 1`, query: `x > bool 1`},
		{expr: `x > y`, query: `x > y`},
		{expr: `(x > y) and z > 1`, query: `(x > y) and z > 1`},
		{expr: `absent(up{job="vllm"})`, query: `absent(up{job="vllm"})`},
		{expr: `(sum(x))`, query: `sum(x)`},
		{expr: `x > vector(1)`, query: `x > vector(1)`},
		{expr: `x + 1`, query: `x + 1`},
	} {
		p, err := Split(tc.expr)
		if err != nil {
			t.Errorf("Split(%q): %v", tc.expr, err)
			continue
		}
		if p.Query != tc.query {
			t.Errorf("Split(%q).Query = %q, want %q", tc.expr, p.Query, tc.query)
		}
		switch {
		case tc.op == "" && (p.Threshold != nil || p.Op != ""):
			t.Errorf("Split(%q) = threshold %v %q, want none", tc.expr, *p.Threshold, p.Op)
		case tc.op != "" && p.Threshold == nil:
			t.Errorf("Split(%q): no threshold, want %s %v", tc.expr, tc.op, tc.threshold)
		case tc.op != "" && (*p.Threshold != tc.threshold || p.Op != tc.op):
			t.Errorf("Split(%q) = %s %v, want %s %v", tc.expr, p.Op, *p.Threshold, tc.op, tc.threshold)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	for _, expr := range []string{``, `up >`, `sum(`, `1 < 2`, `rate(x[5m]`, "\x00"} {
		if p, err := Split(expr); err == nil {
			t.Errorf("Split(%q) = %+v, want an error", expr, p)
		}
	}
}

// Every rule of paged's packs splits into a query that parses again; a
// few are checked in full.
func TestSplitPacks(t *testing.T) {
	files, err := filepath.Glob("../../examples/packs/*/*.rules.yaml")
	if err != nil || len(files) < 8 {
		t.Fatalf("pack rule files: %v %v", files, err)
	}
	plans := map[string]Plan{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Groups []struct {
				Rules []struct{ Alert, Record, Expr string }
			}
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		n := 0
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				n++
				p, err := Split(r.Expr)
				if err != nil {
					t.Errorf("%s: %s%s: %v", f, r.Alert, r.Record, err)
					continue
				}
				if _, err := parser.NewParser(parser.Options{}).ParseExpr(p.Query); err != nil {
					t.Errorf("%s: %s: query %q does not parse: %v", f, r.Alert, p.Query, err)
				}
				if (p.Threshold == nil) != (p.Op == "") {
					t.Errorf("%s: %s: threshold %v with op %q", f, r.Alert, p.Threshold, p.Op)
				}
				if r.Alert != "" {
					plans[r.Alert] = p
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no rules read", f)
		}
	}
	for name, want := range map[string]struct {
		query     string
		op        string
		threshold float64
	}{
		"VLLMKVCacheSaturated":   {`max by (model_name, instance, job) (vllm:kv_cache_usage_perc)`, ">", 0.95},
		"VLLMQueueBacklog":       {`sum by (model_name, instance, job) (vllm:num_requests_waiting)`, ">", 10},
		"VLLMThroughputCollapse": {`sum by (model_name, instance, job) (vllm:num_requests_waiting)`, ">", 0},
	} {
		p, ok := plans[name]
		switch {
		case !ok:
			t.Errorf("%s: not in the packs", name)
		case p.Query != want.query || p.Threshold == nil || *p.Threshold != want.threshold || p.Op != want.op:
			t.Errorf("%s: got %q %s %v, want %q %s %v", name, p.Query, p.Op, p.Threshold, want.query, want.op, want.threshold)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{`up > 0.9`, `a > 1 and b`, `-(1) < x`, `sum(x)`, `((x)) >= (((2)))`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		p, err := Split(expr)
		if err != nil {
			return
		}
		if _, err := parser.NewParser(parser.Options{}).ParseExpr(p.Query); err != nil {
			t.Errorf("Split(%q).Query = %q does not parse: %v", expr, p.Query, err)
		}
	})
}
