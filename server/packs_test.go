package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

// everyOverride is a paged.yaml that loads the vllm pack with every
// override key, beside a rule file of the team's own.
const everyOverride = `
datasource:
  prometheus: {url: "http://%s", timeout: 1s}
rule_files: [rules/basic.rules.yaml]
packs:
  - name: vllm
    selector: '{job="vllm-prod"}'
    set: {VLLMKVCacheSaturated: 0.9, VLLMTimeToFirstTokenHigh: 3}
    for: {VLLMKVCacheSaturated: 5m}
    severity: {VLLMQueueBacklog: critical}
    labels: {team: llm-platform}
    disable: [VLLMKVCacheOverprovisioned]
storage: {path: state}
`

type rulesAnswer struct {
	Data struct {
		Groups []struct {
			Name  string `json:"name"`
			File  string `json:"file"`
			Rules []struct {
				Name     string            `json:"name"`
				Query    string            `json:"query"`
				Duration float64           `json:"duration"`
				Labels   map[string]string `json:"labels"`
				Type     string            `json:"type"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"data"`
}

// paged run with the vllm pack and every override key: /api/v1/rules
// shows the rewritten selectors, thresholds, for, severities and labels,
// and no disabled rule, beside the team's own rule file; a reload applies
// a changed override; the built-in runbooks answer at /runbooks/.
func TestRunPacksInRulesAPI(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	dead := testbin.FreeAddr(t)
	writeFile(t, dir, "paged.yaml", fmt.Sprintf(everyOverride, dead))
	base, stop := runPaged(t, dir, io.Discard, io.Discard)
	defer stop()

	_, body := poll(t, base+"/api/v1/rules", func(code int, body string) bool {
		return code == 200 && strings.Contains(body, "pack:vllm")
	})
	var ans rulesAnswer
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatal(err)
	}
	p := parser.NewParser(parser.Options{})
	seen := map[string]bool{}
	var files []string
	for _, g := range ans.Data.Groups {
		files = append(files, g.File)
		for _, r := range g.Rules {
			seen[r.Name] = true
			if g.File != "pack:vllm" {
				continue
			}
			expr, err := p.ParseExpr(r.Query)
			if err != nil {
				t.Fatalf("%s: %v", r.Name, err)
			}
			parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok && !strings.Contains(vs.String(), `job="vllm-prod"`) {
					t.Errorf("%s: selector %s has no job=\"vllm-prod\"", r.Name, vs)
				}
				return nil
			})
			if strings.Contains(r.Query, `job="vllm"`) {
				t.Errorf("%s keeps job=\"vllm\": %s", r.Name, r.Query)
			}
			if r.Labels["team"] != "llm-platform" || r.Labels["server"] != "vllm" {
				t.Errorf("%s: labels %v", r.Name, r.Labels)
			}
			th := rules.SplitThreshold(expr)
			switch r.Name {
			case "VLLMKVCacheSaturated":
				if th.Value != 0.9 || r.Duration != 300 || r.Labels["severity"] != "warning" {
					t.Errorf("%s: threshold %v, for %vs, severity %s; want 0.9, 300s, warning", r.Name, th.Value, r.Duration, r.Labels["severity"])
				}
			case "VLLMTimeToFirstTokenHigh":
				if th.Value != 3 || r.Duration != 600 {
					t.Errorf("%s: threshold %v, for %vs; want 3, 600s", r.Name, th.Value, r.Duration)
				}
			case "VLLMQueueBacklog":
				if th.Value != 10 || r.Labels["severity"] != "critical" {
					t.Errorf("%s: threshold %v, severity %s; want 10, critical", r.Name, th.Value, r.Labels["severity"])
				}
			}
		}
	}
	if seen["VLLMKVCacheOverprovisioned"] {
		t.Error("the disabled VLLMKVCacheOverprovisioned is loaded")
	}
	for _, name := range []string{"AlwaysFiring", "VLLMKVCacheSaturated", "VLLMTargetMissing", "VLLMHighErrorRate"} {
		if !seen[name] {
			t.Errorf("%s missing from /api/v1/rules (files %v)", name, files)
		}
	}

	// A reload applies a changed override.
	writeFile(t, dir, "paged.yaml", strings.Replace(fmt.Sprintf(everyOverride, dead), "VLLMKVCacheSaturated: 0.9", "VLLMKVCacheSaturated: 0.8", 1))
	resp, err := http.Post(base+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reload: %s", resp.Status)
	}
	poll(t, base+"/api/v1/rules", func(code int, body string) bool {
		return code == 200 && strings.Contains(body, `vllm:kv_cache_usage_perc{job=\"vllm-prod\"}) > 0.8`)
	})

	// The built-in runbooks, as markdown and as HTML.
	want, err := os.ReadFile(filepath.Join(testbin.RepoRoot(t), "examples", "runbooks", "vllm", "VLLMKVCacheSaturated.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, body := poll(t, base+"/runbooks/vllm/VLLMKVCacheSaturated.md", func(code int, _ string) bool { return code == 200 }); body != string(want) {
		t.Errorf("built-in runbook: got %d bytes, want the file's %d", len(body), len(want))
	}
	if _, body := poll(t, base+"/runbooks/vllm/VLLMKVCacheSaturated.html", func(code int, _ string) bool { return code == 200 }); !strings.Contains(body, `<h1 id="vllmkvcachesaturated">VLLMKVCacheSaturated</h1>`) {
		t.Errorf(".html runbook is not the rendered page: %.200s", body)
	}
}
