package backtest_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/internal/testbin"
)

// kvReport backtests the fast rules and the pack's KV-cache rule over the
// 50-minute recording, with charts.
func kvReport(t *testing.T) *backtest.Report {
	t.Helper()
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	db := record(t, t.TempDir(), start, 50*time.Minute, 5*time.Second, kvTimeline)
	t.Cleanup(func() { db.Close() })
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm", "vllm.rules.yaml")
	rep, err := backtest.Run(context.Background(), backtest.Options{
		Source:             backtest.NewQueryable(newPromQL(), db),
		RuleFiles:          []string{writeFile(t, t.TempDir(), "fast.rules.yaml", fastRules), pack},
		From:               start,
		To:                 start.Add(50 * time.Minute),
		EvaluationInterval: 30 * time.Second,
		Rules:              regexp.MustCompile(`^(KVCacheHigh|VLLMKVCacheSaturated|VLLMThroughputCollapse)$`),
		Charts:             true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestHTMLReportIsSelfContained parses the report and requires that no
// element, attribute or style refers to a network resource.
func TestHTMLReportIsSelfContained(t *testing.T) {
	rep := kvReport(t)
	var buf bytes.Buffer
	if err := backtest.WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("report is not HTML: %v", err)
	}
	var svgs, polylines, firingRects int
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "img", "iframe", "object", "embed":
				t.Errorf("report has a <%s> element", n.Data)
			case "svg":
				svgs++
			case "polyline":
				polylines++
			case "rect":
				for _, a := range n.Attr {
					if a.Key == "fill" && a.Val == backtest.FiringColour {
						firingRects++
					}
				}
			}
			for _, a := range n.Attr {
				v := strings.ToLower(a.Val)
				if strings.Contains(v, "http://") || strings.Contains(v, "https://") || strings.Contains(v, "//") && (a.Key == "src" || a.Key == "href") {
					t.Errorf("<%s %s=%q> refers to a network resource", n.Data, a.Key, a.Val)
				}
			}
		}
		if n.Type == html.TextNode && n.Parent != nil && n.Parent.Data == "style" {
			if strings.Contains(n.Data, "url(") || strings.Contains(n.Data, "@import") {
				t.Errorf("style loads a resource: %q", n.Data)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if s := buf.String(); strings.Contains(s, "http://") || strings.Contains(s, "https://") {
		t.Errorf("report mentions a URL")
	}
	if svgs != len(rep.Rules) || svgs != 3 {
		t.Errorf("%d charts for %d rules, want 3", svgs, len(rep.Rules))
	}
	if polylines < 3 {
		t.Errorf("%d series lines, want at least one per chart", polylines)
	}
	// KVCacheHigh fired twice, VLLMKVCacheSaturated once: in the plot and
	// in the state strip.
	if firingRects != 2*3 {
		t.Errorf("%d firing rectangles, want 6", firingRects)
	}
	for _, want := range []string{"KVCacheHigh", "VLLMKVCacheSaturated", "&gt; 0.95", "max by (model_name, instance) (vllm:kv_cache_usage_perc)", "Never fired."} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestHTMLReportRendersInChromium opens the report in headless Chromium
// and checks the screenshot: the charts are drawn (many non-white pixels,
// many colours), and the firing colour, the threshold colour and a series
// colour are on screen.
func TestHTMLReportRendersInChromium(t *testing.T) {
	bin := testbin.Require(t, "chromium")
	rep := kvReport(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := backtest.WriteHTML(f, rep); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1200,900", "file://"+page)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	pf, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 800 {
		t.Fatalf("screenshot is %v", b)
	}
	near := func(r, g, bl uint32, hex string) bool {
		var want [3]uint32
		for i := range 3 {
			var v uint32
			for _, c := range hex[1+2*i : 3+2*i] {
				v = v*16 + uint32(strings.IndexRune("0123456789abcdef", c))
			}
			want[i] = v
		}
		d := func(a, b uint32) uint32 {
			if a > b {
				return a - b
			}
			return b - a
		}
		return d(r, want[0]) <= 6 && d(g, want[1]) <= 6 && d(bl, want[2]) <= 6
	}
	var nonWhite, firing, threshold, series int
	colours := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			colours[[3]uint32{r, g, bl}] = true
			if r < 240 || g < 240 || bl < 240 {
				nonWhite++
			}
			switch {
			case near(r, g, bl, backtest.FiringColour):
				firing++
			case near(r, g, bl, backtest.ThresholdColour):
				threshold++
			case near(r, g, bl, "#1c7ed6"):
				series++
			}
		}
	}
	t.Logf("screenshot %v: %d non-white pixels, %d colours, firing %d, threshold %d, series %d", b, nonWhite, len(colours), firing, threshold, series)
	if nonWhite < 20000 {
		t.Errorf("only %d non-white pixels: the page looks blank", nonWhite)
	}
	if len(colours) < 30 {
		t.Errorf("only %d distinct colours: no chart drawn", len(colours))
	}
	if firing < 100 {
		t.Errorf("firing colour %s on %d pixels, want a visible firing period", backtest.FiringColour, firing)
	}
	if threshold < 50 {
		t.Errorf("threshold colour on %d pixels, want a threshold line", threshold)
	}
	if series < 50 {
		t.Errorf("series colour on %d pixels, want a series line", series)
	}
}
