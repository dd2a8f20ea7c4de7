package notifier

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// A route and inhibit rules pasted from an alertmanager.yml, inside a
// paged.yaml: they parse with Alertmanager's own defaults and checks.
const goodConfig = `
notifier:
  route:
    receiver: oncall
    group_by: [alertname, cluster]
    group_wait: 30s
    group_interval: 5m
    repeat_interval: 4h
    routes:
      - matchers: [severity="critical"]
        receiver: pager
        continue: true
      - match_re: {server: "vllm|tgi"}
        receiver: oncall
        mute_time_intervals: [nights]
  inhibit_rules:
    - source_matchers: [severity="critical"]
      target_matchers: [severity="warning"]
      equal: [instance]
  time_intervals:
    - name: nights
      time_intervals:
        - times: [{start_time: "00:00", end_time: "06:00"}]
  receivers:
    - name: oncall
      slack_configs:
        - app_token_file: /run/secrets/slack
          channel: "#llm-oncall"
          thread_replies: false
    - name: pager
      webhook_configs:
        - url: https://pager.example/hook
          hmac_secret_file: /run/secrets/hmac
          max_alerts: 20
          timeout: 5s
  alertmanagers:
    - url: http://alertmanager.example:9093
`

type wrapper struct {
	Notifier Config `yaml:"notifier"`
}

func TestConfigGood(t *testing.T) {
	var w wrapper
	if err := yaml.Unmarshal([]byte(goodConfig), &w); err != nil {
		t.Fatal(err)
	}
	c := &w.Notifier
	am := c.Alertmanager()
	if am.Route.Receiver != "oncall" || len(am.Route.Routes) != 2 || time.Duration(*am.Route.GroupWait) != 30*time.Second {
		t.Errorf("route = %+v", am.Route)
	}
	if len(am.InhibitRules) != 1 || am.InhibitRules[0].Equal[0] != "instance" {
		t.Errorf("inhibit = %+v", am.InhibitRules)
	}
	oncall, _ := c.Receiver("oncall")
	s := oncall.SlackConfigs[0]
	if !s.BotMode() || s.Channel != "#llm-oncall" || boolOr(s.ThreadReplies, true) || !boolOr(s.UpdateMessage, true) || !boolOr(s.SendResolved, true) {
		t.Errorf("slack = %+v", s)
	}
	pager, _ := c.Receiver("pager")
	if w := pager.WebhookConfigs[0]; w.MaxAlerts != 20 || time.Duration(w.Timeout) != 5*time.Second || w.HMACSecretFile != "/run/secrets/hmac" {
		t.Errorf("webhook = %+v", w)
	}
	if len(c.Alertmanagers) != 1 {
		t.Errorf("alertmanagers = %+v", c.Alertmanagers)
	}
	if _, err := New(Options{Config: c}); err != nil {
		t.Errorf("New: %v", err)
	}
}

