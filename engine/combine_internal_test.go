package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// TestCombinedChunks: members are split evenly into queries of at most
// maxCombined rules; a member left alone in its chunk, an excluded member
// and a scalar rule are queried on their own; every query parses and
// names each of its members once.
func TestCombinedChunks(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	build := func(n int) (*combined, []*ruleDef) {
		defs := make([]*ruleDef, n)
		exprs := make([]parser.Expr, n)
		for i := range n {
			q := fmt.Sprintf("load{rule=\"%d\"} > %d", i, i)
			if i == 3 {
				q = "scalar(sum(load))"
			}
			e, err := p.ParseExpr(q)
			if err != nil {
				t.Fatal(err)
			}
			defs[i] = &ruleDef{name: fmt.Sprintf("R%d", i), query: e.String(), member: -1}
			exprs[i] = e
		}
		return newCombined("g", defs, exprs), defs
	}
	sizes := func(c *combined) []int {
		var out []int
		for _, ch := range c.chunks {
			n := 0
			for m, in := range ch.in {
				if in {
					n++
					if c.chunkOf[m] < 0 || c.chunks[c.chunkOf[m]].expr != ch.expr {
						t.Errorf("member %d is in a chunk that chunkOf does not name", m)
					}
					if strings.Count(ch.expr, fmt.Sprintf("%q, %q", combinedLabel, fmt.Sprint(m))) != 1 {
						t.Errorf("chunk does not name member %d once: %s", m, ch.expr)
					}
				}
			}
			if _, err := p.ParseExpr(ch.expr); err != nil {
				t.Errorf("chunk does not parse: %v\n%s", err, ch.expr)
			}
			out = append(out, n)
		}
		return out
	}

	c, defs := build(26) // 25 members: R3 is a scalar
	if defs[3].member != -1 || defs[4].member != 3 || len(c.defs) != 25 {
		t.Fatalf("members: R3 %d, R4 %d, %d in all", defs[3].member, defs[4].member, len(c.defs))
	}
	if got := fmt.Sprint(sizes(c)); got != "[8 8 9]" {
		t.Errorf("chunks of 25 members: %s, want [8 8 9]", got)
	}
	for m := range 24 {
		c.excluded[m] = true
	}
	c.rebuild()
	if len(c.chunks) != 0 || c.chunkOf[24] != -1 {
		t.Errorf("one member left: chunks %v, chunkOf %v", len(c.chunks), c.chunkOf)
	}

	c, _ = build(12) // 11 members
	if got := fmt.Sprint(sizes(c)); got != "[5 6]" {
		t.Errorf("chunks of 11 members: %s, want [5 6]", got)
	}
	c.excluded[0], c.excluded[1], c.excluded[2], c.excluded[3] = true, true, true, true
	c.rebuild()
	if got := fmt.Sprint(sizes(c)); got != "[7]" {
		t.Errorf("chunks of 7 members: %s, want [7]", got)
	}

	if c, _ := build(2); c == nil || fmt.Sprint(sizes(c)) != "[2]" {
		t.Errorf("two rules: not one query of two")
	}
	if c, defs := build(1); c != nil || defs[0].member != -1 {
		t.Errorf("one rule: combined %v, member %d", c, defs[0].member)
	}
}
