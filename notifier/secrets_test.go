package notifier

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// TestSecretsNeverLeak makes every integration fail in the ways that
// produce errors (connection refused, HTTP errors, ok:false, bad config)
// and checks that no token, webhook URL or HMAC secret shows up in the
// logs, the errors or the API output.
func TestSecretsNeverLeak(t *testing.T) {
	const (
		token       = "xoxb-LEAKCHECK-token-9f8e7d"
		hookSecret  = "LEAKCHECKhookpath1234"
		hmacSecret  = "LEAKCHECK-hmac-secret"
		whSecret    = "LEAKCHECKwebhookpath5678"
		tokenInFile = "xoxb-LEAKCHECK-file-token"
	)
	secrets := []string{token, hookSecret, hmacSecret, whSecret, tokenInFile}

	slackOK := notifiertest.NewSlack(t, "some-other-token") // answers invalid_auth: ok:false
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // connection refused from now on
	failing := notifiertest.NewSink(t)
	failing.Script(500, 500, 500, 500, 500, 500, 500, 500, 500, 500)

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(tokenInFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(tinyRoute, "all") + fmt.Sprintf(`
receivers:
  - name: all
    slack_configs:
      - app_token: %[1]s
        app_url: %[2]s
        channel: "#a"
      - app_token_file: %[3]s
        app_url: %[4]s/api/
        channel: "#b"
      - api_url: %[4]s/services/T/B/%[5]s
    webhook_configs:
      - url: %[6]s/hook/%[7]s
        hmac_secret: %[8]s
      - url: %[4]s/hook/%[7]s
`, token, slackOK.APIURL(), tokenFile, deadURL, hookSecret, failing.URL(), whSecret, hmacSecret)
	n := start(t, conf, Options{})
	n.Notify(context.Background(), []*rules.Alert{firing("LeakCheck")})

	// Wait until every integration failed at least once.
	waitFor(t, func() bool {
		return testutil.ToFloat64(n.metrics.slackErrors.WithLabelValues("invalid_auth")) >= 1 &&
			testutil.ToFloat64(n.metrics.retries.WithLabelValues("all", "slack")) >= 2 &&
			testutil.ToFloat64(n.metrics.retries.WithLabelValues("all", "webhook")) >= 2
	})
	var outputs []string
	outputs = append(outputs, n.logs.String())

	api := serveAPI(t, n.Notifier)
	for _, p := range []string{"/api/v2/status", "/api/v2/receivers", "/api/v2/alerts", "/api/v2/alerts/groups"} {
		resp, err := http.Get(api + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		outputs = append(outputs, string(b))
	}

	// Configuration errors around secrets.
	for _, bad := range []string{
		"receivers: [{name: x, slack_configs: [{api_url: 'ftp://" + hookSecret + "'}]}]",
		"receivers: [{name: x, slack_configs: [{api_url: '%zz" + hookSecret + "'}]}]",
		"receivers: [{name: x, webhook_configs: [{url: 'http://h/" + whSecret + "', url_file: /x}]}]",
		"receivers: [{name: x, slack_configs: [{app_token: " + token + ", api_url: 'http://h/" + hookSecret + "'}]}]",
		"receivers: [{name: x, slack_configs: [{app_token: " + token + "}]}]",
	} {
		_, err := ParseConfig([]byte(bad))
		if err == nil {
			t.Errorf("config accepted: %s", bad)
			continue
		}
		outputs = append(outputs, err.Error())
	}

	all := strings.Join(outputs, "\n")
	if !strings.Contains(all, "invalid_auth") || !strings.Contains(all, "connection refused") {
		t.Fatalf("the failures did not happen as planned:\n%s", all)
	}
	for _, s := range secrets {
		if strings.Contains(all, s) {
			i := strings.Index(all, s)
			t.Errorf("secret %q leaked: ...%s...", s, all[max(0, i-200):min(len(all), i+100)])
		}
	}
}
