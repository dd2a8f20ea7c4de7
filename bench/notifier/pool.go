package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A run of 20 rounds measures each round's ratio with a spread of its
// own (one system's round draws a garbage collection, the other's does
// not), so the median of one run's ratios moves from run to run. -pool
// reads the reports of several runs and says how far: the median of
// every run, the median over all their rounds, and how much that pooled
// median moves when the runs are resampled.

// round is one system's figures in one round of a report.
type round struct {
	throughput float64
	p50, p99   time.Duration
}

// report is the "Every round" table of one report: the first system's
// rounds, and the second's.
type report struct {
	file     string
	names    [2]string
	base, vs []round
}

// parseRounds reads the table a report prints under "Every round".
func parseRounds(file string, r io.Reader) (report, error) {
	out := report{file: file}
	sc := bufio.NewScanner(r)
	line, inTable := 0, false
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if !inTable {
			if strings.HasPrefix(t, "| round |") {
				cells := splitRow(t)
				if len(cells) < 3 {
					return out, fmt.Errorf("%s:%d: the table has %d systems, want at least 2", file, line, len(cells)-1)
				}
				out.names = [2]string{cells[1], cells[2]}
				inTable = true
			}
			continue
		}
		if strings.HasPrefix(t, "|---") {
			continue
		}
		if !strings.HasPrefix(t, "|") {
			break
		}
		cells := splitRow(t)
		if len(cells) < 3 {
			return out, fmt.Errorf("%s:%d: a round with %d cells", file, line, len(cells))
		}
		a, err := parseCell(cells[1])
		if err != nil {
			return out, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		b, err := parseCell(cells[2])
		if err != nil {
			return out, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		out.base, out.vs = append(out.base, a), append(out.vs, b)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", file, err)
	}
	if len(out.base) == 0 {
		return out, fmt.Errorf("%s: no \"Every round\" table", file)
	}
	return out, nil
}

func splitRow(t string) []string {
	cells := strings.Split(strings.Trim(t, "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// parseCell reads "3470, 228ms, 510ms, 385 µs": notifications/s, p50,
// p99 and (ignored here) CPU per notification.
func parseCell(c string) (round, error) {
	f := strings.Split(c, ",")
	if len(f) < 3 {
		return round{}, fmt.Errorf("cell %q: want notifications/s, p50, p99", c)
	}
	tp, err := strconv.ParseFloat(strings.TrimSpace(f[0]), 64)
	if err != nil || tp <= 0 {
		return round{}, fmt.Errorf("cell %q: notifications/s %q", c, f[0])
	}
	p50, err := time.ParseDuration(strings.TrimSpace(f[1]))
	if err != nil || p50 <= 0 {
		return round{}, fmt.Errorf("cell %q: p50 %q", c, f[1])
	}
	p99, err := time.ParseDuration(strings.TrimSpace(f[2]))
	if err != nil || p99 <= 0 {
		return round{}, fmt.Errorf("cell %q: p99 %q", c, f[2])
	}
	return round{throughput: tp, p50: p50, p99: p99}, nil
}

// ratios are the per-round ratios of one run, second system over first.
type ratios struct{ tp, p50, p99 []float64 }

func (r report) ratios() ratios {
	var out ratios
	for i := range r.base {
		a, b := r.base[i], r.vs[i]
		out.tp = append(out.tp, b.throughput/a.throughput)
		out.p50 = append(out.p50, b.p50.Seconds()/a.p50.Seconds())
		out.p99 = append(out.p99, b.p99.Seconds()/a.p99.Seconds())
	}
	return out
}

// overAll is the throughput ratio over all rounds of runs: every round
// sends the same number of alerts, so a system's throughput over all
// rounds is the harmonic mean of its rounds'.
func overAll(runs []report) float64 {
	var ta, tb float64
	for _, r := range runs {
		for i := range r.base {
			ta += 1 / r.base[i].throughput
			tb += 1 / r.vs[i].throughput
		}
	}
	return ta / tb
}

// pooled is the median over all rounds of runs of one ratio.
func pooled(runs []report, pick func(ratios) []float64) float64 {
	var all []float64
	for _, r := range runs {
		all = append(all, pick(r.ratios())...)
	}
	return median(all)
}

// interval resamples the runs (whole runs, since rounds of one run share
// its processes' growing heaps) and returns the 2.5th and 97.5th
// percentiles of stat over the resamples.
func interval(runs []report, stat func([]report) float64, rng *rand.Rand) (lo, hi float64) {
	const n = 2000
	v := make([]float64, n)
	sample := make([]report, len(runs))
	for i := range v {
		for j := range sample {
			sample[j] = runs[rng.IntN(len(runs))]
		}
		v[i] = stat(sample)
	}
	slices.Sort(v)
	return v[n*25/1000], v[n*975/1000-1]
}

// pool prints what the reports in files say together.
func pool(w io.Writer, files []string, target float64) error {
	var runs []report
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		r, err := parseRounds(f, fh)
		fh.Close()
		if err != nil {
			return err
		}
		if len(runs) > 0 && r.names != runs[0].names {
			return fmt.Errorf("%s compares %s with %s, %s compares %s with %s", f, r.names[1], r.names[0], runs[0].file, runs[0].names[1], runs[0].names[0])
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return fmt.Errorf("-pool: no reports given")
	}
	rounds := 0
	var perRun, perRunAll []float64
	for _, r := range runs {
		rounds += len(r.base)
		perRun = append(perRun, median(r.ratios().tp))
		perRunAll = append(perRunAll, overAll([]report{r}))
	}
	atLeast := func(v []float64) int {
		n := 0
		for _, x := range v {
			if x >= target {
				n++
			}
		}
		return n
	}
	rng := rand.New(rand.NewPCG(1, 2)) // the same files give the same intervals
	stat := func(pick func(ratios) []float64) func([]report) float64 {
		return func(rs []report) float64 { return pooled(rs, pick) }
	}
	tp := func(r ratios) []float64 { return r.tp }
	p50 := func(r ratios) []float64 { return r.p50 }
	p99 := func(r ratios) []float64 { return r.p99 }
	fmt.Fprintf(w, "%d runs, %d rounds: %s ÷ %s\n\n", len(runs), rounds, runs[0].names[1], runs[0].names[0])
	fmt.Fprintf(w, "| ratio | pooled median of the per-round ratios (95 %% interval over resampled runs) | the runs' own medians |\n|---|---|---|\n")
	for _, x := range []struct {
		name string
		pick func(ratios) []float64
	}{{"throughput", tp}, {"p50 latency", p50}, {"p99 latency", p99}} {
		var own []float64
		for _, r := range runs {
			own = append(own, median(x.pick(r.ratios())))
		}
		lo, hi := interval(runs, stat(x.pick), rng)
		fmt.Fprintf(w, "| %s | ×%.2f (×%.2f–%.2f) | ×%.2f–%.2f |\n", x.name, pooled(runs, x.pick), lo, hi, slices.Min(own), slices.Max(own))
	}
	lo, hi := interval(runs, overAll, rng)
	fmt.Fprintf(w, "| throughput over all rounds | ×%.2f (×%.2f–%.2f) | ×%.2f–%.2f |\n", overAll(runs), lo, hi, slices.Min(perRunAll), slices.Max(perRunAll))
	fmt.Fprintf(w, "\nRuns whose median per-round throughput ratio is at least ×%.2f: %d of %d; whose throughput over all rounds is: %d of %d.\n",
		target, atLeast(perRun), len(runs), atLeast(perRunAll), len(runs))
	return nil
}
