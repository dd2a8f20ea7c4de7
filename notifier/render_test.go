package notifier

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/common/model"
)

func TestRenderPayloads(t *testing.T) {
	conf := mustConfig(t, `
route: {receiver: team, group_by: [alertname]}
receivers:
  - name: team
    slack_configs:
      - api_url: https://hooks.slack.example/services/T/B/SECRETHOOK
      - app_token: xoxb-SECRET-TOKEN
        channel: '#llm'
    webhook_configs:
      - url: https://pager.example/hook?key=SECRETKEY
        hmac_secret: SECRETHMAC
`)
	at := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	a := alert.New(model.Alert{
		Labels:      model.LabelSet{"alertname": "VLLMKVCacheSaturated", "instance": "a:8000", "severity": "warning"},
		Annotations: model.LabelSet{"summary": "KV cache 97% full", "runbook_url": "vllm/VLLMKVCacheSaturated.md"},
		StartsAt:    at,
	}, at, false)
	ps, err := RenderPayloads(context.Background(), conf, RenderOptions{ExternalURL: "http://paged.example:9095"}, RenderGroup{
		Receiver: "team", GroupKey: `{}:{alertname="VLLMKVCacheSaturated"}`,
		GroupLabels: model.LabelSet{"alertname": "VLLMKVCacheSaturated"}, Alerts: []*alert.Alert{a}, At: at,
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Integration)
		if !json.Valid(p.Body) {
			t.Errorf("%s: not JSON:\n%s", p.Integration, p.Body)
		}
		if strings.Contains(string(p.Body), "SECRET") {
			t.Errorf("%s: a secret in the payload:\n%s", p.Integration, p.Body)
		}
	}
	if got := strings.Join(names, " "); got != "slack[0] slack[1] webhook[0]" {
		t.Fatalf("integrations %q", got)
	}
	for i, want := range []string{
		`"type":"header"`, `"method":"chat.postMessage"`, `"receiver":"team"`,
	} {
		if !strings.Contains(string(ps[i].Body), want) {
			t.Errorf("%s: no %s in\n%s", ps[i].Integration, want, ps[i].Body)
		}
	}
	for _, want := range []string{`"channel":"#llm"`, `http://paged.example:9095/runbooks/vllm/VLLMKVCacheSaturated.md`} {
		if !strings.Contains(string(ps[1].Body), want) {
			t.Errorf("bot payload: no %s in\n%s", want, ps[1].Body)
		}
	}
	if !strings.Contains(string(ps[2].Body), `"startsAt":"<time>"`) || strings.Contains(string(ps[2].Body), "2026-12-07") {
		t.Errorf("webhook times not normalised:\n%s", ps[2].Body)
	}
	if _, err := RenderPayloads(context.Background(), conf, RenderOptions{}, RenderGroup{Receiver: "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown receiver: %v", err)
	}
}

// With slack_interactivity, a bot's message is rendered with its buttons,
// as first posted; a webhook's Slack message has none.
func TestRenderPayloadsWithButtons(t *testing.T) {
	conf := mustConfig(t, `
route: {receiver: team, group_by: [alertname]}
receivers:
  - name: team
    slack_configs:
      - api_url: https://hooks.slack.example/services/T/B/X
      - app_token: xoxb-1
        channel: '#llm'
slack_interactivity:
  mode: http
  signing_secret: s
`)
	at := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	a := alert.New(model.Alert{Labels: model.LabelSet{"alertname": "VLLMKVCacheSaturated"}, StartsAt: at}, at, false)
	ps, err := RenderPayloads(context.Background(), conf, RenderOptions{}, RenderGroup{
		Receiver: "team", GroupKey: `{}:{alertname="VLLMKVCacheSaturated"}`,
		GroupLabels: model.LabelSet{"alertname": "VLLMKVCacheSaturated"}, Alerts: []*alert.Alert{a}, At: at,
	})
	if err != nil || len(ps) != 2 {
		t.Fatalf("payloads %v, %v", ps, err)
	}
	if strings.Contains(string(ps[0].Body), ActionAck) {
		t.Errorf("the webhook's message has buttons:\n%s", ps[0].Body)
	}
	for _, id := range []string{ActionAck, ActionSilence1h, ActionSilenceUntilResolved} {
		if !strings.Contains(string(ps[1].Body), id) {
			t.Errorf("the bot's message lacks %s:\n%s", id, ps[1].Body)
		}
	}
}
