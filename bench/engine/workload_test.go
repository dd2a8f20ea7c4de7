package enginebench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// vllmFleet is n simulated vLLM V1 instances, each on its own loopback port
// (so Prometheus sees n targets, each with its instance label). Names,
// types, labels and buckets follow the shared metric catalog; counters grow
// on every scrape. The fleet runs in a child process (this test binary,
// started with PAGED_BENCH_FLEET=n) so that serving the scrapes does not
// count as the engine's CPU.
type vllmFleet struct {
	addrs []string
}

const fleetEnv = "PAGED_BENCH_FLEET"

func TestMain(m *testing.M) {
	if n, err := strconv.Atoi(os.Getenv(fleetEnv)); err == nil {
		serveFleet(n)
		return
	}
	os.Exit(m.Run())
}

// serveFleet is the child process: it serves n instances, prints their
// addresses on one line, and exits when its standard input closes.
func serveFleet(n int) {
	var addrs []string
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s := &vllmServer{i: i}
		go func() { _ = http.Serve(l, http.HandlerFunc(s.serve)) }()
		addrs = append(addrs, l.Addr().String())
	}
	fmt.Println(strings.Join(addrs, " "))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func newVLLMFleet(tb testing.TB, n int) *vllmFleet {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", fleetEnv, n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("fleet: %v", err)
	}
	f := &vllmFleet{addrs: strings.Fields(line)}
	if len(f.addrs) != n {
		tb.Fatalf("fleet started %d servers, want %d", len(f.addrs), n)
	}
	return f
}

// targets returns the scrape targets as a YAML flow list.
func (f *vllmFleet) targets() string {
	var t []string
	for _, a := range f.addrs {
		t = append(t, fmt.Sprintf("%q", a))
	}
	return "[" + strings.Join(t, ", ") + "]"
}

var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	itlBuckets  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	e2eBuckets  = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
)

type vllmServer struct {
	i     int
	mu    sync.Mutex
	scrap int
}

func (s *vllmServer) serve(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.scrap++
	k := float64(s.scrap)
	s.mu.Unlock()
	i := s.i
	const lbl = `model_name="meta-llama/Llama-3.1-8B-Instruct",engine="0"`
	var b strings.Builder
	gauge := func(name string, v float64) {
		fmt.Fprintf(&b, "# TYPE %s gauge\n%s{%s} %g\n", name, name, lbl, v)
	}
	counter := func(name string, v float64) {
		fmt.Fprintf(&b, "# TYPE %s counter\n%s{%s} %g\n", name, name, lbl, v)
	}
	hist := func(name string, buckets []float64, scale float64) {
		fmt.Fprintf(&b, "# TYPE %s histogram\n", name)
		count := k * float64(10+i%7)
		for _, le := range buckets {
			frac := 1 - math.Exp(-le/(scale*float64(1+i%5)))
			fmt.Fprintf(&b, "%s_bucket{%s,le=\"%g\"} %g\n", name, lbl, le, math.Floor(count*frac))
		}
		fmt.Fprintf(&b, "%s_bucket{%s,le=\"+Inf\"} %g\n", name, lbl, count)
		fmt.Fprintf(&b, "%s_sum{%s} %g\n%s_count{%s} %g\n", name, lbl, count*scale, name, lbl, count)
	}
	gauge("vllm:num_requests_running", float64(i%32))
	gauge("vllm:num_requests_waiting", float64(i%13))
	gauge("vllm:kv_cache_usage_perc", float64(i%100)/100)
	counter("vllm:num_preemptions_total", k*float64(i%4))
	b.WriteString("# TYPE vllm:request_success_total counter\n")
	for j, reason := range []string{"stop", "length", "abort"} {
		fmt.Fprintf(&b, "vllm:request_success_total{%s,finished_reason=%q} %g\n", lbl, reason, k*float64((10+i%7)>>j))
	}
	counter("vllm:prompt_tokens_total", k*float64(1000+i))
	counter("vllm:generation_tokens_total", k*float64(500+i))
	counter("vllm:prefix_cache_queries_total", k*float64(1000+i))
	counter("vllm:prefix_cache_hits_total", k*float64(300+i))
	hist("vllm:time_to_first_token_seconds", ttftBuckets, 0.2)
	hist("vllm:inter_token_latency_seconds", itlBuckets, 0.02)
	hist("vllm:e2e_request_latency_seconds", e2eBuckets, 3)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}

// syntheticRules returns a rule file of groups×perGroup alerting rules in
// ten vLLM-like shapes (queries across all instances, thresholds such that a
// healthy fleet fires a handful: about 1,700 alerts for 1,000 rules), each
// with templated annotations, at the given interval.
func syntheticRules(groups, perGroup int, interval string) string {
	shapes := []string{
		`vllm:kv_cache_usage_perc > 0.98`,
		`vllm:num_requests_waiting > 11 and vllm:kv_cache_usage_perc > 0.5`,
		`rate(vllm:num_preemptions_total[1m]) > 0.5 and on (instance) vllm:kv_cache_usage_perc > 0.95`,
		`histogram_quantile(0.99, sum by (le, instance) (rate(vllm:time_to_first_token_seconds_bucket[1m]))) > 4 and on (instance) vllm:num_requests_waiting > 10`,
		`sum by (instance) (rate(vllm:request_success_total[1m])) < 0.5`,
		`vllm:num_requests_waiting > 10 and vllm:num_requests_running < 2`,
		`histogram_quantile(0.95, sum by (le, instance) (rate(vllm:e2e_request_latency_seconds_bucket[1m]))) > 60`,
		`rate(vllm:generation_tokens_total[1m]) < 50 and vllm:num_requests_waiting > 0`,
		`vllm:kv_cache_usage_perc > 0.9 and vllm:num_requests_running < 4`,
		`sum by (instance) (rate(vllm:prompt_tokens_total[1m])) > 219`,
	}
	var b strings.Builder
	b.WriteString("groups:\n")
	n := 0
	for g := range groups {
		fmt.Fprintf(&b, "  - name: synthetic-%02d\n    interval: %s\n    rules:\n", g, interval)
		for range perGroup {
			fmt.Fprintf(&b, "      - alert: Synthetic%04d\n        expr: '%s'\n        labels:\n          severity: warning\n", n, shapes[n%len(shapes)])
			b.WriteString("        annotations:\n          summary: 'instance {{ $labels.instance }} at {{ $value | humanize }}'\n          runbook_url: 'vllm/Synthetic'\n")
			n++
		}
	}
	return b.String()
}
