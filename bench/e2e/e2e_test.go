//go:build e2e

// Package e2e measures the time from a metric crossing its threshold to
// the webhook receiving the alert: paged (remote mode against Debian's
// Prometheus, with and without evaluation alignment, and embedded mode)
// against that Prometheus evaluating the same rule and sending to
// Debian's Alertmanager, all watching the same exporter in the same run.
//
//	go test -tags e2e -count=1 -v -run TestEndToEnd ./bench/e2e/ -trials 10
//
// Every system scrapes and evaluates every second; the rule has no for,
// every route has group_wait 0s. A trial sets a new series (its own trial
// label) above the threshold at a random moment and waits for every
// system's firing notification; the latency is its arrival minus the
// moment the exporter started serving the value.
package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

var (
	trials = flag.Int("trials", 10, "trials (threshold crossings) per round")
	rounds = flag.Int("rounds", 3, "rounds; each starts every process afresh, so that each system's scrape and evaluation phases are drawn again")
)

// exporter serves e2e_load{trial="N"} for every trial so far.
type exporter struct {
	addr   string // host:port
	mu     sync.Mutex
	values map[int]float64
}

func (x *exporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var b strings.Builder
	b.WriteString("# TYPE e2e_load gauge\n")
	keys := make([]int, 0, len(x.values))
	for k := range x.values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "e2e_load{trial=\"%d\"} %g\n", k, x.values[k])
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}

func (x *exporter) set(trial int, v float64) time.Time {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.values[trial] = v
	return time.Now()
}

// sink records the first firing notification of each trial, per path.
type sink struct {
	mu  sync.Mutex
	got map[string]map[string]time.Time
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	var p struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.got[r.URL.Path]
	if m == nil {
		m = map[string]time.Time{}
		s.got[r.URL.Path] = m
	}
	for _, a := range p.Alerts {
		if a.Status != "firing" || a.Labels["alertname"] != "E2ELoadHigh" {
			continue
		}
		if _, ok := m[a.Labels["trial"]]; !ok {
			m[a.Labels["trial"]] = now
		}
	}
}

func (s *sink) at(path string, trial int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.got[path][fmt.Sprint(trial)]
	return t, ok
}

const rule = `groups:
  - name: e2e
    interval: 1s
    rules:
      - alert: E2ELoadHigh
        expr: e2e_load > 5
        labels: {severity: warning}
        annotations: {summary: 'load {{ $value }}'}
`

type system struct {
	name, path string
	lat        []time.Duration
}

func TestEndToEnd(t *testing.T) {
	testbin.Require(t, "prometheus")
	testbin.Require(t, "prometheus-alertmanager")
	x := &exporter{values: map[int]float64{}}
	xs := httptest.NewServer(x)
	defer xs.Close()
	x.addr = strings.TrimPrefix(xs.URL, "http://")
	sk := &sink{got: map[string]map[string]time.Time{}}
	ss := httptest.NewServer(sk)
	defer ss.Close()
	bin := filepath.Join(t.TempDir(), "paged")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/paged").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	systems := []*system{
		{name: "Prometheus 2.42 + Alertmanager 0.25", path: "/am"},
		{name: "paged, remote (against that Prometheus), aligned", path: "/paged-remote"},
		{name: "paged, remote, align_evaluations: false", path: "/paged-remote-fixed"},
		{name: "paged, embedded, aligned", path: "/paged-embedded"},
	}
	perRound := make([][]time.Duration, len(systems))
	trial := 0
	for r := 1; r <= *rounds; r++ {
		t.Run(fmt.Sprintf("round%d", r), func(t *testing.T) {
			before := make([]int, len(systems))
			for i, s := range systems {
				before[i] = len(s.lat)
			}
			round(t, bin, x, ss.URL, sk, systems, &trial)
			for i, s := range systems {
				perRound[i] = append(perRound[i], median(s.lat[before[i]:]))
			}
		})
	}

	t.Logf("metric crossing its threshold to webhook, 1s scrape and evaluation, for 0s, group_wait 0s, %d rounds of %d trials:", *rounds, *trials)
	t.Logf("| system | median | min | max | medians of the rounds | trials |")
	t.Logf("|---|---:|---:|---:|---|---:|")
	ref := median(systems[0].lat)
	for i, s := range systems {
		if len(s.lat) == 0 {
			continue
		}
		sorted := slices.Clone(s.lat)
		slices.Sort(sorted)
		var rs []string
		for _, m := range perRound[i] {
			rs = append(rs, m.Round(time.Millisecond).String())
		}
		t.Logf("| %s | %v | %v | %v | %s | %d |", s.name, median(s.lat).Round(time.Millisecond), sorted[0].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), strings.Join(rs, ", "), len(s.lat))
	}
	for _, s := range systems[1:] {
		if len(s.lat) > 0 && ref > 0 {
			t.Logf("%s: median ×%.2f of Prometheus + Alertmanager", s.name, float64(median(s.lat))/float64(ref))
		}
	}
}

