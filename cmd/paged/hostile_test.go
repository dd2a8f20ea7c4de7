package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// rssBytes is a process's resident set size.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// stallOutcome is what a wave of stalled bodies did to a process.
type stallOutcome struct {
	peakAbove int64         // RSS above the idle RSS, at its highest
	lastClose time.Duration // when the last connection was closed, from the wave's start
	statuses  map[string]int
	open      int // connections still open at the end
}

// stallBodies opens n raw connections to addr that each send head (a
// request line and headers declaring a body of declared bytes), then sent
// bytes of it, and stall; it samples pid's RSS until every connection has
// been closed by the server or wait has passed.
func stallBodies(t *testing.T, pid int, addr, head string, n, declared, sent int, wait time.Duration) stallOutcome {
	t.Helper()
	idle := rssBytes(t, pid)
	payload := strings.Repeat("x", sent)
	out := stallOutcome{statuses: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetDeadline(start.Add(wait))
			// The server may answer and close before the body is sent:
			// a failed write is part of the outcome, not an error.
			_, _ = io.WriteString(c, fmt.Sprintf(head, declared))
			_, _ = io.WriteString(c, payload)
			status := "none"
			br := bufio.NewReader(c)
			if line, err := br.ReadString('\n'); err == nil {
				if f := strings.Fields(line); len(f) > 1 {
					status = f[1]
				}
			}
			// Read until the server closes the connection.
			_, err := io.Copy(io.Discard, br)
			closed := err == nil || !isTimeoutErr(err)
			mu.Lock()
			out.statuses[status]++
			if closed {
				out.lastClose = max(out.lastClose, time.Since(start))
			} else {
				out.open++
			}
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
sample:
	for {
		out.peakAbove = max(out.peakAbove, rssBytes(t, pid)-idle)
		select {
		case <-done:
			break sample
		case <-tick.C:
		}
	}
	for _, c := range conns {
		c.Close()
	}
	return out
}

func healthy(p *pagedProc) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(p.web + "/-/healthy")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func isTimeoutErr(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// A real `paged run` process, with a bearer token and a short
// web.read_timeout (2s), under 100 connections that each declare a 4 MiB
// body, send 4 MB of it and stall (issue 39, item 6), three ways: POST
// /api/v2/alerts with the token, the same without it, and GET /-/healthy
// with a body. Its RSS stays within 150 MiB of its idle RSS (the bodies
// held at once are bounded by web.max_request_bytes_in_flight, 32 MiB),
// and every connection is closed by paged within the read timeout and a
// margin far from the measured 2–3 s. After each wave paged still
// answers.
func TestStalledBodiesBoundMemory(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	dir := t.TempDir()
	const token = "s3cret-token"
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "none.rules.yaml"), []byte("groups: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	web := testbin.FreeAddr(t)
	config := filepath.Join(dir, "paged.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`datasource:
  prometheus: {url: "http://127.0.0.1:1"}
rule_files: [none.rules.yaml]
storage: {path: %q}
web:
  listen_address: %s
  auth_token_file: token
  read_timeout: 2s
notifier:
  route: {receiver: none}
  receivers: [{name: none}]
`, filepath.Join(dir, "data"), web)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPaged(t, bin, config, web)
	// No datasource answers: paged is healthy, not ready.
	for i := 0; i < 300 && !healthy(p); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if !healthy(p) {
		t.Fatalf("paged not healthy:\n%s", p.out.String())
	}
	// Let start-up's allocations settle before idle is read.
	time.Sleep(2 * time.Second)

	const (
		readTimeout = 2 * time.Second
		declared    = 4 << 20
		sent        = 4_000_000
		conns       = 100
	)
	post := "POST /api/v2/alerts HTTP/1.1\r\nHost: paged\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
	for _, tc := range []struct {
		name, head string
		want       []string // the statuses paged may answer
	}{
		{"POST /api/v2/alerts with the token", post + "Authorization: Bearer " + token + "\r\n\r\n", []string{"408", "503"}},
		{"POST /api/v2/alerts without a token", post + "\r\n", []string{"401"}},
		{"GET /-/healthy with a body", "GET /-/healthy HTTP/1.1\r\nHost: paged\r\nContent-Length: %d\r\n\r\n", []string{"413"}},
	} {
		o := stallBodies(t, p.cmd.Process.Pid, web, tc.head, conns, declared, sent, 60*time.Second)
		t.Logf("%s: RSS +%.1f MiB above idle at most, last connection closed after %v, statuses %v, %d left open",
			tc.name, float64(o.peakAbove)/(1<<20), o.lastClose.Round(10*time.Millisecond), o.statuses, o.open)
		if o.peakAbove > 150<<20 {
			t.Errorf("%s: RSS rose %.1f MiB above idle, want under 150 MiB", tc.name, float64(o.peakAbove)/(1<<20))
		}
		if o.open > 0 {
			t.Errorf("%s: %d of %d connections still open after 60s", tc.name, o.open, conns)
		}
		if o.lastClose > readTimeout+15*time.Second {
			t.Errorf("%s: the last connection was closed after %v, want within web.read_timeout (%v) and a margin", tc.name, o.lastClose, readTimeout)
		}
		for status, n := range o.statuses {
			if !slices.Contains(tc.want, status) {
				t.Errorf("%s: %d connections answered %s, want one of %v", tc.name, n, status, tc.want)
			}
		}
		if !healthy(p) {
			t.Fatalf("paged does not answer after %s:\n%s", tc.name, p.out.String())
		}
	}
	// The held bodies were given back: a small authorised POST passes.
	req, _ := http.NewRequest(http.MethodPost, p.web+"/api/v2/alerts", strings.NewReader(`[{"labels":{"alertname":"After"}}]`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /api/v2/alerts after the waves = %d, want 200", resp.StatusCode)
	}
}
