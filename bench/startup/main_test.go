package main

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for _, tc := range []struct{ q, want float64 }{{0, 1}, {0.25, 1.75}, {0.5, 2.5}, {0.75, 3.25}, {1, 4}} {
		if got := quantile(v, tc.q); got != tc.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", v, tc.q, got, tc.want)
		}
	}
	if got := quantile([]float64{7}, 0.75); got != 7 {
		t.Errorf("quantile of one value = %v, want 7", got)
	}
}

func TestMedianOf(t *testing.T) {
	ss := []sample{{wall: 30 * time.Millisecond}, {wall: 10 * time.Millisecond}, {wall: 20 * time.Millisecond}}
	if got := medianOf(ss, wallMs); got != 20 {
		t.Errorf("median wall = %v ms, want 20", got)
	}
}

func TestCountRules(t *testing.T) {
	out := "Checking a.yml\n  SUCCESS: 11 rules found\n\nChecking b.yml\n  SUCCESS: 0 rules found\n\nChecking c.yml\n  SUCCESS: 7 rules found\n"
	if got := countRules([]byte(out)); got != 18 {
		t.Errorf("countRules = %d, want 18", got)
	}
}

func TestExits(t *testing.T) {
	if got := exits([]sample{{exit: 1}, {exit: 0}, {exit: 1}}); got != "1,0" {
		t.Errorf("exits = %q, want \"1,0\"", got)
	}
}

func TestParseOptions(t *testing.T) {
	t.Setenv("PAGED_TAGS", "")
	t.Setenv("PAGED", "")
	o, err := parseOptions([]string{"-warmup", "1", "5"})
	if err != nil || o.pairs != 5 || o.warmup != 1 {
		t.Errorf("parseOptions = %+v, %v; want 5 pairs after 1 warm-up", o, err)
	}
	if _, err := parseOptions([]string{"0"}); err == nil {
		t.Error("0 pairs accepted")
	}
	if _, err := parseOptions([]string{"-paged", "/bin/true", "-tags", "x"}); err == nil {
		t.Error("-tags with -paged accepted")
	}
}
