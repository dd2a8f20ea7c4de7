package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// hook counts the notifications a webhook receiver gets, by alertname.
type hook struct {
	mu  sync.Mutex
	got map[string]int
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range msg.Alerts {
		if a.Status == "firing" {
			h.got[a.Labels["alertname"]]++
		}
	}
}

func (h *hook) count(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got[name]
}

// peerProc is one `paged run` process of the pair.
type peerProc struct {
	cmd *exec.Cmd
	web string // base URL
	out *testbin.SyncBuffer
}

// metric sums a metric's samples on the peer's /metrics (0 when it cannot
// be read: the process may be gone).
func (p *peerProc) metric(name string) float64 {
	v, _ := testbin.MetricSum(p.web, name)
	return v
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool, peers ...*peerProc) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			for i, p := range peers {
				t.Logf("peer %d output:\n%s", i, p.out.String())
			}
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHAPairSurvivesKill runs two real `paged run` processes as an HA pair
// against a datasource that is down, so both fire PagedDatasourceDown: the
// webhook gets it once. Then the peer that sent it is killed with SIGKILL
// (no leave message) and an alert posted to the survivor still arrives,
// once.
func TestHAPairSurvivesKill(t *testing.T) {
	paged, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	h := &hook{got: map[string]int{}}
	sink := httptest.NewServer(h)
	t.Cleanup(sink.Close)
	dir := t.TempDir()
	gossip := []string{testbin.FreeAddr(t), testbin.FreeAddr(t)}
	var peers []*peerProc
	for i := range 2 {
		web := testbin.FreeAddr(t)
		conf := fmt.Sprintf(`global:
  evaluation_interval: 1s
datasource:
  type: prometheus
  prometheus:
    url: http://%s
    timeout: 1s
rule_files: [%q]
storage:
  path: %q
web:
  listen_address: %s
cluster:
  listen_address: %s
  peers: [%q]
  peer_timeout: 2s
  gossip_interval: 100ms
  pushpull_interval: 1s
notifier:
  route:
    receiver: hook
    group_by: [alertname]
    group_wait: 1s
    group_interval: 1m
    repeat_interval: 1h
  receivers:
    - name: hook
      webhook_configs:
        - url: %s
`, testbin.FreeAddr(t), filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm", "vllm.rules.yaml"),
			filepath.Join(dir, fmt.Sprint("peer", i)), web, gossip[i], gossip[1-i], sink.URL)
		file := filepath.Join(dir, fmt.Sprintf("paged-%d.yaml", i))
		if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		p := &peerProc{cmd: exec.Command(paged, "run", "--config", file), web: "http://" + web, out: &testbin.SyncBuffer{}}
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		})
		peers = append(peers, p)
	}

	// Both peers fire PagedDatasourceDown and take it through their
	// pipelines; only one sends.
	waitUntil(t, 60*time.Second, "both peers to flush PagedDatasourceDown", func() bool {
		return peers[0].metric("paged_notifier_group_flushes_total") >= 1 && peers[1].metric("paged_notifier_group_flushes_total") >= 1
	}, peers...)
	if n := h.count("PagedDatasourceDown"); n != 1 {
		t.Fatalf("the webhook got PagedDatasourceDown %d times from the pair, want 1", n)
	}
	sender, survivor := peers[0], peers[1]
	if peers[1].metric("alertmanager_notifications_total") > 0 {
		sender, survivor = peers[1], peers[0]
	}

	// The sender dies without a word.
	if err := sender.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = sender.cmd.Wait()

	body := fmt.Sprintf(`[{"labels":{"alertname":"AfterCrash","severity":"critical"},"startsAt":%q}]`, time.Now().UTC().Format(time.RFC3339))
	resp, err := http.Post(survivor.web+"/api/v2/alerts", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts to the survivor: %s", resp.Status)
	}
	waitUntil(t, 30*time.Second, "the survivor to deliver AfterCrash", func() bool { return h.count("AfterCrash") >= 1 }, survivor)
	if n := h.count("AfterCrash"); n != 1 {
		t.Errorf("AfterCrash delivered %d times, want 1", n)
	}
}
