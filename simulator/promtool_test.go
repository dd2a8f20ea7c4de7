package simulator

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// promtoolLint runs `promtool check metrics` and returns its findings as
// "name message" lines. Exit status 3 means lint findings only; anything
// else (a parse error) fails the test.
func promtoolLint(t *testing.T, bin, text string) []string {
	t.Helper()
	if !strings.HasSuffix(text, "\n") {
		text += "\n" // promtool 2.42 rejects the vLLM captures' missing final newline
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 3) {
		t.Fatalf("promtool check metrics: %v\n%s", err, out.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestPromtoolFindsWhatItFindsInCaptures: promtool (Debian's 2.42) parses
// every server mode's output, and for the families a real capture shares
// with us it reports exactly the same lint findings (missing _total on TGI
// counters, no HELP on some TGI families, ':' in vLLM names, ...): the
// simulator is as "wrong" as the real servers, no more, no less.
func TestPromtoolFindsWhatItFindsInCaptures(t *testing.T) {
	bin := testbin.Require(t, "promtool")
	dir := filepath.Join(testbin.SharedDir(t), "fixtures", "metrics")
	for _, c := range []struct {
		file        string
		server      Server
		maxModelLen int
	}{
		{"tgi-datadog-integrations-core.prom", ServerTGI, 512},
		{"vllm-v0-datadog-integrations-core-2024.prom", ServerVLLMV0, 2048},
	} {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			s, clk := newTestSim(t, Options{Server: c.server, MaxModelLen: c.maxModelLen, Seed: 2})
			clk.advance(time.Hour)
			text := scrapeText(t, s)
			oursMF, theirsMF := parseText(t, text), parseText(t, string(raw))
			shared := func(finding string) bool {
				name, _, _ := strings.Cut(finding, " ")
				return oursMF[name] != nil && theirsMF[name] != nil
			}
			var ours, theirs []string
			for _, f := range promtoolLint(t, bin, text) {
				if shared(f) {
					ours = append(ours, f)
				}
			}
			for _, f := range promtoolLint(t, bin, string(raw)) {
				if shared(f) {
					theirs = append(theirs, f)
				}
			}
			sort.Strings(ours)
			sort.Strings(theirs)
			if strings.Join(ours, "\n") != strings.Join(theirs, "\n") {
				t.Errorf("promtool findings differ on shared families\ncapture:\n%s\nsimulator:\n%s", strings.Join(theirs, "\n"), strings.Join(ours, "\n"))
			}
			if len(theirs) == 0 {
				t.Error("no promtool findings on the capture's shared families; the comparison proves nothing")
			}
			t.Logf("%d identical findings", len(ours))
		})
	}
	// Every other mode parses in promtool too.
	for _, server := range []Server{ServerVLLM, ServerSGLang, ServerTriton, ServerDCGM} {
		s, clk := newTestSim(t, Options{Server: server, Seed: 2})
		clk.advance(10 * time.Minute)
		promtoolLint(t, bin, scrapeText(t, s))
	}
}
