// Command embedded benchmarks paged's embedded mode against Debian's
// Prometheus, side by side in the same run: both scrape the same N
// simulated vLLM servers every interval and evaluate the same vLLM rule
// pack, and the driver samples CPU seconds and resident memory of each
// process from /proc.
//
//	go run ./bench/embedded -duration 3m
//
// It runs three processes besides itself: one serving every simulator
// (on N loopback listeners), Prometheus, and this program re-executed as
// "paged" (the embedded scraper and TSDB with paged's rule engine on top,
// the same code path as `paged run` with datasource.type embedded). The
// simulators live in a process of their own so that their cost is counted
// against neither side.
package main

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/embedded"
	"github.com/pagedhq/paged/rules"
	"github.com/pagedhq/paged/simulator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "sims":
		err = runSims(ctx, os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "paged":
		err = runPaged(ctx, os.Args[2:])
	default:
		err = drive(ctx, os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/embedded:", err)
		os.Exit(1)
	}
}

// runSims serves n simulated vLLM servers, one listener each, prints their
// addresses (one a line, then "ready") and serves until ctx ends.
func runSims(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sims", flag.ContinueOnError)
	n := fs.Int("n", 50, "number of simulated servers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	scenarios := []string{"steady", "steady", "steady", "ramp", "kv-saturation"}
	var servers []*http.Server
	for i := range *n {
		sim, err := simulator.New(simulator.Options{Server: simulator.ServerVLLM, Scenario: scenarios[i%len(scenarios)], Seed: uint64(i + 1)})
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() { _ = srv.Serve(ln) }()
		fmt.Println(ln.Addr().String())
	}
	fmt.Println("ready")
	<-ctx.Done()
	for _, s := range servers {
		_ = s.Close()
	}
	return nil
}

// pagedReport is what the paged child prints when it stops.
type pagedReport struct {
	TargetsUp       int     `json:"targets_up"`
	Targets         int     `json:"targets"`
	HeadSeries      float64 `json:"head_series"`
	RuleEvaluations float64 `json:"rule_evaluations"`
	RuleFailures    float64 `json:"rule_failures"`
	AlertsSent      int     `json:"alerts_sent"`
}

// runPaged runs the embedded datasource and the rule engine until ctx ends,
// then prints a pagedReport as JSON.
func runPaged(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("paged", flag.ContinueOnError)
	targets := fs.String("targets", "", "comma-separated host:port list")
	rulesFile := fs.String("rules", "", "rule file")
	dir := fs.String("dir", "", "storage directory")
	interval := fs.Duration("interval", 5*time.Second, "scrape and evaluation interval")
	keep := fs.String("keep", "referenced", "referenced: store only the metrics the rules read; all: everything")
	if err := fs.Parse(args); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	emb, err := embedded.New(embedded.Options{
		StoragePath:    filepath.Join(*dir, "tsdb"),
		ScrapeInterval: *interval,
		Retention:      24 * time.Hour,
		ScrapeConfigs:  []embedded.ScrapeConfig{{JobName: "vllm", StaticConfigs: []embedded.StaticConfig{{Targets: strings.Split(*targets, ",")}}}},
		Logger:         logger,
		Registerer:     reg,
	})
	if err != nil {
		return err
	}
	var sent atomic.Int64
	eng, err := engine.New(engine.Options{
		Datasource:         emb.Datasource(embedded.QueryOptions{EvaluationInterval: *interval}),
		DatasourceName:     "embedded",
		StoragePath:        filepath.Join(*dir, "state"),
		EvaluationInterval: *interval,
		Notify:             func(_ context.Context, alerts []*rules.Alert) { sent.Add(int64(len(alerts))) },
		Logger:             logger,
		Registerer:         reg,
	})
	if err != nil {
		return errors.Join(err, emb.Close())
	}
	if err := eng.ApplyRules([]string{*rulesFile}, engine.RuleSettings{EvaluationInterval: *interval}); err != nil {
		return errors.Join(err, emb.Close(), eng.Close())
	}
	if *keep == "referenced" {
		// What `paged run` does with datasource.embedded.keep: referenced.
		var exprs []parser.Expr
		for _, g := range eng.RuleGroups() {
			for _, r := range g.Rules() {
				exprs = append(exprs, r.Query())
			}
		}
		if err := emb.SetKeep(embedded.KeepFor(exprs...)); err != nil {
			return errors.Join(err, emb.Close(), eng.Close())
		}
	}
	embDone := make(chan error, 1)
	engDone := make(chan error, 1)
	go func() { embDone <- emb.Run(ctx) }()
	go func() { engDone <- eng.Run(ctx) }()
	fmt.Println("ready")
	// The driver asks for the report (a line on stdin) while everything
	// still runs, then stops the process.
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')

	var rep pagedReport
	for _, t := range emb.Targets() {
		rep.Targets++
		if t.Health == embedded.HealthUp {
			rep.TargetsUp++
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "prometheus_tsdb_head_series":
				rep.HeadSeries += m.GetGauge().GetValue()
			case "prometheus_rule_evaluations_total":
				rep.RuleEvaluations += m.GetCounter().GetValue()
			case "prometheus_rule_evaluation_failures_total":
				rep.RuleFailures += m.GetCounter().GetValue()
			}
		}
	}
	rep.AlertsSent = int(sent.Load())
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return err
	}
	<-ctx.Done()
	return errors.Join(<-engDone, <-embDone, eng.Close())
}

