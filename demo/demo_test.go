package demo

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// watchedBuffer is a Writer the test can read while the demo writes, and
// wait on until some text appears.
type watchedBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func newWatchedBuffer() *watchedBuffer { return &watchedBuffer{changed: make(chan struct{})} }

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor waits until re matches the output, or the demo ends, or the
// bail-out passes (a broken demo, not a timing assertion).
func (w *watchedBuffer) waitFor(t *testing.T, re *regexp.Regexp, ended <-chan struct{}, bailOut time.Duration) bool {
	t.Helper()
	deadline := time.NewTimer(bailOut)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		found := re.MatchString(w.b.String())
		ch := w.changed
		w.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-ch:
		case <-ended:
			return re.MatchString(w.String())
		case <-deadline.C:
			return false
		}
	}
}

// TestDemoEndToEnd runs the whole demo as `paged demo` does (the built-in
// configuration, pack and runbooks, the same time scale, real simulator,
// scraper, TSDB, engine, notifier, webhook sink and HTTP server on loopback
// ports) and checks that the KV-cache, TTFT and error-rate alerts of the
// vLLM pack fired and resolved, reached the webhook, and that a printed
// runbook link opens.
func TestDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end demo takes about a minute; run without -short")
	}
	root := testbin.RepoRoot(t)
	out := newWatchedBuffer()
	var logs strings.Builder
	var logsMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logsMu.Lock()
		defer logsMu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelWarn}))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ended := make(chan struct{})
	var runErr error
	go func() {
		defer close(ended)
		runErr = Run(ctx, Options{
			Listen:  "127.0.0.1:0", // not 9095: a developer may be running the demo
			Forever: true,          // keep the server up to open the runbook link
			Stdout:  out,
			Logger:  logger,
			Getenv:  func(string) string { return "" },
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
		if t.Failed() {
			logsMu.Lock()
			t.Logf("demo output:\n%s\ncomponent logs:\n%s", out.String(), logs.String())
			logsMu.Unlock()
		}
	})

	summary := regexp.MustCompile(`(?m)^(OK|FAILED): .*$`)
	if !out.waitFor(t, summary, ended, 3*time.Minute) {
		t.Fatalf("the demo printed no verdict (ended early: %v, err %v)", isClosed(ended), runErr)
	}
	text := out.String()
	if v := summary.FindString(text); !strings.HasPrefix(v, "OK: ") {
		t.Fatalf("verdict: %q, want OK", v)
	}

	for _, name := range []string{AlertKVCache, AlertTTFT, AlertErrorRate} {
		fired := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  FIRING    \S+\s+` + name + `$`)
		resolved := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  RESOLVED  \S+\s+` + name + `  after `)
		if !fired.MatchString(text) {
			t.Errorf("no FIRING line for %s", name)
		}
		if !resolved.MatchString(text) {
			t.Errorf("no RESOLVED line for %s", name)
		}
		// Through the notifier's routing to the webhook, both ways.
		for _, status := range []string{"FIRING", "RESOLVED"} {
			if !strings.Contains(text, "↳ webhook demo-webhook received ["+status+"] "+name) {
				t.Errorf("the webhook sink did not report [%s] %s", status, name)
			}
		}
		row := regexp.MustCompile(`(?m)^  ` + name + `\s+\S+\s+\d\d:\d\d:\d\d\s+\d\d:\d\d:\d\d`)
		if !row.MatchString(text) {
			t.Errorf("summary has no fired-and-resolved row for %s", name)
		}
	}
	// The pack's severities and summaries come through unchanged.
	for _, want := range []string{
		"FIRING    warning   " + AlertKVCache,
		"FIRING    critical  " + AlertErrorRate,
		"vLLM KV cache ",
		"vLLM answers ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(text, "\x1b[") {
		t.Error("colour codes in output written to a non-terminal")
	}

	// The runbook link printed for the KV-cache alert opens, with the
	// runbook's text.
	link := regexp.MustCompile(`runbook: (http://127\.0\.0\.1:\d+/runbooks/vllm/` + AlertKVCache + `\.md)`).FindStringSubmatch(text)
	if link == nil {
		t.Fatalf("no runbook link printed for %s", AlertKVCache)
	}
	want, err := os.ReadFile(filepath.Join(root, "examples", "runbooks", "vllm", AlertKVCache+".md"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(link[1])
	if err != nil {
		t.Fatalf("open runbook link: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", link[1], resp.Status)
	}
	if string(body) != string(want) {
		t.Errorf("GET %s returned %d bytes, not the runbook's text (%d bytes)", link[1], len(body), len(want))
	}
	// The same link is a page in a browser, the source for a tool.
	testbin.CheckRunbookLink(t, link[1], AlertKVCache, string(want))

	cancel()
	<-ended
	if runErr != nil {
		t.Errorf("Run: %v", runErr)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestRunBadConfig: a configuration with problems stops the demo before
// anything runs, with the problems' positions.
func TestRunBadConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "demo.yaml")
	if err := os.WriteFile(cfg, []byte("datasource:\n  type: embeded\nrule_files: [nothing/*.yaml]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := Run(t.Context(), Options{ConfigFile: cfg, Listen: "127.0.0.1:0", Stdout: &out})
	if err == nil {
		t.Fatal("Run accepted a bad configuration")
	}
	for _, want := range []string{"embeded", "nothing/*.yaml"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(out.String(), "phase") {
		t.Errorf("the script started despite the bad configuration:\n%s", out.String())
	}
}

// TestRunMissingConfig names the file it looked for.
func TestRunMissingConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	err := Run(t.Context(), Options{ConfigFile: "examples/nope.yaml", Listen: "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "examples/nope.yaml not found") {
		t.Fatalf("err = %v, want a not-found error naming the file", err)
	}
}

// TestOptionsValidate rejects nonsense before starting anything.
func TestOptionsValidate(t *testing.T) {
	for name, o := range map[string]Options{
		"scale below 1":  {TimeScale: 0.5},
		"huge scale":     {TimeScale: 1e6},
		"empty phase":    {Script: []Phase{{Max: time.Second}}},
		"no max":         {Script: []Phase{{Scenario: "steady"}}},
		"min beyond max": {Script: []Phase{{Scenario: "steady", Min: 2 * time.Second, Max: time.Second}}},
		"empty script":   {Script: []Phase{}},
	} {
		t.Run(name, func(t *testing.T) {
			err := Run(t.Context(), o)
			if err == nil {
				t.Fatal("accepted")
			}
			var ie *IncompleteError
			if errors.As(err, &ie) {
				t.Fatalf("ran the demo: %v", err)
			}
		})
	}
}

// TestListenFallsBack: a taken address gives a free loopback port.
func TestListenFallsBack(t *testing.T) {
	taken, moved, err := listen("127.0.0.1:0")
	if err != nil || moved {
		t.Fatalf("free address: moved %v, err %v", moved, err)
	}
	defer taken.Close()
	ln, moved, err := listen(taken.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !moved || ln.Addr().String() == taken.Addr().String() || !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
		t.Errorf("taken address: moved %v to %s", moved, ln.Addr())
	}
	if _, _, err := listen("256.0.0.1:80"); err == nil {
		t.Error("a bad address is an error, not a fallback")
	}
}
