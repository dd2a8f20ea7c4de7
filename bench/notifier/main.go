// Command notifier-bench compares paged's notifier with Debian's
// Alertmanager on the same alert stream and the same webhook sink, in the
// same run: notifications per second, and the latency each adds between an
// alert coming in and its webhook arriving, minus group_wait.
//
//	go run ./bench/notifier -alerts 2000 -out bench/notifier/RESULTS.md
//
// One run's ratios move from run to run; -pool reads the reports of
// several runs and prints them pooled, with how far they spread:
//
//	go run ./bench/notifier -pool run1.md run2.md ...
//
// Every alert is its own group (group_by: [alertname, id]), so each alert
// is one notification. Both systems receive the alerts over
// POST /api/v2/alerts in batches, as Prometheus sends them; paged is also
// measured with alerts handed in-process (how `paged run` feeds it).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/rules"
)

const groupWait = 50 * time.Millisecond

// route is the configuration both systems get; extra is appended to the
// webhook (paged's own options, such as max_concurrent_requests).
func route(sinkURL, path, extra string) string {
	return fmt.Sprintf(`
route:
  receiver: sink
  group_by: [alertname, id]
  group_wait: 50ms
  group_interval: 10s
  repeat_interval: 1h
receivers:
  - name: sink
    webhook_configs:
      - url: %s%s
%s`, sinkURL, path, extra)
}

// newConns counts the connections the sink accepted.
var newConns atomic.Int64

// sink records when each alert id first arrived, per path.
type sink struct {
	mu   sync.Mutex
	got  map[string]map[string]time.Time // path -> id -> time
	done map[string]chan struct{}
	want map[string]int
}

func (s *sink) expect(path string, n int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[path] = map[string]time.Time{}
	s.want[path] = n
	s.done[path] = make(chan struct{})
	return s.done[path]
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		log.Printf("sink: %s: reading a body: %v", r.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// The sink shares two cores with the system it measures, so it reads
	// the ids without decoding the JSON: every "id":"N" in the body (the
	// group and common labels repeat the alert's own). A body without one
	// is a payload the benchmark did not expect.
	ids := alertIDs(body)
	if len(ids) == 0 {
		log.Printf("sink: %s: no alert ids in a body of %d bytes", r.URL.Path, len(body))
		http.Error(w, "no alert ids in the body", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.got[r.URL.Path]
	if got == nil {
		return
	}
	for _, id := range ids {
		if _, ok := got[id]; !ok {
			got[id] = now
		}
	}
	if len(got) == s.want[r.URL.Path] {
		close(s.done[r.URL.Path])
		s.want[r.URL.Path] = -1
	}
}

// alertIDs returns the values of the "id" labels in a webhook body.
func alertIDs(body []byte) []string {
	var ids []string
	key := []byte(`"id":"`)
	for {
		i := bytes.Index(body, key)
		if i < 0 {
			return ids
		}
		body = body[i+len(key):]
		j := bytes.IndexByte(body, '"')
		if j < 0 {
			return ids
		}
		ids = append(ids, string(body[:j]))
		body = body[j:]
	}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitReady(url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready", url)
}

type result struct {
	name       string
	alerts     int
	elapsed    time.Duration
	p50, p99   time.Duration
	max        time.Duration
	throughput float64
	// cpu is the CPU time (user + system) the measured process used
	// during the round; zero for the in-process system, which shares
	// its process with the sink and the load generator.
	cpu time.Duration
	// benchCPU is what this process (the sink and the load generator)
	// used meanwhile: its share of the two cores.
	benchCPU time.Duration
}

// settle waits until the processes are idle (under 10 ms of CPU each in
// 200 ms, the two ticks a timer or a scheduler wake-up may take), for at
// most 5 s: what a system does after its last notification (its garbage
// collection, the connections it closes) belongs to its own round, not to
// the start of the next system's.
func settle(pids ...int) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var before []time.Duration
		for _, pid := range pids {
			before = append(before, procCPU(pid))
		}
		time.Sleep(200 * time.Millisecond)
		busy := false
		for i, pid := range pids {
			if procCPU(pid)-before[i] > 10*time.Millisecond {
				busy = true
			}
		}
		if !busy {
			return
		}
	}
	log.Printf("settle: still busy after 5 s")
}

// procCPU is the user + system CPU time of process pid so far, from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s).
func procCPU(pid int) time.Duration {
	st := procStat(pid)
	return st.user + st.sys
}

// stat is what /proc/<pid>/stat says of a process's cost so far.
type stat struct {
	user, sys   time.Duration
	minorFaults int64 // pages the kernel had to map in, mostly fresh memory
}

// procStat reads fields 10 (minflt), 14 (utime) and 15 (stime, in clock
// ticks of 1/100 s) of /proc/<pid>/stat; zero when pid is 0 or gone.
func procStat(pid int) stat {
	if pid == 0 {
		return stat{}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}
	}
	// The command name, field 2, may hold spaces; fields count from after it.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return stat{}
	}
	mf, _ := strconv.ParseInt(f[7], 10, 64)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return stat{user: time.Duration(ut) * 10 * time.Millisecond, sys: time.Duration(st) * 10 * time.Millisecond, minorFaults: mf}
}

