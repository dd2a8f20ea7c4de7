package server

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The secrets of the configuration below. None of them may appear in an
// error, a log line or any API response.
var testSecrets = map[string]string{
	"DS_PASSWORD":    "ds-pass-9f8e",
	"DS_QUERY_TOKEN": "qtok-7d6c",
	"BEARER":         "bearer-5b4a",
	"SLACK_URL":      "https://hooks.slack.com/services/T000/B000/slack-3c2b",
	"WEBHOOK_TOKEN":  "wh-1a0f",
	"HMAC":           "hmac-2e1d",
}

const authTokenSecret = "auth-0z9y"

const secretConfig = `
global:
  external_labels: {cluster: prod}
datasource:
  prometheus:
    url: http://paged:${DS_PASSWORD}@127.0.0.1:9/?token=${DS_QUERY_TOKEN}
    http_config:
      authorization: {credentials: "${BEARER}"}
rule_files: [rules/basic.rules.yaml]
web:
  auth_token_file: token
notifier:
  route: {receiver: oncall}
  receivers:
    - name: oncall
      slack_configs:
        - api_url: ${SLACK_URL}
      webhook_configs:
        - url: https://hooks.example.com/T0/${WEBHOOK_TOKEN}
          hmac_secret: ${HMAC}
`

func assertNoSecret(t *testing.T, where, s string) {
	t.Helper()
	all := []string{authTokenSecret}
	for _, v := range testSecrets {
		all = append(all, v)
	}
	for _, secret := range all {
		// the Slack URL's last path segment is the secret part
		if i := strings.LastIndex(secret, "/"); i >= 0 {
			secret = secret[i+1:]
		}
		if strings.Contains(s, secret) {
			t.Errorf("%s leaks secret %q:\n%s", where, secret, s)
		}
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	ts := newTestServer(t, secretConfig, map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"token":                  authTokenSecret + "\n",
	}, testSecrets)
	ts.EvalAll(time.Now())

	// The secrets did arrive where they are needed.
	cfg := ts.Config()
	if p, _ := cfg.Datasource.Prometheus.URL.User.Password(); p != testSecrets["DS_PASSWORD"] {
		t.Fatalf("datasource password not expanded")
	}
	if string(cfg.Datasource.Prometheus.HTTPConfig.Authorization.Credentials) != testSecrets["BEARER"] {
		t.Fatalf("bearer credentials not expanded")
	}
	if got := string(cfg.NotifierConfig.Receivers[0].SlackConfigs[0].APIURL); got != testSecrets["SLACK_URL"] {
		t.Fatalf("slack api_url not expanded")
	}

	// Every GET endpoint.
	auth := http.Header{"Authorization": {"Bearer " + authTokenSecret}}
	for _, path := range []string{"/api/v1/status/config", "/api/v1/rules", "/api/v1/alerts", "/metrics", "/-/ready", "/-/healthy", "/api/v2/status", "/api/v2/receivers"} {
		code, body := ts.Do(t, http.MethodGet, path, auth)
		if code != http.StatusOK && path != "/-/ready" {
			t.Errorf("GET %s = %d", path, code)
		}
		if path == "/api/v2/receivers" && !strings.Contains(body, `"oncall"`) {
			t.Errorf("notifier API not mounted at /api/v2: %s", body)
		}
		assertNoSecret(t, "GET "+path, body)
	}
	_, status := ts.Do(t, http.MethodGet, "/api/v1/status/config", nil)
	for _, want := range []string{"<secret>", "xxxxx", "auth_token_file:", "cluster: prod"} {
		if !strings.Contains(status, want) {
			t.Errorf("status/config lacks %q:\n%s", want, status)
		}
	}

	// Reloads, good and bad, and their logs.
	if code, body := ts.Do(t, http.MethodPost, "/-/reload", auth); code != 200 {
		t.Fatalf("reload = %d %s", code, body)
	}
	ts.Rewrite(t, strings.Replace(secretConfig, "api_url: ${SLACK_URL}", "api_url: ${SLACK_URL}x y", 1)+"bogus: 1\n")
	code, body := ts.Do(t, http.MethodPost, "/-/reload", auth)
	if code != http.StatusBadRequest {
		t.Errorf("bad reload = %d", code)
	}
	assertNoSecret(t, "failed reload response", body)
	assertNoSecret(t, "logs", ts.Logs.String())
	if !strings.Contains(ts.Logs.String(), "reload failed") {
		t.Errorf("expected a logged reload failure:\n%s", ts.Logs.String())
	}
}
