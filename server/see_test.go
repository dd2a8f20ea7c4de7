package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"golang.org/x/net/html"

	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/simulator"
)

// The pages an on-call opens, against real parts: the simulator's vLLM
// metrics, Debian's Prometheus (remote mode) or paged's embedded TSDB,
// paged's notifier delivering to a webhook, and headless Chromium
// rendering the pages. Screenshots are kept in the test's artifact
// directory (go test -artifacts).

const seeRules = `groups:
  - name: see
    interval: 1s
    rules:
      - alert: SeeKVCacheUsed
        expr: max by (instance) (vllm:kv_cache_usage_perc{job="vllm"}) >= 0
        labels: {severity: warning, server: vllm}
        annotations:
          summary: "KV cache at {{ $value }} on {{ $labels.instance }}"
          runbook_url: vllm/VLLMKVCacheSaturated
      - alert: SeeQueueSlow
        expr: sum(vllm:num_requests_running{job="vllm"}) >= 0
        for: 1h
        labels: {severity: critical, server: vllm}
        annotations: {summary: "pending for an hour"}
`

// generatorSink is a webhook receiver that keeps generatorURLs.
type generatorSink struct {
	mu     sync.Mutex
	alerts []struct {
		Status       string            `json:"status"`
		Labels       map[string]string `json:"labels"`
		GeneratorURL string            `json:"generatorURL"`
	}
}

// The alerts page's Source column.
const (
	sourceRule    = "rule"
	sourceBuiltin = "built-in"
	sourceAPI     = "api"
)

func (s *generatorSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var p struct {
		Alerts []struct {
			Status       string            `json:"status"`
			Labels       map[string]string `json:"labels"`
			GeneratorURL string            `json:"generatorURL"`
		} `json:"alerts"`
	}
	if json.Unmarshal(b, &p) == nil {
		s.mu.Lock()
		s.alerts = append(s.alerts, p.Alerts...)
		s.mu.Unlock()
	}
}

func (s *generatorSink) generatorURL(alertname string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.alerts) - 1; i >= 0; i-- {
		if s.alerts[i].Labels["alertname"] == alertname && s.alerts[i].Status == "firing" {
			return s.alerts[i].GeneratorURL
		}
	}
	return ""
}

func startSimulator(t *testing.T) string {
	t.Helper()
	sim, err := simulator.New(simulator.Options{Server: simulator.ServerVLLM})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func seeConfig(datasource, hook string) string {
	return fmt.Sprintf(`
global: {evaluation_interval: 1s}
datasource:
%s
  down_after_failures: 2
rule_files: [see.rules.yaml]
storage: {path: state}
notifier:
  route: {receiver: hook, group_by: [alertname], group_wait: 0s, group_interval: 1s, repeat_interval: 1h}
  inhibit_rules:
    - source_matchers: [alertname="ExternalGPUHot"]
      target_matchers: [alertname="ExternalGPUCold"]
      equal: [server]
  receivers:
    - name: hook
      webhook_configs: [{url: %q}]
`, datasource, hook)
}

func getBody(t *testing.T, u string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// alertRows returns the alerts page's rows by alert name: state and source.
func alertRows(t *testing.T, dom string) map[string][2]string {
	t.Helper()
	doc := testbin.ParseHTML(t, dom)
	out := map[string][2]string{}
	for _, tr := range testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "alert") }) {
		out[testbin.Attr(tr, "data-alertname")] = [2]string{testbin.Attr(tr, "data-state"), testbin.Attr(tr, "data-source")}
	}
	return out
}

// screenshot renders target in headless Chromium into the test's artifact
// directory and fails when the picture is blank (one colour) or missing.
func screenshot(t *testing.T, name, target string) image.Image {
	t.Helper()
	return screenshotSized(t, name, target, "1280,1400")
}

func screenshotSized(t *testing.T, name, target, size string) image.Image {
	t.Helper()
	bin := testbin.Require(t, "chromium")
	file := filepath.Join(t.ArtifactDir(), name+".png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000",
		"--window-size="+size, "--screenshot="+file, target)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium screenshot: %v\n%s", err, stderr.String())
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", file, err)
	}
	colours := map[[3]uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}]++
		}
	}
	if len(colours) < 8 {
		t.Errorf("screenshot %s is blank: %d colours", file, len(colours))
	}
	return img
}

