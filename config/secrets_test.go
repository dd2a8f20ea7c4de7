package config

import (
	"errors"
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
