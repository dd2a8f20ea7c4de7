//go:build reliability

// Package reliability is paged's reliability suite: real processes
// (paged, Debian's Prometheus, Alertmanager and vmalert), real faults
// (SIGKILL, a datasource that goes away, a Slack that answers 429, 500 or
// nothing, a webhook receiver that is down, damaged state files) and the
// figures a user cares about (notifications lost, duplicated, delayed).
// It is built only with the reliability tag: scripts/reliability.sh runs
// it, the short form in CI, the long form on demand.
package reliability

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
)

// long is set by PAGED_RELIABILITY=long: full durations and rounds.
var long = os.Getenv("PAGED_RELIABILITY") == "long"

// logLevel is paged's --log.level (PAGED_RELIABILITY_LOG, default info).
var logLevel = cmp.Or(os.Getenv("PAGED_RELIABILITY_LOG"), "info")

// pick returns the short or the long value.
func pick[T any](short, longV T) T {
	if long {
		return longV
	}
	return short
}

// ---- figures ----

// figure is one measured number of one scenario for one system.
type figure struct {
	Scenario string `json:"scenario"`
	System   string `json:"system"`
	Name     string `json:"name"`
	Value    string `json:"value"`
	Must     string `json:"must,omitempty"` // the requirement, when there is one
	OK       *bool  `json:"ok,omitempty"`
}

var (
	figMu   sync.Mutex
	figures []figure
)

// report records a figure; when must is set, ok says whether it holds
// and a failure fails the test.
func report(t *testing.T, scenario, system, name string, value any, must string, ok ...bool) {
	t.Helper()
	f := figure{Scenario: scenario, System: system, Name: name, Value: fmt.Sprint(value), Must: must}
	if len(ok) > 0 {
		v := ok[0]
		f.OK = &v
		if !v {
			t.Errorf("%s / %s: %s = %v, must be %s", scenario, system, name, value, must)
		}
	}
	t.Logf("%-22s %-26s %-44s %v %s", scenario, system, name, value, must)
	figMu.Lock()
	figures = append(figures, f)
	figMu.Unlock()
}

func TestMain(m *testing.M) {
	code := m.Run()
	out := os.Getenv("PAGED_RELIABILITY_OUT")
	if out == "" {
		out = filepath.Join(os.TempDir(), "paged-reliability-results.json")
	}
	figMu.Lock()
	b, _ := json.MarshalIndent(figures, "", "  ")
	figMu.Unlock()
	_ = os.WriteFile(out, b, 0o644)
	fmt.Printf("\nreliability figures (%s form), also in %s:\n", map[bool]string{false: "short", true: "long"}[long], out)
	printTable(os.Stdout, figures)
	os.Exit(code)
}

// scenarioOrder is the order of the table's scenarios (by prefix); the
// figures of one scenario and system keep the order they were reported in.
var scenarioOrder = []string{"kill -9", "datasource down", "delivery: Slack", "delivery: webhook", "HA pair", "corrupt state", "Slack storm", "full disk", "load", "slow bodies", "expensive regexp"}

func rank(list []string, s string, prefix bool) int {
	for i, p := range list {
		if s == p || prefix && strings.HasPrefix(s, p) {
			return i
		}
	}
	return len(list)
}

// systemRank puts paged first, then Prometheus, then vmalert.
func systemRank(s string) int {
	return rank([]string{"paged", "Prometheus", "vmalert"}, strings.TrimSuffix(strings.Fields(s + " x")[0], ":"), false)
}

func printTable(w io.Writer, fs []figure) {
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, func(a, b figure) int {
		return cmp.Or(cmp.Compare(rank(scenarioOrder, a.Scenario, true), rank(scenarioOrder, b.Scenario, true)),
			strings.Compare(a.Scenario, b.Scenario), cmp.Compare(systemRank(a.System), systemRank(b.System)))
	})
	fmt.Fprintln(w, "| scenario | system | figure | value | must |")
	fmt.Fprintln(w, "|---|---|---|---:|---|")
	for _, f := range fs {
		must := f.Must
		if f.OK != nil {
			must += map[bool]string{true: " ✔", false: " ✘"}[*f.OK]
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", f.Scenario, f.System, f.Name, f.Value, must)
	}
}

// ---- the world the systems watch ----

// exporter serves gauges the scenarios set, in the text format.
type exporter struct {
	srv *httptest.Server
	mu  sync.Mutex
	v   map[string]float64 // series (name{labels}) -> value
}

func newExporter(t *testing.T) *exporter {
	x := &exporter{v: map[string]float64{}}
	x.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		x.mu.Lock()
		keys := make([]string, 0, len(x.v))
		for k := range x.v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		bw := bufio.NewWriter(w)
		for _, k := range keys {
			fmt.Fprintf(bw, "%s %g\n", k, x.v[k])
		}
		x.mu.Unlock()
		bw.Flush()
	}))
	t.Cleanup(x.srv.Close)
	return x
}

func (x *exporter) set(series string, v float64) {
	x.mu.Lock()
	x.v[series] = v
	x.mu.Unlock()
}

