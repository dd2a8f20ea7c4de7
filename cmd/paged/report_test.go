package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/report"
)

// twoGauges is an exporter of flappy and steady, set by the test.
type twoGauges struct{ flappy, steady atomic.Int64 }

func (g *twoGauges) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE flappy gauge\nflappy %d\n# TYPE steady gauge\nsteady %d\n", g.flappy.Load(), g.steady.Load())
}

// webhookStatuses counts the webhook notifications a sink received, by
// alert name (the group's) and status.
func webhookStatuses(t *testing.T, s *notifiertest.Sink) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range s.Requests() {
		var msg struct {
			Status      string            `json:"status"`
			GroupLabels map[string]string `json:"groupLabels"`
		}
		if err := json.Unmarshal(r.Body, &msg); err != nil {
			t.Fatalf("webhook body %s: %v", r.Body, err)
		}
		out[msg.GroupLabels["alertname"]+":"+msg.Status]++
	}
	return out
}

// mustRun runs a paged command in-process and returns its stdout.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runMain(args...)
	if code != 0 {
		t.Fatalf("paged %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// TestReportNamesTheFlappingAlert runs a real `paged run` in embedded
// mode: Flappy fires and resolves four times, each time paged to a
// webhook, Steady fires once and is paged to it and to a receiver whose
// webhook refuses it. paged report --from -1h (from the running paged,
// then from its storage directory once it stopped) names Flappy as the
// noisiest and flapping alert with exactly the pages the webhook got,
// and the failed receiver's deliveries.
func TestReportNamesTheFlappingAlert(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	g := &twoGauges{}
	sink, broken := notifiertest.NewSink(t), notifiertest.NewSink(t)
	refusals := make([]int, 1000)
	for i := range refusals {
		refusals[i] = http.StatusBadRequest
	}
	broken.Script(refusals...)
	dir := t.TempDir()
	config, web := embeddedConfig(t, dir, g, `groups:
  - name: g
    rules:
      - alert: Flappy
        expr: flappy > 5
      - alert: Steady
        expr: steady > 5
`, fmt.Sprintf(`  route:
    receiver: oncall
    group_by: [alertname]
    group_wait: 0s
    group_interval: 1s
    repeat_interval: 1h
    routes:
      - matchers: ['alertname="Steady"']
        receiver: broken
        continue: true
      - receiver: oncall
  receivers:
    - name: oncall
      webhook_configs: [{url: %q}]
    - name: broken
      webhook_configs: [{url: %q}]
`, sink.URL(), broken.URL()))
	f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Every day and hour is working time: no page is outside it.
	fmt.Fprint(f, "report:\n  time_zone: UTC\n  working_hours: 00:00-24:00\n  working_days: [mon, tue, wed, thu, fri, sat, sun]\n  flapping_threshold: 3\n")
	f.Close()
	p := startPaged(t, bin, config, web)

	g.steady.Store(10)
	const cycles = 4
	for i := 1; i <= cycles; i++ {
		g.flappy.Store(10)
		waitUntil(t, 60*time.Second, fmt.Sprintf("Flappy paged the %d. time", i), func() bool { return webhookStatuses(t, sink)["Flappy:firing"] >= i })
		g.flappy.Store(0)
		waitUntil(t, 60*time.Second, fmt.Sprintf("Flappy resolved the %d. time", i), func() bool { return webhookStatuses(t, sink)["Flappy:resolved"] >= i })
	}
	waitUntil(t, 30*time.Second, "Steady paged and refused", func() bool {
		return webhookStatuses(t, sink)["Steady:firing"] >= 1 && len(broken.Requests()) >= 1
	})
	got := webhookStatuses(t, sink)
	flappyPages, steadyPages := got["Flappy:firing"], got["Steady:firing"]
	// The history has every page once the notifier recorded it.
	waitUntil(t, 30*time.Second, "the pages in the history", func() bool {
		evs, _ := p.history(t, map[string][]string{"type": {"notification"}})
		n := 0
		for _, e := range evs {
			if e.Receiver == "oncall" && firingNotification(t, e) {
				n++
			}
		}
		return n >= flappyPages+steadyPages
	})

	var r report.Report
	if err := json.Unmarshal([]byte(mustRun(t, "report", "--from", "-1h", "--url", p.web, "--config", config, "--format", "json")), &r); err != nil {
		t.Fatal(err)
	}
	check := func(how string, r report.Report) {
		t.Helper()
		if len(r.Noisiest) == 0 || r.Noisiest[0].Alertname != "Flappy" || r.Noisiest[0].Pages != flappyPages || flappyPages != cycles {
			t.Errorf("%s: noisiest %+v, want Flappy with %d pages (the webhook got %d)", how, r.Noisiest, cycles, flappyPages)
		}
		if len(r.Flapping) != 1 || r.Flapping[0].Alertname != "Flappy" || r.Flapping[0].Fired != cycles || r.Flapping[0].Resolved != cycles {
			t.Errorf("%s: flapping %+v, want Flappy fired and resolved %d times", how, r.Flapping, cycles)
		}
		var oncall, brokenStats report.ReceiverStats
		for _, rs := range r.Receivers {
			switch rs.Receiver {
			case "oncall":
				oncall = rs
			case "broken":
				brokenStats = rs
			}
		}
		if oncall.Pages != flappyPages+steadyPages || oncall.Failures != 0 {
			t.Errorf("%s: oncall %+v, want %d pages", how, oncall, flappyPages+steadyPages)
		}
		if brokenStats.Pages != 0 || brokenStats.Failures == 0 || len(r.Failures) != 1 || !strings.Contains(r.Failures[0].LastError, "400") {
			t.Errorf("%s: broken %+v, failures %+v: want its refused deliveries with the status", how, brokenStats, r.Failures)
		}
		if r.Pages != flappyPages+steadyPages || r.PagesOutsideHours != 0 || r.Acknowledgement.Never != r.Pages {
			t.Errorf("%s: %d pages (%d outside working hours, %d never acknowledged), want %d, 0, all", how, r.Pages, r.PagesOutsideHours, r.Acknowledgement.Never, flappyPages+steadyPages)
		}
		if strings.Join(r.Acknowledgement.NeverAlerts, ",") != "Flappy,Steady" {
			t.Errorf("%s: never acknowledged %v", how, r.Acknowledgement.NeverAlerts)
		}
	}
	check("--url", r)

	// Stopped, read from its storage directory: the same numbers, as text
	// and as one HTML page.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	data := filepath.Join(dir, "data")
	var again report.Report
	if err := json.Unmarshal([]byte(mustRun(t, "report", "--from", "-1h", "--storage.path", data, "--config", config, "--format", "json")), &again); err != nil {
		t.Fatal(err)
	}
	check("--storage.path", again)
	text := mustRun(t, "report", "--from", "-1h", "--storage.path", data, "--config", config)
	if !strings.Contains(text, fmt.Sprintf("  Flappy  %d", cycles)) || !strings.Contains(text, "Flapping (fired and resolved more than 3 times)") {
		t.Errorf("text report:\n%s", text)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "report", "--from", "-1h", "--storage.path", data, "--format", "html", "-o", page)
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), fmt.Sprintf(`<b id="pages">%d</b>`, flappyPages+steadyPages)) {
		t.Errorf("HTML report (%v):\n%.500s", err, b)
	}
}
