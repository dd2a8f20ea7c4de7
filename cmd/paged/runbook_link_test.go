package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/packs"
)

// TestSlackRunbookButtonOpensAPage: the Runbook button of a real Slack
// message from a real `paged run` (Prometheus 2.42 evaluating nothing,
// paged evaluating a rule whose runbook_url names a built-in runbook by
// its .md file) opens as a rendered page in a browser and as the source
// for a tool asking for markdown.
func TestSlackRunbookButtonOpensAPage(t *testing.T) {
	bin, err := exec.LookPath("paged")
	if err != nil {
		t.Fatalf("the test binary is not on PATH as paged: %v", err)
	}
	g := &gauge{}
	g.v.Store(12)
	prom := scrapedBy(t, g)
	slack := notifiertest.NewSlack(t, "xoxb-runbook-test")
	config, web := remoteConfig(t, t.TempDir(), prom.URL, `groups:
  - name: kv
    rules:
      - alert: VLLMKVCacheSaturated
        expr: queue_depth > 5
        labels: {severity: warning}
        annotations:
          summary: 'KV cache full on {{ $labels.instance }}'
          runbook_url: 'vllm/VLLMKVCacheSaturated.md'
`, fmt.Sprintf(`  route:
    receiver: oncall
    group_wait: 0s
  receivers:
    - name: oncall
      slack_configs:
        - app_token: xoxb-runbook-test
          app_url: %s
          channel: '#alerts'
`, slack.APIURL()))
	startPaged(t, bin, config, web)
	waitUntil(t, 60*time.Second, "the Slack message", func() bool { return len(topLevel(slack.Calls())) >= 1 })
	msg := topLevel(slack.Calls())[0]

	link := buttonURL(t, msg.Blocks, "runbook")
	if want := "/runbooks/vllm/VLLMKVCacheSaturated.md"; !strings.HasSuffix(link, want) {
		t.Fatalf("Runbook button links %q, want …%s", link, want)
	}
	src, err := fs.ReadFile(packs.Runbooks(), "vllm/VLLMKVCacheSaturated.md")
	if err != nil {
		t.Fatal(err)
	}
	testbin.CheckRunbookLink(t, link, "VLLMKVCacheSaturated", string(src))
}

// buttonURL returns the url of the button with the action_id in a
// message's Block Kit blocks.
func buttonURL(t *testing.T, blocks json.RawMessage, actionID string) string {
	t.Helper()
	var bs []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			URL      string `json:"url"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(blocks, &bs); err != nil {
		t.Fatalf("blocks: %v\n%s", err, blocks)
	}
	for _, b := range bs {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return e.URL
			}
		}
	}
	t.Fatalf("no %q button in %s", actionID, blocks)
	return ""
}