// round starts every system afresh and runs the trials.
func round(t *testing.T, bin string, x *exporter, sinkURL string, sk *sink, systems []*system, trial *int) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "e2e.rules.yml")
	if err := os.WriteFile(rules, []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	am := testbin.StartAlertmanager(t, fmt.Sprintf(`route:
  receiver: sink
  group_by: [trial]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: sink
    webhook_configs: [{url: %s/am}]
`, sinkURL))
	prom := testbin.StartPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
alerting:
  alertmanagers: [{static_configs: [{targets: [%q]}]}]
scrape_configs:
  - job_name: e2e
    static_configs: [{targets: [%q]}]
`, rules, strings.TrimPrefix(am.URL, "http://"), x.addr))
	notifier := func(path string) string {
		return fmt.Sprintf(`notifier:
  route: {receiver: sink, group_by: [trial], group_wait: 0s, group_interval: 1s, repeat_interval: 1h}
  receivers:
    - name: sink
      webhook_configs: [{url: %s%s}]
`, sinkURL, path)
	}
	startPaged := func(name, datasource, extra, path string) {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		addr := testbin.FreeAddr(t)
		cfg := fmt.Sprintf("global:\n  evaluation_interval: 1s\n%sdatasource:\n%srule_files: [%q]\nstorage: {path: %q}\nweb: {listen_address: %q}\n%s",
			extra, datasource, rules, filepath.Join(d, "data"), addr, notifier(path))
		file := filepath.Join(d, "paged.yaml")
		if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		testbin.Start(t, bin, d, addr, "/-/ready", "run", "--config", file)
	}
	remote := fmt.Sprintf("  type: prometheus\n  prometheus: {url: %s}\n", prom.URL)
	startPaged("remote", remote, "", "/paged-remote")
	startPaged("remote-fixed", remote, "  align_evaluations: false\n", "/paged-remote-fixed")
	startPaged("embedded", fmt.Sprintf("  type: embedded\n  embedded:\n    scrape_interval: 1s\n    scrape_configs:\n      - job_name: e2e\n        static_configs: [{targets: [%q]}]\n", x.addr), "", "/paged-embedded")

	// Let every scraper and group settle, and the alignment learn.
	time.Sleep(20 * time.Second)
	for range *trials {
		*trial++
		n := *trial
		x.set(n, 0)
		time.Sleep(time.Duration(2000+rand.IntN(1000)) * time.Millisecond)
		at := x.set(n, 10)
		deadline := time.Now().Add(20 * time.Second)
		for _, s := range systems {
			for {
				if got, ok := sk.at(s.path, n); ok {
					s.lat = append(s.lat, got.Sub(at))
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("trial %d: no notification from %s", n, s.name)
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		x.set(n, 0)
		time.Sleep(2 * time.Second)
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