type alertJSON struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
}

func stream(name string, n int) []alertJSON {
	now := time.Now()
	out := make([]alertJSON, n)
	for i := range out {
		out[i] = alertJSON{
			Labels:      map[string]string{"alertname": name, "id": fmt.Sprint(i), "severity": "warning"},
			Annotations: map[string]string{"summary": "bench"},
			StartsAt:    now, EndsAt: now.Add(time.Hour),
		}
	}
	return out
}

// run sends the stream in batches with send and measures what s receives.
func run(name string, s *sink, path string, pid int, alerts []alertJSON, batch int, send func([]alertJSON) error) result {
	done := s.expect(path, len(alerts))
	st0, self0 := procStat(pid), procCPU(os.Getpid())
	conns0 := newConns.Load()
	defer func() { log.Printf("%s: %d new connections to the sink", name, newConns.Load()-conns0) }()
	sent := make(map[string]time.Time, len(alerts))
	start := time.Now()
	for i := 0; i < len(alerts); i += batch {
		b := alerts[i:min(i+batch, len(alerts))]
		t := time.Now()
		// Alerts that started earlier than group_wait ago flush at once;
		// starting them now makes every group wait group_wait.
		for j := range b {
			b[j].StartsAt = t
		}
		if err := send(b); err != nil {
			log.Fatalf("%s: send: %v", name, err)
		}
		for _, a := range b {
			sent[a.Labels["id"]] = t
		}
	}
	sendDone := time.Since(start)
	defer func() { log.Printf("%s: sent in %v", name, sendDone.Round(time.Millisecond)) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		log.Fatalf("%s: not all notifications arrived", name)
	}
	st, self := procStat(pid), procCPU(os.Getpid())-self0
	cpu := st.user + st.sys - st0.user - st0.sys
	// A turn whose process maps in fresh memory (its heap and stacks
	// reaching a new high) pays for it in system time: the per-round
	// spread of CPU per notification follows these two figures.
	log.Printf("%s: %d minor page faults, %v user and %v system CPU", name, st.minorFaults-st0.minorFaults, st.user-st0.user, st.sys-st0.sys)
	s.mu.Lock()
	defer s.mu.Unlock()
	var lat []time.Duration
	var last time.Time
	for id, at := range s.got[path] {
		lat = append(lat, at.Sub(sent[id])-groupWait)
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(lat)
	elapsed := last.Sub(start)
	return result{
		name: name, alerts: len(alerts), elapsed: elapsed,
		p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], max: lat[len(lat)-1],
		throughput: float64(len(alerts)) / elapsed.Seconds(),
		cpu:        cpu,
		benchCPU:   self,
	}
}

func ms(d time.Duration) string { return fmt.Sprint(d.Round(time.Millisecond)) }

