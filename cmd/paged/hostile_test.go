package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

func healthy(p *pagedProc) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(p.web + "/-/healthy")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
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
		pid := p.cmd.Process.Pid
		idle, err := testbin.RSS(pid)
		if err != nil {
			t.Fatal(err)
		}
		wave := testbin.Stall{Addr: web, Head: tc.head, Declared: declared, Payload: strings.Repeat("x", sent), N: conns, Wait: 60 * time.Second}
		o, err := wave.Run(pid)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		above := o.PeakRSS - idle
		t.Logf("%s: RSS +%.1f MiB above idle at most, last connection closed after %v, statuses %v, %d left open",
			tc.name, float64(above)/(1<<20), o.LastClose.Round(10*time.Millisecond), o.Statuses, o.Open)
		if above > 150<<20 {
			t.Errorf("%s: RSS rose %.1f MiB above idle, want under 150 MiB", tc.name, float64(above)/(1<<20))
		}
		if o.Open > 0 {
			t.Errorf("%s: %d of %d connections still open after 60s", tc.name, o.Open, conns)
		}
		if o.LastClose > readTimeout+15*time.Second {
			t.Errorf("%s: the last connection was closed after %v, want within web.read_timeout (%v) and a margin", tc.name, o.LastClose, readTimeout)
		}
		for status, n := range o.Statuses {
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
