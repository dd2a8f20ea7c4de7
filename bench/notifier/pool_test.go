package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const reportTail = `
Every round (notifications/s, p50, p99, CPU per notification of the measured process):

| round | Alertmanager 0.25.0 (HTTP) | paged (HTTP /api/v2/alerts, own process) |
|---|---|---|
| 1 | 1000, 100ms, 400ms, 385 µs | 2000, 50ms, 200ms, 545 µs |
| 2 | 4000, 20ms, 80ms, 295 µs | 2000, 40ms, 160ms, 200 µs |
| 3 | 2000, 1.5s, 2s, 210 µs | 3000, 500ms, 1s, 165 µs |

Peak resident memory at the end of the run (VmHWM): ...
`

func TestParseRounds(t *testing.T) {
	r, err := parseRounds("a.md", strings.NewReader("# Notifier benchmark\n\n| system | x |\n|---|---|\n| a | b |\n"+reportTail))
	if err != nil {
		t.Fatal(err)
	}
	if r.names != [2]string{"Alertmanager 0.25.0 (HTTP)", "paged (HTTP /api/v2/alerts, own process)"} {
		t.Errorf("names %q", r.names)
	}
	if len(r.base) != 3 || len(r.vs) != 3 {
		t.Fatalf("%d and %d rounds, want 3", len(r.base), len(r.vs))
	}
	if want := (round{throughput: 2000, p50: 1500 * time.Millisecond, p99: 2 * time.Second}); r.base[2] != want {
		t.Errorf("round 3 of the first system: %+v, want %+v", r.base[2], want)
	}
	rs := r.ratios()
	if got := median(rs.tp); got != 1.5 { // 2, 0.5, 1.5
		t.Errorf("median throughput ratio %v, want 1.5", got)
	}
	// Over all rounds: 3 rounds' time is 1/1000+1/4000+1/2000 against
	// 1/2000+1/2000+1/3000.
	want := (1.0/1000 + 1.0/4000 + 1.0/2000) / (1.0/2000 + 1.0/2000 + 1.0/3000)
	if got := overAll([]report{r}); math.Abs(got-want) > 1e-9 {
		t.Errorf("over all rounds ×%v, want ×%v", got, want)
	}
}

func TestParseRoundsRejects(t *testing.T) {
	for name, text := range map[string]string{
		"no table":       "# Notifier benchmark\n",
		"one system":     "| round | Alertmanager |\n|---|---|\n| 1 | 1000, 1ms, 2ms |\n",
		"bad throughput": "| round | a | b |\n|---|---|---|\n| 1 | fast, 1ms, 2ms | 1000, 1ms, 2ms |\n",
		"bad p99":        "| round | a | b |\n|---|---|---|\n| 1 | 1000, 1ms, 2ms | 1000, 1ms, soon |\n",
		"short cell":     "| round | a | b |\n|---|---|---|\n| 1 | 1000, 1ms | 1000, 1ms, 2ms |\n",
	} {
		if _, err := parseRounds("x.md", strings.NewReader(text)); err == nil {
			t.Errorf("%s: parsed", name)
		} else if !strings.HasPrefix(err.Error(), "x.md") {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}

func TestPool(t *testing.T) {
	dir := t.TempDir()
	// Two runs: paged ×2 in every round of one, ×1 in every round of
	// the other.
	write := func(name string, pagedTP int) string {
		var b strings.Builder
		b.WriteString("| round | Alertmanager 0.25.0 (HTTP) | paged (HTTP /api/v2/alerts, own process) |\n|---|---|---|\n")
		for i := 1; i <= 5; i++ {
			b.WriteString("| " + strconv.Itoa(i) + " | 1000, 100ms, 200ms, 1 µs | " + strconv.Itoa(pagedTP) + ", 50ms, 100ms, 1 µs |\n")
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.md", 2000), write("b.md", 1000)
	var out strings.Builder
	if err := pool(&out, []string{a, b}, 1.2); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"2 runs, 10 rounds",
		"| throughput | ×2.00 (×1.00–2.00) | ×1.00–2.00 |", // upper median of 1,1,1,1,1,2,2,2,2,2
		"| p50 latency | ×0.50 (×0.50–0.50) | ×0.50–0.50 |",
		"at least ×1.20: 1 of 2",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if err := pool(&out, []string{a, filepath.Join(dir, "missing.md")}, 1.2); err == nil {
		t.Error("a missing report pooled")
	}
}
