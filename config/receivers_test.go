package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// indent puts a YAML document under a key.
func indent(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// One receiver of every Alertmanager type with its secrets inline: none
// of them reaches /api/v1/status/config.
func TestEveryReceiverTypeRedacted(t *testing.T) {
	every, err := os.ReadFile("../notifier/testdata/receivers/every_type.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	writeFile(t, dir, "paged.yaml", "datasource: {prometheus: {url: \"http://127.0.0.1:9090\"}}\nrule_files: [rules/basic.rules.yaml]\nnotifier:\n"+indent(string(every)))
	cfg, err := Load(filepath.Join(dir, "paged.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.NotifierConfig.Receivers); n != 16 {
		t.Fatalf("%d receivers, want 16", n)
	}
	y := cfg.Redacted2(t)
	if i := strings.Index(y, "s3cr3t"); i >= 0 {
		t.Errorf("a secret in the redacted configuration, at %q", y[max(0, i-80):min(len(y), i+20)])
	}
	for _, want := range []string{"pagerduty_configs:", "routing_key: <secret>", "api_key: <secret>", "auth_password: <secret>", "smtp_auth_password: <secret>", "to: oncall@example.org"} {
		if !strings.Contains(y, want) {
			t.Errorf("redacted configuration lacks %q", want)
		}
	}
}

// Every type's secrets from files: the paths resolve against the
// configuration's directory, a missing file is reported at its line, and
// the file's content is never shown.
func TestEveryReceiverTypeSecretsFromFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules/basic.rules.yaml", basicRules)
	secrets := []string{"discord", "email", "incidentio-url", "incidentio", "jira", "mattermost", "msteams", "msteamsv2",
		"opsgenie", "pagerduty", "pushover-user", "pushover", "rocketchat", "rocketchat-id", "telegram", "victorops", "webex", "wechat", "smtp"}
	for _, s := range secrets {
		content := "file-s3cr3t-" + s
		if strings.Contains(s, "url") || s == "discord" || strings.HasPrefix(s, "msteams") || s == "mattermost" {
			content = "https://hooks.example.org/" + content
		}
		writeFile(t, dir, "secrets/"+s, content)
	}
	const conf = `datasource: {prometheus: {url: "http://127.0.0.1:9090"}}
rule_files: [rules/basic.rules.yaml]
notifier:
  global:
    smtp_smarthost: mail.example.org:587
    smtp_from: paged@example.org
    smtp_auth_username: paged
    smtp_auth_password_file: secrets/smtp
    jira_api_url: https://example.atlassian.net/rest/api/2/
  route: {receiver: all}
  receivers:
    - name: all
      discord_configs: [{webhook_url_file: secrets/discord}]
      email_configs: [{to: oncall@example.org, auth_password_file: secrets/email}]
      incidentio_configs: [{url_file: secrets/incidentio-url, alert_source_token_file: secrets/incidentio}]
      jira_configs: [{project: OPS, issue_type: Bug, http_config: {basic_auth: {username: paged, password_file: secrets/jira}}}]
      mattermost_configs: [{webhook_url_file: secrets/mattermost}]
      msteams_configs: [{webhook_url_file: secrets/msteams}]
      msteamsv2_configs: [{webhook_url_file: secrets/msteamsv2}]
      opsgenie_configs: [{api_key_file: secrets/opsgenie}]
      pagerduty_configs: [{routing_key_file: secrets/pagerduty}]
      pushover_configs: [{user_key_file: secrets/pushover-user, token_file: secrets/pushover}]
      rocketchat_configs: [{token_file: secrets/rocketchat, token_id_file: secrets/rocketchat-id}]
      sns_configs: [{topic_arn: "arn:aws:sns:us-east-1:123456789012:paged", sigv4: {region: us-east-1, profile: paged}}]
      telegram_configs: [{bot_token_file: secrets/telegram, chat_id: 42}]
      victorops_configs: [{api_key_file: secrets/victorops, routing_key: ops}]
      webex_configs: [{room_id: room, http_config: {authorization: {credentials_file: secrets/webex}}}]
      wechat_configs: [{api_secret_file: secrets/wechat, corp_id: corp}]
`
	writeFile(t, dir, "paged.yaml", conf)
	cfg, err := Load(filepath.Join(dir, "paged.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	up := cfg.NotifierConfig.Receivers[0].Upstream
	for name, got := range map[string]string{
		"pagerduty routing_key_file": up.PagerdutyConfigs[0].RoutingKeyFile,
		"email auth_password_file":   up.EmailConfigs[0].AuthPasswordFile,
		"opsgenie api_key_file":      up.OpsGenieConfigs[0].APIKeyFile,
		"msteamsv2 webhook_url_file": up.MSTeamsV2Configs[0].WebhookURLFile,
		"telegram bot_token_file":    up.TelegramConfigs[0].BotTokenFile,
		"webex credentials_file":     up.WebexConfigs[0].HTTPConfig.Authorization.CredentialsFile,
		"jira password_file":         up.JiraConfigs[0].HTTPConfig.BasicAuth.PasswordFile,
	} {
		if !strings.HasPrefix(got, filepath.Join(dir, "secrets")+"/") {
			t.Errorf("%s = %q, want it under %s", name, got, filepath.Join(dir, "secrets"))
		}
	}
	if y := cfg.Redacted2(t); strings.Contains(y, "s3cr3t") {
		t.Errorf("a file's secret in the redacted configuration:\n%s", y)
	}

	// A missing file: its line, column and path; no other file's content.
	os.Remove(filepath.Join(dir, "secrets/pagerduty"))
	_, err = Load(filepath.Join(dir, "paged.yaml"), noEnv)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "paged.yaml:21:46:") || !strings.Contains(msg, "secrets/pagerduty") || strings.Contains(msg, "s3cr3t") {
		t.Errorf("missing routing_key_file reported as:\n%s", msg)
	}
}
