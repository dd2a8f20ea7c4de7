package server

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/durable"
)

// A corrupt notifier state file does not stop paged: the server starts,
// the file is moved aside, and /metrics counts it by file through the
// one reporter the server hands to its parts.
func TestCorruptNotifierStateCounted(t *testing.T) {
	config := configWith("rules/basic.rules.yaml") + `
storage: {path: state}
notifier: {route: {receiver: x}, receivers: [{name: x}]}
`
	ts := newTestServer(t, config, map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"state/nflog":            "\x7fnot a notification log",
	}, nil)
	moved, _ := filepath.Glob(filepath.Join(ts.Dir, "state", "nflog"+durable.CorruptSuffix+"*"))
	if len(moved) != 1 {
		t.Fatalf("moved aside: %v, want state/nflog%s<unix>", moved, durable.CorruptSuffix)
	}
	code, body := ts.Do(t, http.MethodGet, "/metrics", nil)
	if code != 200 || !strings.Contains(body, `paged_state_corruptions_total{file="nflog"} 1`) {
		t.Errorf("/metrics = %d, want paged_state_corruptions_total{file=\"nflog\"} 1:\n%s", code, grepLines(body, "paged_state"))
	}
	if !strings.Contains(ts.Logs.String(), filepath.Join(ts.Dir, "state", "nflog")) {
		t.Errorf("logs do not name the damaged file:\n%s", ts.Logs.String())
	}
}
