// Command slackpreview makes the pictures of a Slack alert in docs/img
// (firing, resolved, acknowledged) without reaching Slack: it runs
// paged's notifier against the in-process Slack stand-in, presses the
// message's Acknowledge button with a signed request as Slack would,
// renders the Block Kit messages the stand-in holds as HTML pages in
// Slack's style, and screenshots them with headless Chromium.
//
//	go run ./docs/slackpreview                 # writes docs/img/slack-alert-*.png
//	go run ./docs/slackpreview -html-only      # HTML pages only, no Chromium
//
// docs/slack-preview.md explains the pictures and their limits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "slackpreview:", err)
		os.Exit(1)
	}
}

type options struct {
	Root     string // repository root
	Out      string // PNG directory
	HTMLDir  string // where the HTML pages go; default a temporary directory
	Testdata string // if set, the captured blocks are written there too
	Chromium string
	HTMLOnly bool
	Severity string
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("slackpreview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.Root, "root", "", "repository root (default: found from the working directory)")
	fs.StringVar(&o.Out, "out", "docs/img", "directory for the PNGs, relative to the root")
	fs.StringVar(&o.HTMLDir, "html", "", "directory for the HTML pages (default: a temporary directory)")
	fs.StringVar(&o.Testdata, "testdata", "", "also write the captured messages as JSON to this directory")
	fs.StringVar(&o.Chromium, "chromium", "", "Chromium binary (default: chromium or chromium-browser on PATH)")
	fs.BoolVar(&o.HTMLOnly, "html-only", false, "write the HTML pages and stop")
	fs.StringVar(&o.Severity, "severity", "", "override the severity label of the alert shown (default: the pack's own)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Root == "" {
		root, err := findRoot()
		if err != nil {
			return err
		}
		o.Root = root
	}
	tmp, err := os.MkdirTemp("", "slackpreview-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if o.HTMLDir == "" {
		o.HTMLDir = tmp
	}

	sc := DefaultScenario(o.Root)
	if o.Severity != "" {
		sc.Labels = map[string]string{"severity": o.Severity}
	}
	c, err := capture(ctx, sc, filepath.Join(tmp, "tsdb"))
	if err != nil {
		return fmt.Errorf("capturing the message: %w", err)
	}
	acked, err := captureAcknowledged(ctx, sc, filepath.Join(tmp, "tsdb-ack"))
	if err != nil {
		return fmt.Errorf("capturing the acknowledged message: %w", err)
	}
	if o.Testdata != "" {
		for name, v := range map[string]any{
			"firing.json":       c.Firing,
			"resolved.json":     []Message{c.Resolved, c.Reply},
			"acknowledged.json": acked,
		} {
			if err := writeJSON(filepath.Join(o.Testdata, name), v); err != nil {
				return err
			}
		}
	}

	pages := []struct {
		name string
		page Page
	}{
		{"slack-alert-firing", Page{Channel: sc.Channel, Messages: []Message{c.Firing}}},
		{"slack-alert-resolved", Page{Channel: sc.Channel, Thread: true, Messages: []Message{c.Resolved, c.Reply}}},
		{"slack-alert-acknowledged", Page{Channel: sc.Channel, Messages: []Message{acked}, Users: captureUsers}},
	}
	if err := os.MkdirAll(o.HTMLDir, 0o755); err != nil {
		return err
	}
	var htmls []string
	for _, p := range pages {
		path := filepath.Join(o.HTMLDir, p.name+".html")
		if err := writePage(path, p.page); err != nil {
			return err
		}
		htmls = append(htmls, path)
		fmt.Fprintln(stderr, "wrote", path)
	}
	if o.HTMLOnly {
		return nil
	}
	bin := o.Chromium
	if bin == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		return errors.New("no Chromium found: apt-get install -y chromium, or pass -chromium, or use -html-only")
	}
	out := filepath.Join(o.Root, o.Out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for i, p := range pages {
		png := filepath.Join(out, p.name+".png")
		if err := screenshot(ctx, bin, htmls[i], png, tmp); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "wrote", png)
	}
	return nil
}

// DefaultScenario is the README's alert: the vLLM pack's KV-cache
// saturation alert for Llama 3.1 8B on one instance, at 97.3%.
func DefaultScenario(root string) Scenario {
	return Scenario{
		PackFile: filepath.Join(root, "examples/packs/vllm/vllm.rules.yaml"),
		Alert:    "VLLMKVCacheSaturated",
		Series: map[string]string{
			"__name__":   "vllm:kv_cache_usage_perc",
			"model_name": "meta-llama/Llama-3.1-8B-Instruct",
			"instance":   "10.0.3.7:8000",
			"job":        "vllm",
			"engine":     "0",
		},
		FiringValue: 0.973,
		ClearValue:  0.62,
		ExternalURL: "http://paged.example:9095",
		Channel:     "llm-alerts",
	}
}

func writePage(path string, p Page) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Render(f, p); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; pass -root")
		}
		dir = parent
	}
}
