// Package testbin finds and starts the real binaries that integration tests
// run against (Debian's prometheus, promtool, prometheus-alertmanager,
// amtool, chromium, vmalert) on free loopback ports, and locates the shared
// corpus.
//
// A missing binary fails the test when CI is set and skips it elsewhere, with
// a message that says how to install it.
package testbin

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Debian package that provides each binary, for the install hint.
var packages = map[string]string{
	"prometheus":              "prometheus",
	"promtool":                "prometheus",
	"prometheus-alertmanager": "prometheus-alertmanager",
	"amtool":                  "prometheus-alertmanager",
	"chromium":                "chromium",
	"vmalert":                 "victoria-metrics",
	"victoria-metrics":        "victoria-metrics",
}

// Require returns the path of the named binary. When it is missing the test
// fails if the CI environment variable is set, and is skipped otherwise.
func Require(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	pkg := packages[name]
	if pkg == "" {
		pkg = name
	}
	msg := fmt.Sprintf("%s not found on PATH; install it with: apt-get install -y %s (or run scripts/test.sh, which does)", name, pkg)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// RepoRoot returns the root of the paged module (the folder with go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate testbin source")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// SharedDir returns the shared folder (corpus and fixtures). It comes from
// PAGED_SHARED, which the README's test command sets; when that is set and
// the folder is missing the test fails. When it is unset, ../shared beside
// the repository is used if present; otherwise the test fails under CI and
// is skipped elsewhere.
func SharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("PAGED_SHARED"); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Fatalf("PAGED_SHARED=%s is not a directory", d)
		}
		return d
	}
	d := filepath.Join(RepoRoot(t), "..", "shared")
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return d
	}
	msg := "shared corpus not found: set PAGED_SHARED to the shared/ folder (scripts/test.sh does)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// FreeAddr returns a loopback address with a port that was free a moment