func TestConfigErrorsHavePositions(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown top key", "notifier:\n  rout: {}\n", "2:3: notifier: unknown key \"rout\""},
		{"unknown slack key", "notifier:\n  receivers:\n    - name: a\n      slack_configs:\n        - app_token: x\n          chanel: '#a'\n", "6:11: unknown key \"chanel\""},
		{"missing channel", "notifier:\n  receivers:\n    - name: a\n      slack_configs:\n        - app_token: x\n", "5:11: slack_configs: channel is required"},
		{"unknown receiver type", "notifier:\n  receivers:\n    - name: a\n      gotify_configs: []\n", "4:7: receiver: gotify_configs is not a receiver type of Alertmanager"},
		{"email without smarthost", "notifier:\n  receivers:\n    - name: a\n      email_configs:\n        - to: a@example.org\n", "5:11: email_configs: no global SMTP smarthost set"},
		{"undefined receiver", "notifier:\n  route:\n    receiver: nope\n  receivers:\n    - name: a\n", "3:15: undefined receiver \"nope\" used in route"},
		{"bad duration in route", "notifier:\n  route:\n    receiver: a\n    group_wait: soon\n  receivers:\n    - name: a\n", "4:17:"},
		{"unknown route key", "notifier:\n  route:\n    receiver: a\n    group_bye: [x]\n  receivers:\n    - name: a\n", "4:5: field group_bye not found"},
		{"bad inhibit matcher", "notifier:\n  route: {receiver: a}\n  inhibit_rules:\n    - source_matchers: ['sev=~(']\n  receivers:\n    - name: a\n", "error parsing regexp"},
		{"webhook timeout type", "notifier:\n  receivers:\n    - name: a\n      webhook_configs:\n        - url: http://x/\n          timeout: [1]\n", "6:20:"},
		{"duplicate receiver", "notifier:\n  receivers:\n    - name: a\n    - name: a\n", "4:7: receiver: duplicate name"},
		{"route needed", "notifier:\n  receivers:\n    - name: a\n    - name: b\n", "route is required"},
		{"relative webhook url", "notifier:\n  receivers:\n    - name: a\n      webhook_configs:\n        - url: /x\n", "5:11: webhook_configs: url: scheme must be http or https"},
		{"negative webhook concurrency", "notifier:\n  receivers:\n    - name: a\n      webhook_configs:\n        - url: http://x/\n          max_concurrent_requests: -1\n", "5:11: webhook_configs: max_concurrent_requests must not be negative"},
		{"webhook concurrency type", "notifier:\n  receivers:\n    - name: a\n      webhook_configs:\n        - url: http://x/\n          max_concurrent_requests: many\n", "6:36: cannot unmarshal !!str `many` into int"},
		{"type error through an alias", "x: &t [1]\nnotifier:\n  receivers:\n    - name: a\n      webhook_configs:\n        - url: http://x/\n          timeout: *t\n", "cannot unmarshal !!seq into string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w wrapper
			err := yaml.Unmarshal([]byte(tc.in), &w)
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.in)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestConfigCollectsAllErrors(t *testing.T) {
	in := "notifier:\n  foo: 1\n  receivers:\n    - name: a\n      slack_configs:\n        - channel: x\n      webhook_configs:\n        - max_alerts: 1\n"
	var w wrapper
	err := yaml.Unmarshal([]byte(in), &w)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"2:3:", "6:11:", "8:11:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %s", err, want)
		}
	}
}

func TestConfigEmptyAndSingleReceiver(t *testing.T) {
	c, err := ParseConfig(nil)
	if err != nil || c.Alertmanager().Route.Receiver != defaultBlackhole {
		t.Fatalf("empty config: %v %+v", err, c)
	}
	c, err = ParseConfig([]byte("receivers: [{name: only}]"))
	if err != nil || c.Alertmanager().Route.Receiver != "only" {
		t.Fatalf("single receiver: %v", err)
	}
}

func FuzzConfig(f *testing.F) {
	f.Add(goodConfig)
	f.Add("notifier:\n  route: {receiver: a, routes: [{matchers: ['a=~\"(\"']}]}\n  receivers: [{name: a}]\n")
	f.Add("notifier: [1, 2]\n")
	f.Add("notifier:\n  receivers: [{name: a, slack_configs: [{api_url: 'http://x'}], webhook_configs: [{url: 'http://y', headers: {a: b}}]}]\n")
	f.Fuzz(func(t *testing.T, in string) {
		var w wrapper
		if err := yaml.Unmarshal([]byte(in), &w); err == nil && strings.Contains(in, "notifier") && w.Notifier.Alertmanager() == nil {
			var probe map[string]any
			if yaml.Unmarshal([]byte(in), &probe) == nil && probe["notifier"] != nil {
				t.Fatal("accepted a notifier block without an Alertmanager view")
			}
		}
		c, err := ParseConfig([]byte(in))
		if err != nil {
			return
		}
		if c.Alertmanager() == nil || c.Alertmanager().Route == nil {
			t.Fatal("accepted config without a route")
		}
	})
}
