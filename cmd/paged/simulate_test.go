package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// lockedBuffer is written by the command's goroutine and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSimulateServes runs `paged simulate` in-process on a free port,
// scrapes it, switches the scenario over HTTP and stops it by cancelling
// the context, as SIGINT does.
func TestSimulateServes(t *testing.T) {
	addr := testbin.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	exited := make(chan struct{})
	go func() {
		done <- Main(ctx, []string{"simulate", "--listen", addr, "--server", "tgi", "--speed", "60", "--seed", "3"}, strings.NewReader(""), &stdout, &stderr)
		close(exited)
	}()
	base := "http://" + addr
	if err := testbin.WaitReady(ctx, base+"/health", 10*time.Second, exited); err != nil {
		t.Fatalf("simulate did not start: %v\nstderr: %s", err, stderr.String())
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "# TYPE tgi_batch_max_total_tokens gauge\ntgi_batch_max_total_tokens 16000\n") {
		t.Errorf("GET /metrics: %d\n%.300s", resp.StatusCode, body)
	}
	resp, err = http.Post(base+"/scenario?name=error-burst", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("POST /scenario: %d", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after cancel, want 0; stderr: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("simulate did not stop after cancel")
	}
	if out := stdout.String(); !strings.Contains(out, "simulating tgi (scenario steady, seed 3, speed 60x) on http://"+addr+"/metrics") {
		t.Errorf("stdout: %q", out)
	}
	if !strings.Contains(stderr.String(), "scenario selected") || !strings.Contains(stderr.String(), "scenario=error-burst") {
		t.Errorf("stderr lacks the scenario change: %q", stderr.String())
	}
}

// TestSimulateCount serves several servers from one process (the benchmark
// setup): each answers on its own port with its own seed.
func TestSimulateCount(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"simulate", "--listen", "127.0.0.1:0", "--count", "3", "--server", "vllm-v0"}, strings.NewReader(""), &stdout, &stderr)
	}()
	var urls []string
	deadline := time.Now().Add(10 * time.Second)
	for len(urls) < 3 {
		urls = urls[:0]
		for _, line := range strings.Split(stdout.String(), "\n") {
			if i := strings.Index(line, " on http://"); i > 0 {
				urls = append(urls, strings.TrimSpace(line[i+4:]))
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("simulate --count 3 printed %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // waiting for another goroutine's output
	}
	seen := map[string]bool{}
	for _, u := range urls {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "vllm:num_requests_swapped") {
			t.Errorf("GET %s: %d %.200s", u, resp.StatusCode, body)
		}
		seen[u] = true
	}
	if len(seen) != 3 {
		t.Errorf("want 3 distinct addresses, got %v", urls)
	}
	if !strings.Contains(stdout.String(), "seed 3,") {
		t.Errorf("seeds are not 1, 2, 3: %s", stdout.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d, stderr %s", code, stderr.String())
	}
}