func postAlerts(url string) func([]alertJSON) error {
	return func(b []alertJSON) error {
		body, _ := json.Marshal(b)
		resp, err := http.Post(url+"/api/v2/alerts", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			msg, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("%s: %s", resp.Status, msg)
		}
		return nil
	}
}

func main() {
	n := flag.Int("alerts", 2000, "alerts (= notifications) per system")
	batch := flag.Int("batch", 100, "alerts per POST")
	rounds := flag.Int("rounds", 3, "rounds; each runs every system once, the report keeps the median round of each")
	out := flag.String("out", "", "write the Markdown report here")
	amBin := flag.String("alertmanager", "/usr/bin/prometheus-alertmanager", "Alertmanager binary")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run here")
	serve := flag.String("serve-paged", "", "internal: serve paged's notifier API on this address with -serve-config, until killed")
	serveConfig := flag.String("serve-config", "", "internal: notifier config file for -serve-paged")
	gogc := flag.Int("paged-gogc", 0, "GOGC of paged's own process (0: the Go default, 100); Alertmanager keeps its default")
	noStorage := flag.Bool("paged-no-storage", false, "run paged's own process without storage.path (no durable notification log), to see what durability costs")
	maxConc := flag.Int("paged-max-concurrent", 0, "max_concurrent_requests of paged's webhook (0: paged's default)")
	inproc := flag.Bool("inproc", false, "also measure paged's notifier inside this process, fed by Notify as the engine feeds it. Its groups then live in the sink's process and make every system's sink slower (30 µs more per notification over 20 rounds), so it is off by default")
	poolRuns := flag.Bool("pool", false, "read the reports (-out files) of earlier runs given as arguments and print their ratios pooled, with the spread between runs; runs nothing")
	target := flag.Float64("target", 1.2, "with -pool: count the runs whose throughput ratio is at least this")
	flag.Parse()
	if *poolRuns {
		if err := pool(os.Stdout, flag.Args(), *target); err != nil {
			log.Fatal(err)
		}
		return
	}
	pagedExtra := ""
	if *maxConc > 0 {
		pagedExtra = fmt.Sprintf("        max_concurrent_requests: %d\n", *maxConc)
	}
	if *serve != "" {
		servePaged(*serve, *serveConfig, *gogc, *noStorage)
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	s := &sink{got: map[string]map[string]time.Time{}, done: map[string]chan struct{}{}, want: map[string]int{}}
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	sinkSrv := &http.Server{Handler: s, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			newConns.Add(1)
		}
	}}
	go func() { _ = sinkSrv.Serve(sl) }()
	defer sinkSrv.Close()
	sinkURL := "http://" + sl.Addr().String()

	// Debian's Alertmanager.
	dir, err := os.MkdirTemp("", "notifier-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "am.yml"), []byte(route(sinkURL, "/am", "")), 0o644); err != nil {
		log.Fatal(err)
	}
	amAddr := freeAddr()
	am := exec.Command(*amBin, "--config.file="+filepath.Join(dir, "am.yml"), "--storage.path="+filepath.Join(dir, "am"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=", "--log.level=error")
	am.Stderr = os.Stderr
	if err := am.Start(); err != nil {
		log.Fatalf("start alertmanager: %v", err)
	}
	defer func() { _ = am.Process.Kill(); _ = am.Wait() }()
	amVersion, _ := exec.Command(*amBin, "--version").CombinedOutput()
	if err := waitReady("http://" + amAddr + "/-/ready"); err != nil {
		log.Fatal(err)
	}

	// paged's notifier as a process of its own, like the Alertmanager:
	// this binary re-executed in -serve-paged mode.
	if err := os.WriteFile(filepath.Join(dir, "paged.yml"), []byte(route(sinkURL, "/paged", pagedExtra)), 0o644); err != nil {
		log.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	pagedAddr := freeAddr()
	child := exec.Command(self, "-serve-paged="+pagedAddr, "-serve-config="+filepath.Join(dir, "paged.yml"),
		fmt.Sprint("-paged-gogc=", *gogc), fmt.Sprint("-paged-no-storage=", *noStorage))
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	pagedURL := "http://" + pagedAddr
	log.Printf("paged notifier at %s (profiles under /debug/pprof/)", pagedURL)
	if err := waitReady(pagedURL + "/api/v2/status"); err != nil {
		log.Fatal(err)
	}

	// And in this process, fed by Notify as `paged run` feeds it.
	var pn *notifier.Notifier
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan struct{})
	if *inproc {
		conf, err := notifier.ParseConfig([]byte(route(sinkURL, "/inproc", pagedExtra)))
		if err != nil {
			log.Fatal(err)
		}
		pn, err = notifier.New(notifier.Options{Config: conf, StoragePath: filepath.Join(dir, "inproc")})
		if err != nil {
			log.Fatal(err)
		}
		go func() { _ = pn.Run(ctx); close(runDone) }()
	} else {
		close(runDone)
	}

	// Warm both up with a few alerts, then measure.
	run("warmup-am", s, "/am", am.Process.Pid, stream("WarmAM", 20), *batch, postAlerts("http://"+amAddr))
	run("warmup-paged", s, "/paged", child.Process.Pid, stream("WarmPaged", 20), *batch, postAlerts(pagedURL))
	if *inproc {
		run("warmup-inproc", s, "/inproc", 0, stream("WarmInproc", 20), *batch, func(b []alertJSON) error { return inprocSend(pn, b) })
	}

	amName := "Alertmanager " + strings.Fields(string(amVersion) + " ? ? ?")[2] + " (HTTP)"
	systems := []struct {
		name, path, prefix string
		pid                int
		send               func([]alertJSON) error
	}{
		{amName, "/am", "BenchAM", am.Process.Pid, postAlerts("http://" + amAddr)},
		{"paged (HTTP /api/v2/alerts, own process)", "/paged", "BenchPagedHTTP", child.Process.Pid, postAlerts(pagedURL)},
		{"paged (in-process Notify, shares the bench process)", "/inproc", "BenchPagedInproc", 0, func(b []alertJSON) error { return inprocSend(pn, b) }},
	}
	if !*inproc {
		systems = systems[:2]
	}
	// The whole run's CPU of each process, the quiet between turns
	// included: what a system does after a burst (paged collects its
	// garbage then) is not in any turn's figure, and is in this one.
	settle(am.Process.Pid, child.Process.Pid, os.Getpid())
	runCPU0 := map[int]time.Duration{am.Process.Pid: procCPU(am.Process.Pid), child.Process.Pid: procCPU(child.Process.Pid)}
	perSystem := make([][]result, len(systems))
	for r := range *rounds {
		// The order rotates every round, so no system always runs right
		// after another's burst. Fresh alert names per round: every alert
		// is a new group.
		for k := range systems {
			i := (r + k) % len(systems)
			sys := systems[i]
			perSystem[i] = append(perSystem[i], run(sys.name, s, sys.path, sys.pid, stream(fmt.Sprint(sys.prefix, r), *n), *batch, sys.send))
			settle(am.Process.Pid, child.Process.Pid, os.Getpid())
		}
		var tps []string
		for i := range systems {
			tps = append(tps, fmt.Sprintf("%.0f", perSystem[i][r].throughput))
		}
		log.Printf("round %d: %s notifications/s; CPU per notification %.0f / %.0f µs", r+1, strings.Join(tps, " / "), cpuPer(perSystem[0][r]), cpuPer(perSystem[1][r]))
	}
	runCPU := map[string]time.Duration{}
	for _, sys := range systems {
		if sys.pid != 0 {
			runCPU[sys.name] = procCPU(sys.pid) - runCPU0[sys.pid]
		}
	}
	// Peak resident memory of the two processes measured, for what any
	// throughput gain costs in memory.
	peakRSS := map[string]string{}
	for _, sys := range systems {
		if sys.pid != 0 {
			peakRSS[sys.name] = vmHWM(sys.pid)
		}
	}
	cancel()
	<-runDone

	var sb strings.Builder
	fmt.Fprintf(&sb, "# Notifier benchmark: paged vs Alertmanager\n\n")
	extra := ""
	if *gogc > 0 {
		extra += fmt.Sprintf(" -paged-gogc %d", *gogc)
	}
	if *noStorage {
		extra += " -paged-no-storage"
	}
	if *maxConc > 0 {
		extra += fmt.Sprintf(" -paged-max-concurrent %d", *maxConc)
	}
	if *inproc {
		extra += " -inproc"
	}
	fmt.Fprintf(&sb, "Command: `go run ./bench/notifier -alerts %d -batch %d -rounds %d%s -out bench/notifier/RESULTS.md`\n\n", *n, *batch, *rounds, extra)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&sb, "Run: %s, %s/%s, GOMAXPROCS=%d, load average at the end %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(&sb, "Same webhook sink, same route (every alert its own group, group_wait 50ms), %d alerts per system and round, sent in batches of %d.\n", *n, *batch)
	fmt.Fprintf(&sb, "Latency = webhook received − alert sent − group_wait. %d rounds; every round runs each system once, in an order that rotates. Each figure is the median over the rounds, with the lowest and highest round in brackets.\n\n", *rounds)
	fmt.Fprintf(&sb, "| system | notifications/s | latency p50 | p99 | max | CPU per notification |\n|---|---|---|---|---|---|\n")
	med := make([]result, len(perSystem))
	for i, rs := range perSystem {
		m := medians(rs)
		med[i] = m
		lo, hi := extremes(rs)
		cpu := "—"
		if m.cpu > 0 {
			cpu = fmt.Sprintf("%.0f µs (%.0f–%.0f)", cpuPer(m), cpuPer(lo), cpuPer(hi))
		}
		fmt.Fprintf(&sb, "| %s | %.0f (%.0f–%.0f) | %s (%s–%s) | %s (%s–%s) | %s | %s |\n", rs[0].name,
			m.throughput, lo.throughput, hi.throughput, ms(m.p50), ms(lo.p50), ms(hi.p50), ms(m.p99), ms(lo.p99), ms(hi.p99), ms(m.max), cpu)
	}
	// Ratios round by round: the two systems of a round shared its
	// machine state, so their ratio is steadier than a ratio of medians.
	ratio := func(sys int) (tp, p50, p99, cpu float64, wins [3]int) {
		var tps, p50s, p99s, cpus []float64
		for r := range perSystem[0] {
			a, p := perSystem[0][r], perSystem[sys][r]
			tps = append(tps, p.throughput/a.throughput)
			if a.cpu > 0 && p.cpu > 0 {
				cpus = append(cpus, cpuPer(p)/cpuPer(a))
			}
			p50s = append(p50s, p.p50.Seconds()/a.p50.Seconds())
			p99s = append(p99s, p.p99.Seconds()/a.p99.Seconds())
			if p.throughput >= a.throughput {
				wins[0]++
			}
			if p.p50 <= a.p50 {
				wins[1]++
			}
			if p.p99 <= a.p99 {
				wins[2]++
			}
		}
		if len(cpus) == 0 {
			return median(tps), median(p50s), median(p99s), 0, wins
		}
		return median(tps), median(p50s), median(p99s), median(cpus), wins
	}
	for sys := 1; sys < len(perSystem); sys++ {
		tp, p50, p99, cpu, wins := ratio(sys)
		cpuNote := ""
		if cpu > 0 {
			cpuNote = fmt.Sprintf(", CPU per notification ×%.2f (over all rounds: %.0f µs against %.0f µs, ×%.2f)",
				cpu, totalCPUPer(perSystem[sys]), totalCPUPer(perSystem[0]), totalCPUPer(perSystem[sys])/totalCPUPer(perSystem[0]))
		}
		fmt.Fprintf(&sb, "\n%s ÷ Alertmanager, median of the per-round ratios: throughput ×%.2f, p50 latency ×%.2f, p99 latency ×%.2f%s (rounds where paged was at least as good: %d, %d and %d of %d).\n",
			perSystem[sys][0].name, tp, p50, p99, cpuNote, wins[0], wins[1], wins[2], len(perSystem[0]))
		fmt.Fprintf(&sb, "Throughput over all rounds (every notification of the run over the time of all its rounds): %.0f/s against %.0f/s, ×%.2f.\n",
			totalThroughput(perSystem[sys]), totalThroughput(perSystem[0]), totalThroughput(perSystem[sys])/totalThroughput(perSystem[0]))
	}
	perRun := func(name string) float64 {
		return float64(runCPU[name].Microseconds()) / float64(*n**rounds)
	}
	fmt.Fprintf(&sb, "CPU per notification over the whole run, the quiet between turns included: %s %.0f µs, %s %.0f µs (×%.2f).\n",
		systems[1].name, perRun(systems[1].name), systems[0].name, perRun(systems[0].name), perRun(systems[1].name)/perRun(systems[0].name))
	var bench []string
	for _, rs := range perSystem {
		var cpu time.Duration
		n := 0
		for _, r := range rs {
			cpu, n = cpu+r.benchCPU, n+r.alerts
		}
		bench = append(bench, fmt.Sprintf("%.0f µs in %s's turns", float64(cpu.Microseconds())/float64(n), rs[0].name))
	}
	fmt.Fprintf(&sb, "\nThe bench process (sink and load generator) on the same two cores, per notification over all rounds: %s.\n", strings.Join(bench, ", "))
	fmt.Fprintf(&sb, "\nEvery round (notifications/s, p50, p99, CPU per notification of the measured process):\n\n| round | %s |\n|---|%s\n", strings.Join(names(perSystem), " | "), strings.Repeat("---|", len(perSystem)))
	for r := range perSystem[0] {
		var cells []string
		for _, rs := range perSystem {
			cell := fmt.Sprintf("%.0f, %s, %s", rs[r].throughput, ms(rs[r].p50), ms(rs[r].p99))
			if rs[r].cpu > 0 {
				cell += fmt.Sprintf(", %.0f µs", cpuPer(rs[r]))
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(&sb, "| %d | %s |\n", r+1, strings.Join(cells, " | "))
	}
	fmt.Fprintf(&sb, "\nPeak resident memory at the end of the run (VmHWM): %s %s, %s %s.\n",
		systems[0].name, peakRSS[systems[0].name], systems[1].name, peakRSS[systems[1].name])
	fmt.Fprintf(&sb, "\nNotes:\n\n")
	fmt.Fprintf(&sb, "- The Alertmanager and paged HTTP rows are symmetric: each is its own process, fed over POST /api/v2/alerts by the same client, delivering to the same sink in this process.\n")
	if *inproc {
		fmt.Fprintf(&sb, "- The in-process row hands each batch to Notify in microseconds, so all groups come due within a few milliseconds and flush together, in the process that also runs the sink and the load generator; its latency is queueing behind that burst, not per-alert overhead.\n")
	}
	fmt.Fprintf(&sb, "- Between two systems' turns the benchmark waits until all three processes are idle (under 10 ms of CPU each in 200 ms, at most 5 s), so every turn is a burst on an idle notifier and one system's trailing work does not fall into the next one's turn.\n")
	fmt.Fprintf(&sb, "- paged collects its garbage in the quiet after a burst (100 ms after its last flush, notifier/idlegc.go), so within that wait; the whole-run CPU figure above includes it, and Alertmanager's trailing work too.\n")
	fmt.Fprintf(&sb, "- The sink reads the alert ids from each body without decoding its JSON, to leave the systems as much of the two cores as it can.\n")
	fmt.Fprintf(&sb, "- Groups are never resolved during the run, so each round adds %d groups to every system, as an alert storm would.\n", *n)
	fmt.Print(sb.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(sb.String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// servePaged runs paged's notifier with its Alertmanager API on addr.
func servePaged(addr, confFile string, gogc int, noStorage bool) {
	if gogc > 0 {
		debug.SetGCPercent(gogc)
	}
	text, err := os.ReadFile(confFile)
	if err != nil {
		log.Fatal(err)
	}
	conf, err := notifier.ParseConfig(text)
	if err != nil {
		log.Fatal(err)
	}
	storage := filepath.Join(filepath.Dir(confFile), "paged")
	if noStorage {
		storage = ""
	}
	// Warnings and errors (a failed delivery) go to the benchmark's
	// stderr: a round with one would not measure what it says.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	n, err := notifier.New(notifier.Options{Config: conf, StoragePath: storage, Logger: logger})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = n.Run(context.Background()) }()
	mux := http.NewServeMux()
	mux.Handle("/api/v2/", n.APIHandler())
	// Profiles of the notifier under load: go tool pprof http://ADDR/debug/pprof/profile
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	log.Fatal(http.ListenAndServe(addr, mux))
}

func inprocSend(pn *notifier.Notifier, b []alertJSON) error {
	as := make([]*rules.Alert, len(b))
	for i, a := range b {
		as[i] = &rules.Alert{Labels: labels.FromMap(a.Labels), Annotations: labels.FromMap(a.Annotations), StartsAt: a.StartsAt, EndsAt: a.EndsAt}
	}
	pn.Notify(context.Background(), as)
	return nil
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// medians is the median of each figure over the rounds, separately.
func medians(rs []result) result {
	pick := func(f func(result) float64) float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, f(r))
		}
		return median(v)
	}
	d := func(f func(result) time.Duration) time.Duration {
		return time.Duration(pick(func(r result) float64 { return float64(f(r)) }))
	}
	return result{
		name:       rs[0].name,
		throughput: pick(func(r result) float64 { return r.throughput }),
		p50:        d(func(r result) time.Duration { return r.p50 }),
		p99:        d(func(r result) time.Duration { return r.p99 }),
		max:        d(func(r result) time.Duration { return r.max }),
		cpu:        d(func(r result) time.Duration { return r.cpu }),
		alerts:     rs[0].alerts,
	}
}

// vmHWM is the peak resident set size of process pid, as /proc reports it.
func vmHWM(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return fmt.Sprintf("%d MiB", kb/1024)
		}
	}
	return "?"
}

// totalCPUPer is the CPU time per notification over all rounds, in µs:
// steadier than any one round, whose share of garbage collection cycles
// depends on where the cycles fall.
func totalCPUPer(rs []result) float64 {
	var cpu time.Duration
	n := 0
	for _, r := range rs {
		cpu += r.cpu
		n += r.alerts
	}
	return float64(cpu.Microseconds()) / float64(n)
}

// totalThroughput is the notifications of all rounds over their time.
func totalThroughput(rs []result) float64 {
	var d time.Duration
	n := 0
	for _, r := range rs {
		d, n = d+r.elapsed, n+r.alerts
	}
	return float64(n) / d.Seconds()
}

// cpuPer is the measured process's CPU time per notification, in µs.
func cpuPer(r result) float64 {
	return float64(r.cpu.Microseconds()) / float64(r.alerts)
}

// extremes is the worst and best value of each figure over the rounds:
// lo has the lowest throughput and latencies, hi the highest.
func extremes(rs []result) (lo, hi result) {
	lo, hi = rs[0], rs[0]
	for _, r := range rs[1:] {
		lo.throughput, hi.throughput = min(lo.throughput, r.throughput), max(hi.throughput, r.throughput)
		lo.p50, hi.p50 = min(lo.p50, r.p50), max(hi.p50, r.p50)
		lo.p99, hi.p99 = min(lo.p99, r.p99), max(hi.p99, r.p99)
		lo.cpu, hi.cpu = min(lo.cpu, r.cpu), max(hi.cpu, r.cpu)
	}
	return lo, hi
}

func names(perSystem [][]result) []string {
	var out []string
	for _, rs := range perSystem {
		out = append(out, rs[0].name)
	}
	return out
}
