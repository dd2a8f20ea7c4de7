package main

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/notifier/slackchart"
)

const chartRules = `groups:
  - name: queue
    rules:
      - alert: QueueBacklog
        expr: queue_depth > 5
        labels: {severity: warning}
        annotations: {summary: 'queue {{ $value }} on {{ $labels.instance }}'}
`

func chartNotifier(slack *notifiertest.Slack) string {
	return fmt.Sprintf(`  route:
    receiver: oncall
    group_wait: 0s
    group_interval: 1s
  receivers:
    - name: oncall
      slack_configs:
        - app_token: xoxb-chart-test
          app_url: %s
          channel: '#alerts'
`, slack.APIURL())
}

// The chart of the rule follows the first message of a group in its
// thread, with data from the datasource's query_range (remote mode) or
// the embedded TSDB (embedded mode).
func TestSlackChartInTheThread(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	for _, mode := range []string{"remote", "embedded"} {
		t.Run(mode, func(t *testing.T) {
			g := &gauge{}
			g.v.Store(12)
			slack := notifiertest.NewSlack(t, "xoxb-chart-test")
			dir := t.TempDir()
			var config, web string
			if mode == "remote" {
				prom := scrapedBy(t, g)
				config, web = remoteConfig(t, dir, prom.URL, chartRules, chartNotifier(slack))
			} else {
				config, web = embeddedConfig(t, dir, g, chartRules, chartNotifier(slack))
			}
			p := startPaged(t, bin, config, web)
			waitUntil(t, 90*time.Second, "the Slack message", func() bool { return len(topLevel(slack.Calls())) >= 1 })
			msg := topLevel(slack.Calls())[0]
			var chart notifiertest.SlackFile
			waitUntil(t, 60*time.Second, "the chart in the thread", func() bool {
				for _, f := range slack.Files() {
					if f.Completed {
						chart = f
						return true
					}
				}
				return false
			})
			if chart.ThreadTS != msg.TS {
				t.Errorf("chart in thread %q, want the message's %q", chart.ThreadTS, msg.TS)
			}
			img, err := png.Decode(bytes.NewReader(chart.Bytes))
			if err != nil || img.Bounds().Dx() != slackchart.Width {
				t.Fatalf("the upload is not a chart: %v\n%s", err, p.out)
			}
			if strings.Contains(p.out.String(), "slack chart not") {
				t.Errorf("chart warnings:\n%s", p.out)
			}
			// A picture of what a user sees, for a reviewer to open.
			if out := os.Getenv("PAGED_CHART_OUT"); out != "" {
				_ = os.WriteFile(filepath.Join(out, mode+".png"), chart.Bytes, 0o644)
			}
		})
	}
}

// embeddedConfig writes a paged.yaml that scrapes g itself every second.
func embeddedConfig(t *testing.T, dir string, g http.Handler, rules, notifier string) (config, web string) {
	t.Helper()
	exporter := httptest.NewServer(g)
	t.Cleanup(exporter.Close)
	rulesFile := filepath.Join(dir, "test.rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	web = testbin.FreeAddr(t)
	config = filepath.Join(dir, "paged.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`global:
  evaluation_interval: 1s
datasource:
  type: embedded
  embedded:
    scrape_interval: 1s
    scrape_configs:
      - job_name: queue
        static_configs: [{targets: [%q]}]
rule_files: [%q]
storage:
  path: %q
web:
  listen_address: %s
notifier:
%s`, strings.TrimPrefix(exporter.URL, "http://"), rulesFile, filepath.Join(dir, "data"), web, notifier)), 0o644); err != nil {
		t.Fatal(err)
	}
	return config, web
}