func (x *exporter) addr() string { return x.srv.Listener.Addr().String() }

// prometheusConfig scrapes the exporter every second.
func prometheusConfig(x *exporter, extra string) string {
	return prometheusConfigEvery(x, time.Second, extra)
}

// prometheusConfigEvery scrapes the exporter and evaluates rules at the
// given interval.
func prometheusConfigEvery(x *exporter, every time.Duration, extra string) string {
	return fmt.Sprintf(`global:
  scrape_interval: %v
  evaluation_interval: %v
scrape_configs:
  - job_name: exporter
    static_configs: [{targets: [%q]}]
%s`, every, every, x.addr(), extra)
}

// alerting is the part of a Prometheus configuration that evaluates the
// rule file and sends to the Alertmanagers at addrs.
func alerting(rules string, addrs ...string) string {
	q := make([]string, len(addrs))
	for i, a := range addrs {
		q[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf("rule_files: [%q]\nalerting:\n  alertmanagers:\n    - static_configs: [{targets: [%s]}]\n", rules, strings.Join(q, ", "))
}

// prometheus is Debian's Prometheus, restartable on the same port and
// data.
type prometheus struct {
	t    *testing.T
	p    *testbin.Process
	args []string
}

func startPrometheus(t *testing.T, config string, extra ...string) *prometheus {
	t.Helper()
	p := testbin.StartPrometheus(t, config, extra...)
	args := append([]string{
		"--config.file=" + filepath.Join(p.Dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(p.Dir, "data"),
		"--web.listen-address=" + p.Addr,
		"--web.enable-lifecycle",
		"--log.level=warn",
	}, extra...)
	return &prometheus{t: t, p: p, args: args}
}

func (p *prometheus) URL() string { return p.p.URL }
func (p *prometheus) stop()       { p.p.Stop() }

// query returns the value of an instant query's first sample (NaN when
// there is none or Prometheus does not answer).
func (p *prometheus) query(q string) float64 {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(p.URL() + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return math.NaN()
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil || len(body.Data.Result) == 0 {
		return math.NaN()
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// kill sends SIGKILL (the TSDB's WAL is replayed at the next start).
func (p *prometheus) kill() { p.p.Kill() }
func (p *prometheus) restart() {
	p.p = testbin.Start(p.t, testbin.Require(p.t, "prometheus"), p.p.Dir, p.p.Addr, "/-/ready", p.args...)
}

// ---- receivers, with faults ----

// fault is what a receiver does to requests for a while.
type fault int32

const (
	faultNone      fault = iota
	faultRateLimit       // 429 with Retry-After: 2
	faultServer          // 500
	faultTimeout         // no answer within the client's timeout
	faultDown            // the connection is closed without an answer
	faultSMTP421         // SMTP: 421 to every MAIL command
	faultSMTP451         // SMTP: 451 to every MAIL command
)

func (f fault) String() string {
	return [...]string{"none", "429 Retry-After", "500", "timeout", "down", "SMTP 421", "SMTP 451"}[f]
}

// faulty wraps a handler with a switchable fault.
type faulty struct {
	next    http.Handler
	f       atomic.Int32
	refused atomic.Int64
}

func (h *faulty) set(f fault) { h.f.Store(int32(f)) }

func (h *faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch fault(h.f.Load()) {
	case faultNone:
		h.next.ServeHTTP(w, r)
		return
	case faultRateLimit:
		h.refused.Add(1)
		w.Header().Set("Retry-After", "2")
		http.Error(w, "ratelimited", http.StatusTooManyRequests)
	case faultServer:
		h.refused.Add(1)
		http.Error(w, "internal error", http.StatusInternalServerError)
	case faultTimeout:
		h.refused.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	case faultDown:
		h.refused.Add(1)
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
	}
}

// slack is the Slack Web API stand-in behind a fault switch.
type slack struct {
	*notifiertest.Slack
	faults *faulty
	srv    *httptest.Server
}

const (
	slackToken     = "xoxb-reliability"
	slackChannelID = "CALERTS" // the stand-in's id of '#alerts'
)

func newSlack(t *testing.T) *slack {
	s := notifiertest.NewSlackHandler(slackToken)
	f := &faulty{next: s}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &slack{Slack: s, faults: f, srv: srv}
}

func (s *slack) appURL() string { return s.srv.URL + "/api/" }

// hookAlert is one alert of a webhook notification, as received.
type hookAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	At          time.Time         `json:"-"` // when the notification arrived
}

// hook is a webhook receiver (Alertmanager's v4 payload) behind a fault
// switch.
type hook struct {
	faults *faulty
	srv    *httptest.Server
	mu     sync.Mutex
	got    []hookAlert
	posts  int
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.faults = &faulty{next: http.HandlerFunc(h.serve)}
	h.srv = httptest.NewServer(h.faults)
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) serve(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		Alerts []hookAlert `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now()
	h.mu.Lock()
	h.posts++
	for _, a := range msg.Alerts {
		a.At = now
		h.got = append(h.got, a)
	}
	h.mu.Unlock()
}

func (h *hook) URL() string { return h.srv.URL }

// postCount is the number of notifications received.
func (h *hook) postCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.posts
}

func (h *hook) alerts() []hookAlert {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookAlert(nil), h.got...)
}

// named returns the alerts received for alertname (and, when given, the
// label pairs k=v; status=firing or status=resolved matches the status).
func (h *hook) named(name string, match ...string) []hookAlert {
	var out []hookAlert
next:
	for _, a := range h.alerts() {
		if a.Labels["alertname"] != name {
			continue
		}
		for _, m := range match {
			k, v, _ := strings.Cut(m, "=")
			if got := a.Labels[k]; k == "status" {
				got = a.Status
				if got != v {
					continue next
				}
			} else if got != v {
				continue next
			}
		}
		out = append(out, a)
	}
	return out
}

// ---- paged ----

// pagedBin is the paged binary the suite drives (PAGED_BIN, or built once
// from this checkout).
var (
	pagedOnce sync.Once
	pagedPath string
	pagedErr  error
)

func pagedBin(t *testing.T) string {
	t.Helper()
	pagedOnce.Do(func() {
		if p := os.Getenv("PAGED_BIN"); p != "" {
			pagedPath = p
			return
		}
		dir, err := os.MkdirTemp("", "paged-reliability-bin")
		if err != nil {
			pagedErr = err
			return
		}
		pagedPath = filepath.Join(dir, "paged")
		cmd := exec.Command("go", "build", "-o", pagedPath, "../../cmd/paged")
		if out, err := cmd.CombinedOutput(); err != nil {
			pagedErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if pagedErr != nil {
		t.Fatal(pagedErr)
	}
	return pagedPath
}

// paged is one `paged run` process on a fixed config and address.
type paged struct {
	t      *testing.T
	config string
	web    string
	cmd    *exec.Cmd
	out    *testbin.SyncBuffer
	done   chan struct{}
}

// newPaged writes config (with WEB and DATA replaced) to a new directory
// and starts paged on it.
func newPaged(t *testing.T, config string) *paged {
	t.Helper()
	dir := t.TempDir()
	web := testbin.FreeAddr(t)
	config = strings.NewReplacer("WEB", web, "DATA", filepath.Join(dir, "data")).Replace(config)
	file := filepath.Join(dir, "paged.yaml")
	if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &paged{t: t, config: file, web: web}
	p.start()
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *paged) dataDir() string { return filepath.Join(filepath.Dir(p.config), "data") }

// start starts the process; its output is appended to what earlier runs
// printed.
func (p *paged) start() {
	if p.out == nil {
		p.out = &testbin.SyncBuffer{}
	}
	p.cmd = exec.Command(pagedBin(p.t), "run", "--config", p.config, "--log.level="+logLevel)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(p.cmd, p.done)
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *paged) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (p *paged) url() string { return "http://" + p.web }

// waitReady waits until /-/ready answers 200.
func (p *paged) waitReady(timeout time.Duration) {
	p.t.Helper()
	if err := testbin.WaitReady(p.t.Context(), p.url()+"/-/ready", timeout, p.done); err != nil {
		p.t.Fatalf("paged not ready: %v\n%s", err, p.out.String())
	}
}

// apiAlert is an alert of paged's /api/v1/alerts.
type apiAlert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
}

// alerts reads /api/v1/alerts; ok is false when nothing answers.
func (p *paged) alerts() ([]apiAlert, bool) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(p.url() + "/api/v1/alerts")
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []apiAlert `json:"alerts"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return nil, false
	}
	return body.Data.Alerts, true
}

// metric sums a metric of paged's /metrics (0 when unreadable).
func (p *paged) metric(name string) float64 {
	v, _ := testbin.MetricSum(p.url(), name)
	return v
}

// waitFor polls cond every 100ms until it holds (wall time: the systems
// under test are other processes).
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) bool {
	t.Helper()
	if poll(d, cond) {
		return true
	}
	t.Errorf("timed out after %v waiting for %s", d, what)
	return false
}

// poll reports whether cond held within d, checking every 100ms.
func poll(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// freePort reports whether addr can be listened on (the process that had
// it is gone).
func freePort(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// notifierConfig is a notifier block with one receiver holding Slack (bot
// token) and a webhook, grouping by alertname and pod.
func notifierConfig(s *slack, h *hook) string {
	return fmt.Sprintf(`notifier:
  route:
    receiver: oncall
    group_by: [alertname, pod]
    group_wait: 1s
    group_interval: 1s
    repeat_interval: 1h
  receivers:
    - name: oncall
      slack_configs:
        - app_token: %s
          app_url: %s
          channel: '#alerts'
          timeout: 2s
      webhook_configs:
        - url: %s
          timeout: 2s
`, slackToken, s.appURL(), h.URL())
}

// httpPost posts a JSON body and returns the status code.
func httpPost(url, body string) (int, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// tail returns the last n bytes of s, from a line start.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := strings.IndexByte(s[len(s)-n:], '\n')
	return s[len(s)-n+i+1:]
}