// ago, for a process the test starts next.
//
// The port comes from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), at random, and never twice in this
// process: a port from the ephemeral range, closed again, can be taken as
// the source port of any outgoing connection before the process binds it,
// which under the reliability suite's load happened ("address already in
// use"). Without a usable range below, the kernel picks as before.
func FreeAddr(t testing.TB) string {
	t.Helper()
	if lo := ephemeralLow(); lo > 20000 {
		for range 200 {
			port := 10000 + rand.IntN(lo-10000)
			freeMu.Lock()
			taken := handedOut[port]
			handedOut[port] = true
			freeMu.Unlock()
			if taken {
				continue
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			if l, err := net.Listen("tcp", addr); err == nil {
				l.Close()
				return addr
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

var (
	freeMu    sync.Mutex
	handedOut = map[int]bool{}
)

// ephemeralLow is the first port of the kernel's ephemeral range, or 0
// when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	lo, _ := strconv.Atoi(f[0])
	return lo
}

// Process is a started binary. Its output is kept for failure messages.
type Process struct {
	Addr string // host:port it listens on
	URL  string // http://Addr
	Dir  string // its working/data directory

	cmd  *exec.Cmd
	out  *SyncBuffer
	done chan struct{}
}

// Output returns what the process printed so far.
func (p *Process) Output() string { return p.out.String() }

// Stop kills the process and waits for it. It is safe to call twice.
func (p *Process) Stop() {
	if p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill sends SIGKILL (no chance to save anything) and waits for the
// process to be gone. It is safe to call on a stopped process.
func (p *Process) Kill() {
	if p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Start runs the binary with args, waits until GET readyPath on addr answers
// 200, and stops it in t.Cleanup.
func Start(t testing.TB, bin, dir, addr, readyPath string, args ...string) *Process {
	t.Helper()
	p, err := Launch(t, 30*time.Second, bin, dir, addr, readyPath, args...)
	if err != nil {
		t.Fatalf("%v\noutput:\n%s", err, p.Output())
	}
	return p
}

// Launch is Start for a test that expects the binary may not come up: it
// returns an error (with the process, its output and whether it exited)
// instead of failing the test. The process is stopped in t.Cleanup either
// way.
func Launch(t testing.TB, timeout time.Duration, bin, dir, addr, readyPath string, args ...string) (*Process, error) {
	t.Helper()
	p := &Process{Addr: addr, URL: "http://" + addr, Dir: dir, out: &SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	if err := p.cmd.Start(); err != nil {
		close(p.done)
		return p, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Stop)
	if err := WaitReady(context.Background(), p.URL+readyPath, timeout, p.done); err != nil {
		return p, fmt.Errorf("%s did not become ready: %w", filepath.Base(bin), err)
	}
	return p, nil
}

// WaitReady polls url until it answers 200, the timeout passes or exited is
// closed. It is for external processes only, whose readiness no clock in
// the test can drive.
func WaitReady(ctx context.Context, url string, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-exited:
			return fmt.Errorf("process exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StartPrometheus writes config to a temp dir and starts Debian's prometheus
// on a free loopback port with lifecycle endpoints enabled. Extra args are
// appended (for example "--storage.tsdb.retention.time=1d").
func StartPrometheus(t testing.TB, config string, extra ...string) *Process {
	t.Helper()
	bin := Require(t, "prometheus")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	args := append([]string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--web.enable-lifecycle",
		"--log.level=warn",
	}, extra...)
	return Start(t, bin, dir, addr, "/-/ready", args...)
}

// StartAlertmanager writes config to a temp dir and starts Debian's
// prometheus-alertmanager on a free loopback port, clustering off.
func StartAlertmanager(t testing.TB, config string, extra ...string) *Process {
	t.Helper()
	bin := Require(t, "prometheus-alertmanager")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	args := append([]string{
		"--config.file=" + filepath.Join(dir, "alertmanager.yml"),
		"--storage.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--cluster.listen-address=",
		"--log.level=warn",
	}, extra...)
	return Start(t, bin, dir, addr, "/-/ready", args...)
}

// Port returns the port of a host:port address.
func Port(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// SyncBuffer is an output sink safe for concurrent writers: a process's
// output, or a logger's in a test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// MetricSum reads baseURL/metrics and sums the samples of the named
// counter or gauge over the label sets that have every given name/value
// pair (none: all of them). The name may carry equality matchers of its
// own, as a selector does (`paged_alerts{state="firing"}`). It returns
// an error when the name or the page cannot be parsed or read.
func MetricSum(baseURL, name string, labelPairs ...string) (float64, error) {
	if strings.Contains(name, "{") {
		ms, err := parser.NewParser(parser.Options{}).ParseMetricSelector(name)
		if err != nil {
			return 0, fmt.Errorf("metric %s: %w", name, err)
		}
		name = ""
		for _, m := range ms {
			switch {
			case m.Type != labels.MatchEqual:
				return 0, fmt.Errorf("metric %s: only = matchers are supported", m)
			case m.Name == labels.MetricName:
				name = m.Value
			default:
				labelPairs = append(labelPairs, m.Name, m.Value)
			}
		}
	}
	resp, err := http.Get(baseURL + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s/metrics: %s", baseURL, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("GET %s/metrics: %w", baseURL, err)
	}
	mf, ok := mfs[name]
	if !ok {
		return 0, nil
	}
	return sumFamily(mf, labelPairs), nil
}

// GatherSum sums the samples of the named counter or gauge in g, over the
// label sets that have every given name/value pair (none: all of them).
func GatherSum(g prometheus.Gatherer, name string, labelPairs ...string) (float64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			sum += sumFamily(mf, labelPairs)
		}
	}
	return sum, nil
}

// sumFamily sums the counter, gauge and untyped samples of mf whose
// labels have every name/value pair.
func sumFamily(mf *dto.MetricFamily, labelPairs []string) float64 {
	sum := 0.0
	for _, m := range mf.GetMetric() {
		if !hasLabels(m, labelPairs) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Untyped != nil:
			sum += m.Untyped.GetValue()
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
			return l.GetName() == pairs[i] && l.GetValue() == pairs[i+1]
		}) {
			return false
		}
	}
	return true
}

// ChromiumDOM loads target in headless Chromium (Debian's chromium) and
// returns the DOM after the page's scripts ran: what a browser shows, not
// what curl gets.
func ChromiumDOM(t testing.TB, target string) string {
	t.Helper()
	bin := Require(t, "chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000",
		"--dump-dom", target)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	if stdout.Len() == 0 {
		t.Fatalf("chromium dumped no DOM:\n%s", stderr.String())
	}
	return stdout.String()
}

// CPUSeconds is the CPU time (user and system) a running process has used
// so far, from /proc/<pid>/stat: what a test measures an idle process's
// CPU share with, without asking the process.
func CPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is the first, utime and stime the 12th and 13th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return (utime + stime) / 100, nil // USER_HZ
}
