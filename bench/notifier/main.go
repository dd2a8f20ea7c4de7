// Command notifier-bench compares paged's notifier with Debian's
// Alertmanager on the same alert stream and the same webhook sink, in the
// same run: notifications per second, and the latency each adds between an
// alert coming in and its webhook arriving, minus group_wait.
//
//	go run ./bench/notifier -alerts 2000 -out bench/notifier/RESULTS.md
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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/rules"
)

const groupWait = 50 * time.Millisecond

func route(sinkURL, path string) string {
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
`, sinkURL, path)
}

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
	var m struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.got[r.URL.Path]
	if got == nil {
		return
	}
	for _, a := range m.Alerts {
		if _, ok := got[a.Labels["id"]]; !ok {
			got[a.Labels["id"]] = now
		}
	}
	if len(got) == s.want[r.URL.Path] {
		close(s.done[r.URL.Path])
		s.want[r.URL.Path] = -1
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
func run(name string, s *sink, path string, alerts []alertJSON, batch int, send func([]alertJSON) error) result {
	done := s.expect(path, len(alerts))
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
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		log.Fatalf("%s: not all notifications arrived", name)
	}
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
	}
}

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
	flag.Parse()
	if *serve != "" {
		servePaged(*serve, *serveConfig)
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
	sinkSrv := &http.Server{Handler: s}
	go func() { _ = sinkSrv.Serve(sl) }()
	defer sinkSrv.Close()
	sinkURL := "http://" + sl.Addr().String()

	// Debian's Alertmanager.
	dir, err := os.MkdirTemp("", "notifier-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "am.yml"), []byte(route(sinkURL, "/am")), 0o644); err != nil {
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
	if err := os.WriteFile(filepath.Join(dir, "paged.yml"), []byte(route(sinkURL, "/paged")), 0o644); err != nil {
		log.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	pagedAddr := freeAddr()
	child := exec.Command(self, "-serve-paged="+pagedAddr, "-serve-config="+filepath.Join(dir, "paged.yml"))
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	pagedURL := "http://" + pagedAddr
	if err := waitReady(pagedURL + "/api/v2/status"); err != nil {
		log.Fatal(err)
	}

	// And in this process, fed by Notify as `paged run` feeds it.
	conf, err := notifier.ParseConfig([]byte(route(sinkURL, "/inproc")))
	if err != nil {
		log.Fatal(err)
	}
	pn, err := notifier.New(notifier.Options{Config: conf, StoragePath: filepath.Join(dir, "inproc")})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan struct{})
	go func() { _ = pn.Run(ctx); close(runDone) }()

	// Warm both up with a few alerts, then measure.
	run("warmup-am", s, "/am", stream("WarmAM", 20), *batch, postAlerts("http://"+amAddr))
	run("warmup-paged", s, "/paged", stream("WarmPaged", 20), *batch, postAlerts(pagedURL))
	run("warmup-inproc", s, "/inproc", stream("WarmInproc", 20), *batch, func(b []alertJSON) error { return inprocSend(pn, b) })

	amName := "Alertmanager " + strings.Fields(string(amVersion) + " ? ? ?")[2] + " (HTTP)"
	inproc := func(b []alertJSON) error { return inprocSend(pn, b) }
	perSystem := make([][]result, 3)
	for r := range *rounds {
		// Fresh alert names per round: every alert is a new group.
		perSystem[0] = append(perSystem[0], run(amName, s, "/am", stream(fmt.Sprint("BenchAM", r), *n), *batch, postAlerts("http://"+amAddr)))
		perSystem[1] = append(perSystem[1], run("paged (HTTP /api/v2/alerts, own process)", s, "/paged", stream(fmt.Sprint("BenchPagedHTTP", r), *n), *batch, postAlerts(pagedURL)))
		perSystem[2] = append(perSystem[2], run("paged (in-process Notify, shares the bench process)", s, "/inproc", stream(fmt.Sprint("BenchPagedInproc", r), *n), *batch, inproc))
		log.Printf("round %d: %.0f / %.0f / %.0f notifications/s", r+1, perSystem[0][r].throughput, perSystem[1][r].throughput, perSystem[2][r].throughput)
	}
	var spread []string
	for _, rs := range perSystem {
		var tp []string
		for _, r := range rs {
			tp = append(tp, fmt.Sprintf("%.0f", r.throughput))
		}
		spread = append(spread, fmt.Sprintf("| %s | %s |", rs[0].name, strings.Join(tp, ", ")))
	}
	var results []result
	for _, rs := range perSystem {
		slices.SortFunc(rs, func(a, b result) int { return int(a.elapsed - b.elapsed) })
		results = append(results, rs[len(rs)/2])
	}
	cancel()
	<-runDone

	var sb strings.Builder
	fmt.Fprintf(&sb, "# Notifier benchmark: paged vs Alertmanager\n\n")
	fmt.Fprintf(&sb, "Command: `go run ./bench/notifier -alerts %d -batch %d -rounds %d -out bench/notifier/RESULTS.md`\n\n", *n, *batch, *rounds)
	fmt.Fprintf(&sb, "Run: %s, %s/%s, GOMAXPROCS=%d (machine shared with other builds; numbers are indicative).\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	fmt.Fprintf(&sb, "Same webhook sink, same route (every alert its own group, group_wait 50ms), alerts sent in batches of %d.\n", *batch)
	fmt.Fprintf(&sb, "Latency = webhook received − alert sent − group_wait. %d rounds, systems interleaved; each row is the system's median round (by wall time).\n\n", *rounds)
	fmt.Fprintf(&sb, "| system | notifications | wall time | notifications/s | latency p50 | p99 | max |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&sb, "| %s | %d | %s | %.0f | %s | %s | %s |\n", r.name, r.alerts, r.elapsed.Round(time.Millisecond),
			r.throughput, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.max.Round(time.Millisecond))
	}
	am0, pg := results[0], results[1]
	fmt.Fprintf(&sb, "\nRatio paged/Alertmanager over HTTP: throughput ×%.2f, p50 latency ×%.2f, p99 latency ×%.2f.\n",
		pg.throughput/am0.throughput, pg.p50.Seconds()/am0.p50.Seconds(), pg.p99.Seconds()/am0.p99.Seconds())
	fmt.Fprintf(&sb, "\nEvery round, notifications/s in order:\n\n| system | rounds |\n|---|---|\n%s\n", strings.Join(spread, "\n"))
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&sb, "\nNotes:\n\n")
	fmt.Fprintf(&sb, "- Load average at the end of the run: %s (2 cores shared with other engineers' builds), so rounds vary a lot; rerun for your machine.\n", strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(&sb, "- The Alertmanager and paged rows are symmetric: each is its own process, fed over POST /api/v2/alerts by the same client, delivering to the same sink.\n")
	fmt.Fprintf(&sb, "- The in-process row hands each batch to Notify in microseconds, so all groups come due within a few milliseconds and flush together, in the process that also runs the sink and the load generator; its latency is queueing behind that burst, not per-alert overhead.\n")
	fmt.Print(sb.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(sb.String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// servePaged runs paged's notifier with its Alertmanager API on addr.
func servePaged(addr, confFile string) {
	text, err := os.ReadFile(confFile)
	if err != nil {
		log.Fatal(err)
	}
	conf, err := notifier.ParseConfig(text)
	if err != nil {
		log.Fatal(err)
	}
	n, err := notifier.New(notifier.Options{Config: conf, StoragePath: filepath.Join(filepath.Dir(confFile), "paged")})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = n.Run(context.Background()) }()
	mux := http.NewServeMux()
	mux.Handle("/api/v2/", n.APIHandler())
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
