package notifier

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

func TestApplyConfigKeepsOldOnError(t *testing.T) {
	sink := notifiertest.NewSink(t)
	hook := func(path string) string {
		return fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf("receivers:\n  - name: hook\n    webhook_configs:\n      - url: %s%s\n", sink.URL(), path)
	}
	n := start(t, hook("/old"), Options{})

	bad := mustConfig(t, hook("/bad"))
	bad.Receivers[0].SlackConfigs = []*SlackConfig{{APIURL: "http://x/", Title: "{{ .Broken "}}
	if err := n.ApplyConfig(bad); err == nil || !strings.Contains(err.Error(), "template") {
		t.Fatalf("ApplyConfig(broken template) = %v, want a template error", err)
	}
	n.Notify(context.Background(), []*rules.Alert{firing("A")})
	if got := sink.Wait(t, 1, 10*time.Second)[0].Path; got != "/old" {
		t.Fatalf("after a failed reload delivered to %s, want /old", got)
	}
	// A reload cancels deliveries in flight (they are re-sent: at least
	// once); wait until A's delivery is in the notification log.
	waitFor(t, func() bool { return nflogEntries(n.Notifier) == 1 })

	if err := n.ApplyConfig(mustConfig(t, hook("/new"))); err != nil {
		t.Fatal(err)
	}
	n.Notify(context.Background(), []*rules.Alert{firing("B")})
	reqs := sink.Wait(t, 2, 10*time.Second)
	if reqs[1].Path != "/new" || !strings.Contains(string(reqs[1].Body), `"alertname":"B"`) {
		t.Fatalf("after reload: %s %s", reqs[1].Path, reqs[1].Body)
	}
	// A's group was already notified: the reload does not re-send it.
	for _, r := range reqs[1:] {
		if strings.Contains(string(r.Body), `"alertname":"A"`) {
			t.Errorf("alert A re-sent after reload to %s", r.Path)
		}
	}
}

func TestStaleAlertIsShownNotResolved(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, ""), Options{})
	a := firing("KVCacheSaturated")
	a.Stale = true
	n.Notify(context.Background(), []*rules.Alert{a})
	c := s.WaitCalls(t, 1, 10*time.Second)[0]
	contains(t, "stale message", string(c.Blocks), "FIRING", "datasource failing")
}

func TestSendTest(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	sink := notifiertest.NewSink(t)
	sink.Script(404)
	conf := mustConfig(t, fmt.Sprintf(`
route: {receiver: other}
receivers:
  - name: other
  - name: oncall
    slack_configs:
      - app_token: %s
        app_url: %s
        channel: "#alerts"
    webhook_configs:
      - url: %s/gone
`, testToken, s.APIURL(), sink.URL()))
	res, err := SendTest(context.Background(), Options{Config: conf}, "oncall")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Integration != "slack[0]" || res[0].Err != nil || res[1].Integration != "webhook[0]" || res[1].Err == nil {
		t.Fatalf("results = %+v", res)
	}
	contains(t, "webhook error", res[1].Err.Error(), "404")
	contains(t, "slack message", string(s.Calls()[0].Blocks), "PagedNotifyTest")
	if _, err := SendTest(context.Background(), Options{Config: conf}, "nope"); err == nil {
		t.Error("unknown receiver accepted")
	}
}

func TestSilencesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	conf := fmt.Sprintf(tinyRoute, "x") + "receivers: [{name: x}]\n"
	n1 := start(t, conf, Options{StoragePath: dir})
	url := serveAPI(t, n1.Notifier)
	body := `{"matchers":[{"name":"alertname","value":"Maintenance","isRegex":false,"isEqual":true}],
	  "startsAt":"` + time.Now().UTC().Format(time.RFC3339) + `","endsAt":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `",
	  "createdBy":"test","comment":"kept across restarts"}`
	resp, err := http.Post(url+"/api/v2/silences", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create silence: %s", resp.Status)
	}
	n1.stop()

	n2 := start(t, conf, Options{StoragePath: dir})
	resp, err = http.Get(serveAPI(t, n2.Notifier) + "/api/v2/silences")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	contains(t, "silences after restart", string(b), "kept across restarts", `"state":"active"`)
}
