package server

import (
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestUITargets: in embedded mode the status page lists every target with
// its health and last error: a simulated vLLM server up, a closed port
// down with the connection error.
func TestUITargets(t *testing.T) {
	sim := startCountingSim(t, 4)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	writeFile(t, dir, "a.rules.yaml", keepRules)
	writeFile(t, dir, "paged.yaml", fmt.Sprintf(`global: {evaluation_interval: 1s}
datasource:
  type: embedded
  embedded:
    scrape_interval: 500ms
    scrape_configs:
      - job_name: vllm
        static_configs: [{targets: [%q]}]
      - job_name: gone
        static_configs: [{targets: [%q]}]
rule_files: ["*.rules.yaml"]
storage: {path: state}
web: {listen_address: "127.0.0.1:0"}
`, sim.addr(), closed))
	s := servePaged(t, dir)
	h := s.Handler()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		page := rec.Body.String()
		i := strings.Index(page, `<section id="targets">`)
		if i >= 0 {
			section := page[i:]
			section = section[:strings.Index(section, "</section>")]
			if strings.Contains(section, sim.srv.URL+"/metrics") && strings.Contains(section, `health-ok">up<`) &&
				strings.Contains(section, "http://"+closed+"/metrics") && strings.Contains(section, `health-err">down<`) &&
				strings.Contains(section, "connection refused") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("targets section incomplete after 20s:\n%s", section)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("no targets section:\n%s", page)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
