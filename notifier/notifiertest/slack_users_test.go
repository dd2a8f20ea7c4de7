package notifiertest

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/slack-go/slack"
)

const testBotToken = "xoxb-1-bot"

// countCalls returns how many calls of method s received.
func countCalls(s *Slack, method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return countCallsLocked(s, method)
}

func countCallsLocked(s *Slack, method string) int {
	n := 0
	for _, c := range s.calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

// chat.postEphemeral is recorded with its user and not in the channel's
// history; users.info and usergroups.users.list answer what was set.
func TestEphemeralAndUsers(t *testing.T) {
	s := NewSlackHandler(testBotToken)
	api := slack.New(testBotToken, slack.OptionAPIURL(s.APIURL()), slack.OptionHTTPClient(&http.Client{Transport: InProcess(s)}))

	ts, err := api.PostEphemeral("C0ALERTS", "U2", slack.MsgOptionText("only on-call can silence", false))
	if err != nil || ts == "" {
		t.Fatalf("chat.postEphemeral: ts %q, %v", ts, err)
	}
	c := s.Calls()[0]
	if c.Method != "chat.postEphemeral" || c.User != "U2" || c.Channel != "C0ALERTS" || c.TS != ts || c.Text != "only on-call can silence" {
		t.Errorf("recorded %+v", c)
	}
	if _, p := call(t, s, "conversations.history", url.Values{"token": {testBotToken}, "channel": {"C0ALERTS"}}); !p.OK || len(p.Messages) != 0 {
		t.Errorf("history %+v, want no message", p)
	}
	if _, err := api.PostEphemeral("C0ALERTS", ""); err == nil || err.Error() != "invalid_arguments" {
		t.Errorf("no user: %v, want invalid_arguments", err)
	}

	s.SetUser("U1", "alice")
	u, err := api.GetUserInfo("U1")
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != "U1" || u.Name != "alice" || u.RealName != "alice" || u.Profile.DisplayName != "alice" || u.Profile.RealName != "alice" || u.TeamID != slackTeamID {
		t.Errorf("users.info: %+v", u)
	}
	if _, err := api.GetUserInfo("U404"); err == nil || err.Error() != "user_not_found" {
		t.Errorf("unknown user: %v, want user_not_found", err)
	}

	s.SetUserGroup("S0ONCALL", "U1", "U3")
	members, err := api.GetUserGroupMembers("S0ONCALL")
	if err != nil || !slices.Equal(members, []string{"U1", "U3"}) {
		t.Errorf("usergroups.users.list: %v, %v; want U1 U3", members, err)
	}
	if _, err := api.GetUserGroupMembers("S404"); err == nil || err.Error() != "no_such_subteam" {
		t.Errorf("unknown group: %v, want no_such_subteam", err)
	}

	var methods []string
	for _, c := range s.Calls() {
		methods = append(methods, c.Method)
	}
	want := []string{"chat.postEphemeral", "conversations.history", "chat.postEphemeral", "users.info", "users.info", "usergroups.users.list", "usergroups.users.list"}
	if !slices.Equal(methods, want) {
		t.Errorf("calls %v, want %v", methods, want)
	}
	if c := s.Calls()[5]; c.Form.Get("usergroup") != "S0ONCALL" {
		t.Errorf("usergroups.users.list form %v", c.Form)
	}
}