// hasColour reports whether the picture has pixels of the hex colour.
func hasColour(img image.Image, hex string) bool {
	var r0, g0, b0 uint32
	fmt.Sscanf(hex, "#%02x%02x%02x", &r0, &g0, &b0)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			d := func(a, b uint32) int { return int(a>>8) - int(b) }
			if dr, dg, db := d(r, r0), d(g, g0), d(bl, b0); dr*dr+dg*dg+db*db < 400 {
				return true
			}
		}
	}
	return false
}

func postAlert(t *testing.T, base string, body string) {
	t.Helper()
	resp, err := http.Post(base+"/api/v2/alerts", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts: %s", resp.Status)
	}
}

// TestSeeRemoteMode: paged against Debian's Prometheus. A delivered
// alert's generatorURL is Prometheus's own graph page and answers 200
// there (Slack's Source button is the generatorURL: notifier's tests). The
// alerts page lists paged's rule alert, a pending one, alerts posted to
// /api/v2/alerts (one of them inhibited) and, once Prometheus is gone,
// PagedDatasourceDown; filters narrow it; a silence made from a row's
// matchers shows the alert as silenced.
func TestSeeRemoteMode(t *testing.T) {
	target := startSimulator(t)
	prom := testbin.StartPrometheus(t, fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [%q]}]\n", target))
	sink := &generatorSink{}
	hook := httptest.NewServer(sink)
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	writeFile(t, dir, "see.rules.yaml", seeRules)
	writeFile(t, dir, "paged.yaml", seeConfig(fmt.Sprintf("  prometheus: {url: %q}", prom.URL), hook.URL))
	base, _ := runPaged(t, dir, &syncBuffer{}, io.Discard)
	poll(t, base+"/-/ready", func(code int, _ string) bool { return code == http.StatusOK })

	var gen string
	waitFor(t, "SeeKVCacheUsed delivered", 60*time.Second, func() bool {
		gen = sink.generatorURL("SeeKVCacheUsed")
		return gen != ""
	})
	if !strings.HasPrefix(gen, prom.URL+"/graph?g0.expr=") {
		t.Errorf("generatorURL = %q, want Prometheus's graph page at %s", gen, prom.URL)
	}
	if code, _ := getBody(t, gen); code != http.StatusOK {
		t.Errorf("generatorURL %s = %d from Prometheus", gen, code)
	}
	// paged's own /graph charts the same expression from Prometheus.
	// (The first samples may be younger than the chart's step: wait for
	// two.)
	u, _ := url.Parse(gen)
	var page string
	waitFor(t, "/graph in remote mode charts the series", 30*time.Second, func() bool {
		var code int
		code, page = getBody(t, base+"/graph?"+u.RawQuery+"&g0.range_input=2m")
		return code == http.StatusOK && strings.Contains(page, "<polyline") && strings.Contains(page, `instance=`)
	})

	postAlert(t, base, `[{"labels":{"alertname":"ExternalGPUHot","severity":"critical","server":"dcgm","gpu":"3"},"annotations":{"summary":"from Prometheus"},"generatorURL":"http://prom.example/graph?g0.expr=DCGM_FI_DEV_GPU_TEMP"},
		{"labels":{"alertname":"ExternalGPUCold","severity":"info","server":"dcgm","gpu":"4"},"annotations":{"summary":"inhibited by ExternalGPUHot"}}]`)
	var rows map[string][2]string
	waitFor(t, "the alerts page lists every alert", 30*time.Second, func() bool {
		rows = alertRows(t, testbin.ChromiumDOM(t, base+"/"))
		return rows["SeeKVCacheUsed"][0] == "firing" && rows["SeeQueueSlow"][0] == "pending" && rows["ExternalGPUHot"][0] == "firing" && rows["ExternalGPUCold"][0] == "inhibited"
	})
	if rows["SeeKVCacheUsed"][1] != sourceRule || rows["ExternalGPUHot"][1] != sourceAPI {
		t.Errorf("sources = %v", rows)
	}
	screenshot(t, "alerts-remote", base+"/")

	// Filters narrow the list, by state, by matchers, by severity.
	for q, want := range map[string]string{
		"state=pending":                          "SeeQueueSlow",
		"state=inhibited":                        "ExternalGPUCold",
		"filter=" + url.QueryEscape(`{gpu="3"}`): "ExternalGPUHot",
		"severity=warning":                       "SeeKVCacheUsed",
		"server=dcgm&state=firing":               "ExternalGPUHot",
	} {
		got := alertRows(t, testbin.ChromiumDOM(t, base+"/?"+q))
		if len(got) != 1 || got[want] == [2]string{} {
			t.Errorf("/?%s lists %v, want only %s", q, got, want)
		}
	}
	if code, body := getBody(t, base+"/?filter="+url.QueryEscape(`{gpu=~"(}`)); code != http.StatusBadRequest || !strings.Contains(body, "invalid filter") {
		t.Errorf("bad filter = %d, want 400 with the reason", code)
	}
	if code, body := getBody(t, base+"/?state=burning"); code != http.StatusBadRequest || !strings.Contains(body, "invalid state") {
		t.Errorf("bad state = %d, want 400 with the reason", code)
	}

	// A silence made from the row's Silence link hides it as silenced.
	_, page = getBody(t, base+"/?filter="+url.QueryEscape(`{alertname="ExternalGPUHot"}`))
	doc := testbin.ParseHTML(t, page)
	links := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "a" && testbin.HasClass(n, "silence") })
	if len(links) != 1 {
		t.Fatalf("silence links = %d, want the row's", len(links))
	}
	href, _ := url.Parse(strings.TrimPrefix(testbin.Attr(links[0], "href"), "#"))
	ms, err := amlabels.ParseMatchers(href.Query().Get("filter"))
	if err != nil {
		t.Fatalf("row's silence filter %q: %v", href.Query().Get("filter"), err)
	}
	var matchers []map[string]any
	for _, m := range ms {
		matchers = append(matchers, map[string]any{"name": m.Name, "value": m.Value, "isRegex": false, "isEqual": true})
	}
	sil, _ := json.Marshal(map[string]any{"matchers": matchers, "startsAt": time.Now().UTC(), "endsAt": time.Now().Add(time.Hour).UTC(), "createdBy": "oncall", "comment": "from the row"})
	resp, err := http.Post(base+"/api/v2/silences", "application/json", bytes.NewReader(sil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("silence: %s", resp.Status)
	}
	rows = alertRows(t, testbin.ChromiumDOM(t, base+"/"))
	if rows["ExternalGPUHot"][0] != "silenced" || rows["SeeKVCacheUsed"][0] != "firing" {
		t.Errorf("after the silence: %v", rows)
	}
	if got := alertRows(t, testbin.ChromiumDOM(t, base+"/?state=firing")); got["ExternalGPUHot"] != [2]string{} {
		t.Errorf("a silenced alert is listed as firing: %v", got)
	}

	// Prometheus goes away: PagedDatasourceDown fires, listed by the API
	// and the page; the rule's alert stays, stale.
	prom.Stop()
	waitFor(t, "PagedDatasourceDown in /api/v1/alerts", 60*time.Second, func() bool {
		_, body := getBody(t, base+"/api/v1/alerts")
		return strings.Contains(body, `"alertname":"PagedDatasourceDown"`)
	})
	dom := testbin.ChromiumDOM(t, base+"/")
	rows = alertRows(t, dom)
	if rows["PagedDatasourceDown"] != [2]string{"firing", sourceBuiltin} {
		t.Errorf("PagedDatasourceDown row = %v, want firing, built-in", rows["PagedDatasourceDown"])
	}
	if got := alertRows(t, testbin.ChromiumDOM(t, base+"/?state=stale")); got["SeeKVCacheUsed"] == [2]string{} {
		t.Errorf("state=stale lists %v, want the rule's alert kept stale", got)
	}
	screenshot(t, "alerts-datasource-down", base+"/")

	// The status page tells why.
	_, st := getBody(t, base+"/status")
	doc = testbin.ParseHTML(t, st)
	if ds := testbin.Text(testbin.FindByID(doc, "datasource")); !strings.Contains(ds, "down since") || !strings.Contains(ds, "connection refused") || !strings.Contains(ds, prom.URL) {
		t.Errorf("status page's datasource = %q", ds)
	}
	if rf := testbin.Text(testbin.FindByID(doc, "rule-files")); !strings.Contains(rf, "see.rules.yaml") {
		t.Errorf("status page's rule files = %q", rf)
	}
}

