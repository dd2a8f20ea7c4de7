// Package uibench measures paged's alerts page: server time to render the
// page with 10,000 alerts held by the notifier (go test ./bench/ui -bench .).
package uibench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/server"
)

const config = `
datasource:
  prometheus: {url: "http://127.0.0.1:1"}
rule_files: [empty.rules.yaml]
storage: {path: data}
notifier:
  route: {receiver: devnull, group_by: [alertname, instance]}
  receivers: [{name: devnull}]
`

// newServer is a paged whose notifier holds n alerts, posted as
// Prometheus posts them: 100 alert names over 5 servers, 2 severities.
func newServer(b *testing.B, n int) http.Handler {
	dir := b.TempDir()
	for name, content := range map[string]string{"paged.yaml": config, "empty.rules.yaml": "groups: []\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := server.New(server.Options{ConfigFile: filepath.Join(dir, "paged.yaml"), Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	servers := []string{"vllm", "tgi", "sglang", "triton", "dcgm"}
	end := time.Now().Add(time.Hour).UTC()
	for start := 0; start < n; start += 1000 {
		var batch []map[string]any
		for i := start; i < min(n, start+1000); i++ {
			sev := "warning"
			if i%7 == 0 {
				sev = "critical"
			}
			batch = append(batch, map[string]any{
				"labels": map[string]string{
					"alertname": fmt.Sprintf("Alert%03d", i%100), "severity": sev, "server": servers[i%5],
					"instance": fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250), "model_name": "meta-llama/Llama-3.1-8B-Instruct",
				},
				"annotations": map[string]string{"summary": fmt.Sprintf("summary of alert %d", i), "runbook_url": "vllm/VLLMKVCacheSaturated"},
				"endsAt":      end,
			})
		}
		body, _ := json.Marshal(batch)
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/v2/alerts", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("POST /api/v2/alerts: %d %s", rec.Code, rec.Body.String())
		}
	}
	return h
}

func BenchmarkAlertsPage(b *testing.B) {
	const n = 10000
	h := newServer(b, n)
	for _, q := range []string{"", "?state=firing&severity=critical", "?filter=" + `%7Bserver%3D%22tgi%22%7D`} {
		b.Run("query="+q, func(b *testing.B) {
			var size int
			var body string
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+q, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET /%s = %d", q, rec.Code)
				}
				size, body = rec.Body.Len(), rec.Body.String()
			}
			// Every alert is counted; the first page's are listed.
			if !strings.Contains(body, fmt.Sprintf("of %d alerts", n)) || strings.Count(body, `<tr class="alert `) == 0 {
				b.Fatalf("the page does not hold the %d alerts:\n%.2000s", n, body)
			}
			b.ReportMetric(float64(size)/1024, "KiB/page")
		})
	}
}
