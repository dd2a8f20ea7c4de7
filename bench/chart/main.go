// Command chart measures what one alert chart costs to draw: the CPU time
// (user+system, from getrusage, so the garbage collector's work on other
// cores counts) and the allocations per rendering of notifier/slackchart,
// the PNG that goes with an alert's first Slack message.
//
//	go run ./bench/chart                      (5 rounds of 50 charts, after 20 warm-up charts)
//	go run ./bench/chart -rounds 9 -n 100
//
// Three charts are drawn, each in its own rounds: the realistic one of
// the target (four series of 360 points, a threshold and the firing
// period shaded, as for the vLLM pack's KV-cache alert over 90 minutes at
// a 15 s step), a dense one (eight series of 5,760 raw 1-second samples,
// more than the image has pixel columns, and four more series left out)
// and the no-data image. It prints a Markdown table: the median of the
// rounds and their range. There is no reference tool to compare with on
// this machine (Grafana's image renderer needs a browser service), so the
// figures are absolute; the target is under 50 ms of CPU per chart.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pagedhq/paged/notifier/slackchart"
)

func main() {
	var (
		rounds = flag.Int("rounds", 5, "rounds per chart")
		n      = flag.Int("n", 50, "charts per round")
		warmup = flag.Int("warmup", 20, "charts drawn before timing")
	)
	flag.Parse()
	log.SetFlags(0)
	if *rounds < 1 || *n < 1 {
		log.Fatal("-rounds and -n must be positive")
	}
	start := time.Now()
	load0 := loadavg()
	charts := []struct {
		name, what string
		c          slackchart.Chart
	}{
		{"realistic", "4 series × 360 points, threshold, firing shaded", realistic()},
		{"dense", "8 of 12 series × 5,760 points, threshold, resolved", dense()},
		{"no data", "the no-data image", noData()},
	}
	type result struct {
		cpu, wall            []float64 // ms per chart, one per round
		allocs, bytes, pngKB float64
		w, h                 int
	}
	results := make([]result, len(charts))
	for i, ch := range charts {
		r := &results[i]
		var buf bytes.Buffer
		for range *warmup {
			buf.Reset()
			if err := slackchart.Render(&buf, ch.c); err != nil {
				log.Fatalf("%s: %v", ch.name, err)
			}
		}
		r.pngKB = float64(buf.Len()) / 1024
		r.w, r.h = pngSize(buf.Bytes())
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		for range *rounds {
			c0, w0 := cpuTime(), time.Now()
			for range *n {
				if err := slackchart.Render(io.Discard, ch.c); err != nil {
					log.Fatalf("%s: %v", ch.name, err)
				}
			}
			wall, cpu := time.Since(w0), cpuTime()-c0
			r.cpu = append(r.cpu, ms(cpu)/float64(*n))
			r.wall = append(r.wall, ms(wall)/float64(*n))
		}
		runtime.ReadMemStats(&ms1)
		total := float64(*rounds * *n)
		r.allocs = float64(ms1.Mallocs-ms0.Mallocs) / total
		r.bytes = float64(ms1.TotalAlloc-ms0.TotalAlloc) / total
	}

	fmt.Printf("## Alert chart rendering (`go run ./bench/chart -rounds %d -n %d`)\n\n", *rounds, *n)
	fmt.Printf("- date: %s, %s of timing\n", start.UTC().Format("2006-01-02 15:04 MST"), time.Since(start).Round(time.Second))
	fmt.Printf("- machine: %d CPUs, GOMAXPROCS %d, %s; load average %s at the start, %s at the end\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), load0, loadavg())
	fmt.Printf("- paged %s; %d rounds of %d charts after %d warm-up charts, one chart at a time; CPU is the process's user+system time (getrusage)\n\n",
		revision(), *rounds, *n, *warmup)
	fmt.Println("| chart | what | CPU per chart, median (range) | wall per chart | allocations | allocated | PNG |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|")
	for i, ch := range charts {
		r := results[i]
		fmt.Printf("| %s | %s | **%.1f ms** (%.1f–%.1f) | %.1f ms | %.0f | %.1f MiB | %d×%d, %.0f KiB |\n",
			ch.name, ch.what, median(r.cpu), slices.Min(r.cpu), slices.Max(r.cpu), median(r.wall),
			r.allocs, r.bytes/(1<<20), r.w, r.h, r.pngKB)
	}
}

var t0 = time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)

func ptr(v float64) *float64 { return &v }

// realistic is the KV cache of four vLLM servers over 90 minutes at a
// 15 s step, one of them crossing 95% an hour in.
func realistic() slackchart.Chart {
	start, end := t0, t0.Add(90*time.Minute)
	var ss []slackchart.Series
	for i := range 4 {
		s := slackchart.Series{Labels: map[string]string{
			"instance": fmt.Sprintf("10.0.3.%d:8000", 11+i), "job": "vllm",
			"model_name": "meta-llama/Llama-3.1-70B-Instruct",
		}}
		for k := range 360 {
			v := 0.55 + 0.08*float64(i) + 0.05*math.Sin(float64(k)/17+float64(i))
			if i == 3 && k > 200 {
				v = math.Min(0.995, v+float64(k-200)*0.004)
			}
			s.Points = append(s.Points, slackchart.Point{T: start.Add(time.Duration(k) * 15 * time.Second), V: v})
		}
		ss = append(ss, s)
	}
	return slackchart.Chart{
		Title: "VLLMKVCacheSaturated", Query: "max by (model_name, instance, job) (vllm:kv_cache_usage_perc)",
		Series: ss, Threshold: ptr(0.95), Op: ">", Unit: "percentunit",
		Start: start, End: end, FiredAt: start.Add(60 * time.Minute),
	}
}

// dense is twelve noisy series of 1-second samples over 96 minutes: more
// samples than the image has pixel columns.
func dense() slackchart.Chart {
	start, end := t0, t0.Add(96*time.Minute)
	var ss []slackchart.Series
	for i := range 12 {
		s := slackchart.Series{Labels: map[string]string{"instance": fmt.Sprintf("gpu-node-%02d:8000", i), "job": "vllm"}}
		x := uint64(i + 1)
		for k := range 5760 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			noise := float64(x%1000) / 1000
			s.Points = append(s.Points, slackchart.Point{T: start.Add(time.Duration(k) * time.Second), V: float64(i) + 3*math.Sin(float64(k)/600) + noise})
		}
		ss = append(ss, s)
	}
	return slackchart.Chart{
		Title: "VLLMQueueBacklog", Query: "sum by (model_name, instance, job) (vllm:num_requests_waiting)",
		Series: ss, Threshold: ptr(10), Op: ">", Start: start, End: end,
		FiredAt: start.Add(40 * time.Minute), ResolvedAt: start.Add(70 * time.Minute),
	}
}

func noData() slackchart.Chart {
	return slackchart.Chart{Title: "VLLMTargetDown", Query: `up{job="vllm"}`, Threshold: ptr(0), Op: "==", Start: t0, End: t0.Add(time.Hour), FiredAt: t0.Add(50 * time.Minute)}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pngSize reads the width and height from a PNG's header.
func pngSize(b []byte) (int, int) {
	if len(b) < 24 {
		return 0, 0
	}
	be := func(p []byte) int { return int(p[0])<<24 | int(p[1])<<16 | int(p[2])<<8 | int(p[3]) }
	return be(b[16:20]), be(b[20:24])
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func revision() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "(unknown revision)"
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += " with local changes"
	}
	return rev
}
