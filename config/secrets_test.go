package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Invalid values that carry secrets are reported without the value.
func TestConfigErrorsDoNotEchoSecrets(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	env := map[string]string{
		"BAD_URL":   "http://user:badpw-8h7g@[::1",
		"BAD_SLACK": "hooks.slack.com/services/T1/B1/slackbad-6f5e",
		"BAD_HOOK":  "ftp://hooks.example.com/hookbad-4c3b",
		"BEARER":    "bearer-list-2a1z",
	}
	writeFile(t, dir, "paged.yaml", `
datasource:
  prometheus:
    url: ${BAD_URL}
    http_config:
      authorization: {credentials: ["${BEARER}"]}
rule_files: [rules/basic.rules.yaml]
notifier:
  route: {receiver: oncall}
  receivers:
    - name: oncall
      slack_configs:
        - api_url: ${BAD_SLACK}
      webhook_configs:
        - url: ${BAD_HOOK}
`)
	_, err := Load(filepath.Join(dir, "paged.yaml"), func(k string) string { return env[k] })
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *Error", err)
	}
	msg := err.Error()
	for _, want := range []string{"datasource.prometheus.url: invalid URL", "api_url", "url: scheme must be http or https", "cannot unmarshal"} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors lack %q:\n%s", want, msg)
		}
	}
	for _, secret := range []string{"badpw-8h7g", "slackbad-6f5e", "hookbad-4c3b", "bearer-list-2a1z"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error leaks %q:\n%s", secret, msg)
		}
	}
}

// The interactivity block's tokens and secrets, from ${ENV} or inline, never
// reach /api/v1/status/config, nor the errors of a block that is wrong.
func TestInteractivitySecretsRedacted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	env := map[string]string{"XAPP": "xapp-1-A0-77-topsecret-9q8w", "SIGNING": "signing-5t6y"}
	conf := `
datasource:
  prometheus:
    url: http://127.0.0.1:9090
rule_files: [rules/basic.rules.yaml]
notifier:
  route: {receiver: oncall}
  receivers:
    - name: oncall
      slack_configs:
        - {app_token: xoxb-bot-3e4r, channel: "#alerts", allowed_users: [U0ANA]}
  slack_interactivity:
    mode: %s
    %s: ${%s}
    allowed_user_groups: [S0SRE]
`
	for _, c := range []struct{ mode, key, env string }{{"socket", "app_level_token", "XAPP"}, {"http", "signing_secret", "SIGNING"}} {
		writeFile(t, dir, "paged.yaml", fmt.Sprintf(conf, c.mode, c.key, c.env))
		cfg, err := Load(filepath.Join(dir, "paged.yaml"), func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		si := cfg.NotifierConfig.SlackInteractivity
		if si == nil || si.ModeOrDefault() != c.mode || si.AllowedUserGroups[0] != "S0SRE" {
			t.Fatalf("%s: slack_interactivity = %+v", c.mode, si)
		}
		y := cfg.Redacted2(t)
		for _, secret := range []string{"topsecret-9q8w", "signing-5t6y", "xoxb-bot-3e4r"} {
			if strings.Contains(y, secret) {
				t.Errorf("%s: redacted configuration shows %q:\n%s", c.mode, secret, y)
			}
		}
		if !strings.Contains(y, "slack_interactivity") || !strings.Contains(y, "mode: "+c.mode) {
			t.Errorf("%s: redacted configuration lacks the block:\n%s", c.mode, y)
		}
	}
	// A bot token pasted as the app-level token: refused, never echoed.
	writeFile(t, dir, "paged.yaml", fmt.Sprintf(conf, "socket", "app_level_token", "BOT"))
	_, err := Load(filepath.Join(dir, "paged.yaml"), func(k string) string {
		if k == "BOT" {
			return "xoxb-pasted-1q2w"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "not an app-level token") || strings.Contains(err.Error(), "1q2w") {
		t.Errorf("bot token as app-level token: err = %v", err)
	}
}