// TestSeeEmbeddedMode: paged scrapes the simulator itself. A delivered
// alert's generatorURL is paged's /graph, which answers 200 with a chart
// Chromium draws; a runbook opens as HTML.
func TestSeeEmbeddedMode(t *testing.T) {
	target := startSimulator(t)
	sink := &generatorSink{}
	hook := httptest.NewServer(sink)
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	writeFile(t, dir, "see.rules.yaml", seeRules)
	writeFile(t, dir, "paged.yaml", seeConfig(fmt.Sprintf(`  type: embedded
  embedded:
    scrape_interval: 1s
    scrape_configs:
      - job_name: vllm
        static_configs: [{targets: [%q]}]`, target), hook.URL))
	base, _ := runPaged(t, dir, &syncBuffer{}, io.Discard)
	poll(t, base+"/-/ready", func(code int, _ string) bool { return code == http.StatusOK })

	var gen string
	waitFor(t, "SeeKVCacheUsed delivered", 60*time.Second, func() bool {
		gen = sink.generatorURL("SeeKVCacheUsed")
		return gen != ""
	})
	// The configured external_url defaults to the listen address, not the
	// test's port: compare the path and query.
	u, err := url.Parse(gen)
	if err != nil || u.Path != "/graph" || u.Query().Get("g0.expr") == "" {
		t.Fatalf("generatorURL = %q, want paged's /graph", gen)
	}
	var page string
	waitFor(t, "paged's /graph charts the series", 30*time.Second, func() bool {
		var code int
		code, page = getBody(t, base+"/graph?"+u.RawQuery+"&g0.range_input=2m")
		return code == http.StatusOK && strings.Contains(page, "<polyline") && strings.Contains(page, "&gt;= 0")
	})
	if code, _ := getBody(t, base+u.RequestURI()); code != http.StatusOK {
		t.Errorf("generatorURL %s = %d from paged", gen, code)
	}
	img := screenshot(t, "graph-embedded", base+"/graph?"+u.RawQuery+"&g0.range_input=2m")
	if !strings.Contains(page, `stroke="`+backtest.ThresholdColour+`" stroke-width="1.5" stroke-dasharray`) {
		t.Errorf("the graph has no threshold line")
	}
	if !hasColour(img, backtest.FiringColour) { // the state strip
		t.Errorf("the graph's screenshot shows no firing period")
	}
	for q, want := range map[string]int{
		"g0.expr=" + url.QueryEscape("sum(("):                                  http.StatusBadRequest,
		"g0.expr=up&g0.range_input=forever":                                    http.StatusBadRequest,
		"g0.expr=up&from=now&to=-1h":                                           http.StatusBadRequest,
		"g0.expr=up&g0.range_input=400d":                                       http.StatusBadRequest,
		"g0.expr=" + url.QueryEscape(`label_replace(up, "a", "$1", "b", "(")`): http.StatusUnprocessableEntity,
		"": http.StatusOK,
	} {
		if code, body := getBody(t, base+"/graph?"+q); code != want {
			t.Errorf("/graph?%s = %d, want %d:\n%.500s", q, code, want, body)
		}
	}

	// The runbook opens as a page, with the alert's instance on it.
	_, rb := getBody(t, base+"/runbooks/vllm/VLLMKVCacheSaturated")
	if !strings.Contains(rb, `<h1 id="vllmkvcachesaturated">`) {
		t.Errorf("runbook is not HTML:\n%.500s", rb)
	}
	screenshot(t, "runbook", base+"/runbooks/vllm/VLLMKVCacheSaturated")
	screenshot(t, "alerts-embedded", base+"/")
	// On a phone the rows stack (no table header), still readable.
	screenshotSized(t, "alerts-phone", base+"/", "390,844")
}