// proc is a child process whose resources are sampled.
type proc struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
}

// usage reads CPU seconds (user+system) and RSS/peak RSS in bytes from /proc.
// usage reads a process's CPU time and memory: resident set, its peak
// (VmHWM), and the resident set split into anonymous memory (heap,
// stacks) and file pages (mostly the binary's own code and data).
func usage(pid int) (cpu float64, rss, hwm, anon, file int64, err error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	// Fields after the command name, which is in parentheses.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	const clkTck = 100 // USER_HZ on Linux
	cpu = (utime + stime) / clkTck
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		case "RssAnon:":
			anon = kb << 10
		case "RssFile:":
			file = kb << 10
		}
	}
	return cpu, rss, hwm, anon, file, nil
}

func drive(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("embedded", flag.ContinueOnError)
	n := fs.Int("targets", 50, "simulated vLLM servers")
	interval := fs.Duration("interval", 5*time.Second, "scrape and evaluation interval")
	duration := fs.Duration("duration", 3*time.Minute, "measured run time")
	warmup := fs.Duration("warmup", 30*time.Second, "time excluded from the steady-state CPU figure")
	rulesFile := fs.String("rules", "examples/packs/vllm/vllm.rules.yaml", "rule pack evaluated by both")
	promBin := fs.String("prometheus", "/usr/bin/prometheus", "Prometheus binary")
	prom3Bin := fs.String("prometheus3", "", "a second Prometheus binary run beside the first (say Prometheus 3 built from the module version paged uses, every discovery mechanism linked, as upstream releases it)")
	pagedBin := fs.String("paged", "", "a paged binary: measure `paged run` (HTTP server, notifier-less, every discovery mechanism linked) instead of the library path")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rulesAbs, err := filepath.Abs(*rulesFile)
	if err != nil {
		return err
	}
	if _, err := os.Stat(rulesAbs); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "paged-bench-embedded-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	sims, err := start(ctx, "simulators", self, "sims", "-n", strconv.Itoa(*n))
	if err != nil {
		return err
	}
	defer stopProc(sims)
	var addrs []string
	for {
		line, err := sims.out.ReadString('\n')
		if err != nil {
			return fmt.Errorf("simulators: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "ready" {
			break
		}
		addrs = append(addrs, line)
	}

	promAddr, err := freeAddr()
	if err != nil {
		return err
	}
	var quoted []string
	for _, a := range addrs {
		quoted = append(quoted, strconv.Quote(a))
	}
	promCfg := fmt.Sprintf("global: {scrape_interval: %s, evaluation_interval: %s}\nrule_files: [%q]\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [%s]}]\n",
		interval, interval, rulesAbs, strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promCfg), 0o600); err != nil {
		return err
	}
	type promSide struct {
		name, addr string
		p          *proc
	}
	var proms []promSide
	for i, bin := range []string{*promBin, *prom3Bin} {
		if bin == "" {
			continue
		}
		addr := promAddr
		if i > 0 {
			if addr, err = freeAddr(); err != nil {
				return err
			}
		}
		name := "prometheus"
		if v := promVersion(bin); v != "" {
			name = "Prometheus " + v
		}
		p, err := start(ctx, name, bin,
			"--config.file="+filepath.Join(dir, "prometheus.yml"),
			"--storage.tsdb.path="+filepath.Join(dir, fmt.Sprint("prometheus", i)),
			"--storage.tsdb.retention.time=24h",
			"--web.listen-address="+addr,
			"--log.level=warn")
		if err != nil {
			return err
		}
		defer stopProc(p)
		proms = append(proms, promSide{name, addr, p})
	}

	// Two paged children, side by side with Prometheus in the same run:
	// keep: referenced (the default) and keep: all.
	var pagedProcs [2]*proc
	var pagedAddrs [2]string
	for i, keep := range []string{"referenced", "all"} {
		var p *proc
		var err error
		if *pagedBin != "" {
			p, pagedAddrs[i], err = startPagedRun(ctx, *pagedBin, filepath.Join(dir, "paged-"+keep), keep, addrs, rulesAbs, *interval)
		} else {
			p, err = start(ctx, "paged keep:"+keep, self, "paged", "-keep", keep,
				"-targets", strings.Join(addrs, ","), "-rules", rulesAbs, "-dir", filepath.Join(dir, "paged-"+keep), "-interval", interval.String())
		}
		if err != nil {
			return err
		}
		defer stopProc(p)
		if *pagedBin == "" {
			if line, err := p.out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
				return fmt.Errorf("%s did not start: %q %v", p.name, line, err)
			}
		}
		pagedProcs[i] = p
	}

	type sample struct{ cpu, rss, hwm, anon, file, peakAnon, peakFile float64 }
	procs := []*proc{pagedProcs[0], pagedProcs[1]}
	for _, ps := range proms {
		procs = append(procs, ps.p)
	}
	atWarmup, last := make([]sample, len(procs)), make([]sample, len(procs))
	begin := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	warmedUp := false
	fmt.Fprintf(os.Stderr, "measuring for %s (%d targets, every %s)...\n", *duration, len(addrs), interval)
	for time.Since(begin) < *duration {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		for i, p := range procs {
			cpu, rss, hwm, anon, file, err := usage(p.cmd.Process.Pid)
			if err != nil {
				return fmt.Errorf("%s: %w (did it exit?)", p.name, err)
			}
			last[i] = sample{cpu, float64(rss), float64(hwm), float64(anon), float64(file),
				max(last[i].peakAnon, float64(anon)), max(last[i].peakFile, float64(file))}
		}
		if !warmedUp && time.Since(begin) >= *warmup {
			copy(atWarmup, last)
			warmedUp = true
		}
	}

	// Prometheus's own view, before stopping it.
	type promView struct {
		up, alerts string
		own        map[string]float64
	}
	var views []promView
	for _, ps := range proms {
		views = append(views, promView{promQuery(ps.addr, `count(up{job="vllm"} == 1)`),
			promQuery(ps.addr, `count(ALERTS{alertstate="firing"}) or vector(0)`), promMetrics(ps.addr)})
	}

	var reps [2]pagedReport
	for i, p := range pagedProcs {
		if *pagedBin != "" {
			reps[i] = runReport(pagedAddrs[i])
			continue
		}
		if _, err := io.WriteString(p.in, "report\n"); err != nil {
			return fmt.Errorf("%s report: %w", p.name, err)
		}
		if err := json.NewDecoder(p.out).Decode(&reps[i]); err != nil {
			return fmt.Errorf("%s report: %w", p.name, err)
		}
	}

	steady := *duration - *warmup
	mib := func(b float64) float64 { return b / (1 << 20) }
	fmt.Printf("targets: %d simulated vLLM servers, scrape+evaluation every %s, %s measured (%s steady after %s warm-up), rules %s\n\n",
		len(addrs), interval, *duration, steady, *warmup, *rulesFile)
	head := "| | paged keep: referenced | paged keep: all"
	for _, ps := range proms {
		head += " | " + ps.name
	}
	for _, ps := range proms {
		head += " | referenced / " + ps.name + " | all / " + ps.name
	}
	fmt.Println(head + " |")
	fmt.Println("|---" + strings.Repeat("|---:", len(procs)+2*len(proms)) + "|")
	row := func(name string, f func(sample) float64, start []sample, format string) {
		v := make([]float64, len(procs))
		line := "| " + name
		for i := range procs {
			v[i] = f(last[i])
			if start != nil {
				v[i] -= f(start[i])
			}
			line += fmt.Sprintf(" | "+format, v[i])
		}
		for i := range proms {
			line += fmt.Sprintf(" | %.2f | %.2f", v[0]/v[2+i], v[1]/v[2+i])
		}
		fmt.Println(line + " |")
	}
	row("CPU seconds, whole run", func(s sample) float64 { return s.cpu }, nil, "%.2f")
	row("CPU seconds, steady state", func(s sample) float64 { return s.cpu }, atWarmup, "%.2f")
	row("peak RSS (MiB, VmHWM)", func(s sample) float64 { return mib(s.hwm) }, nil, "%.1f")
	row("RSS at end (MiB)", func(s sample) float64 { return mib(s.rss) }, nil, "%.1f")
	row("peak anonymous RSS (MiB, sampled every second)", func(s sample) float64 { return mib(s.peakAnon) }, nil, "%.1f")
	row("peak file-backed RSS (MiB, sampled)", func(s sample) float64 { return mib(s.peakFile) }, nil, "%.1f")
	fmt.Println()
	for i, rep := range reps {
		fmt.Printf("sanity: %s %d/%d targets up, %.0f head series, %.0f rule evaluations (%.0f failed), %d alert notifications\n",
			pagedProcs[i].name, rep.TargetsUp, rep.Targets, rep.HeadSeries, rep.RuleEvaluations, rep.RuleFailures, rep.AlertsSent)
	}
	for i, v := range views {
		fmt.Printf("sanity: %s %s targets up, %.0f head series, %.0f rule evaluations (%.0f failed), %s firing alerts\n",
			proms[i].name, v.up, v.own["prometheus_tsdb_head_series"], v.own["prometheus_rule_evaluations_total"], v.own["prometheus_rule_evaluation_failures_total"], v.alerts)
	}
	return nil
}

// promVersion is the version a Prometheus binary reports, or a module
// build's version when it reports none.
func promVersion(bin string) string {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) >= 3 && f[0] == "prometheus," && f[1] == "version" && f[2] != "(branch:" {
		return f[2]
	}
	if bi, err := buildinfo.ReadFile(bin); err == nil {
		if bi.Main.Path == "github.com/prometheus/prometheus" {
			return "module " + bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/prometheus/prometheus" {
				return "module " + d.Version
			}
		}
	}
	return "(unknown version)"
}

// startPagedRun starts `paged run` on a generated paged.yaml: embedded
// mode over the targets with the given keep mode and the rule file, no
// notifier, and waits for /-/ready.
func startPagedRun(ctx context.Context, bin, dir, keep string, targets []string, rulesFile string, interval time.Duration) (*proc, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	var quoted []string
	for _, a := range targets {
		quoted = append(quoted, strconv.Quote(a))
	}
	cfg := fmt.Sprintf(`global: {evaluation_interval: %s}
datasource:
  type: embedded
  embedded:
    scrape_interval: %s
    retention: 24h
    keep: %s
    scrape_configs:
      - job_name: vllm
        static_configs: [{targets: [%s]}]
rule_files: [%q]
storage: {path: %q}
web: {listen_address: %q}
`, interval, interval, keep, strings.Join(quoted, ", "), rulesFile, filepath.Join(dir, "state"), addr)
	path := filepath.Join(dir, "paged.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, "", err
	}
	p, err := start(ctx, "paged run keep:"+keep, bin, "run", "--config", path)
	if err != nil {
		return nil, "", err
	}
	// Alerts go to its standard output without a notifier: drain it.
	out := p.out
	p.out = bufio.NewReader(strings.NewReader(""))
	go func() { _, _ = io.Copy(io.Discard, out) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/-/healthy")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, addr, nil
			}
		}
		if time.Now().After(deadline) {
			stopProc(p)
			return nil, "", fmt.Errorf("%s: not healthy in 30s", p.name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runReport reads a `paged run`'s figures from its /metrics and
// /api/v1/targets.
func runReport(addr string) pagedReport {
	var rep pagedReport
	own := promMetrics(addr)
	rep.HeadSeries = own["prometheus_tsdb_head_series"]
	rep.RuleEvaluations = own["prometheus_rule_evaluations_total"]
	rep.RuleFailures = own["prometheus_rule_evaluation_failures_total"]
	resp, err := http.Get("http://" + addr + "/api/v1/targets?state=active")
	if err != nil {
		return rep
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			ActiveTargets []struct {
				Health string `json:"health"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&body) == nil {
		for _, t := range body.Data.ActiveTargets {
			rep.Targets++
			if t.Health == embedded.HealthUp {
				rep.TargetsUp++
			}
		}
	}
	return rep
}

func start(ctx context.Context, name, bin string, args ...string) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &proc{name: name, cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

func stopProc(p *proc) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, p.out)
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// promMetrics sums Prometheus's own metrics by name from its /metrics page
// (it does not scrape itself in this setup).
func promMetrics(addr string) map[string]float64 {
	out := map[string]float64{}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(line, '{'); i >= 0 {
			name = line[:i]
			rest = line[strings.LastIndexByte(line, '}')+1:]
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
			out[name] += v
		}
	}
	return out
}

// promQuery returns the first value of an instant query, or the error text.
func promQuery(addr, q string) string {
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Data.Result) == 0 {
		return "?"
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	return s
}
