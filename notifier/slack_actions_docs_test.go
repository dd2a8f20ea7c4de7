package notifier

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/internal/testbin"
)

// The section of docs/notifications.md on the Slack buttons says what
// the code does: every action_id is documented, every configuration
// example is one the notifier accepts, and the two manifests ask for
// Socket Mode and for the request URL paged serves.
func TestSlackActionsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testbin.RepoRoot(t), "docs", "notifications.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## On call from Slack: acknowledge and silence")
	if start < 0 {
		t.Fatal("docs/notifications.md has no section On call from Slack: acknowledge and silence")
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}

	for _, id := range []string{ActionAck, ActionUnack, ActionSilence1h, ActionSilence4h, ActionSilence24h, ActionSilenceUntilResolved, ActionUnsilence} {
		if !strings.Contains(section, "`"+id+"`") {
			t.Errorf("the section does not document the action_id %s", id)
		}
	}

	var configs, manifests int
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1) {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(m[1]), &doc); err != nil {
			t.Errorf("a YAML example does not parse: %v\n%s", err, m[1])
			continue
		}
		top := doc.Content[0]
		switch key := top.Content[0].Value; key {
		case "notifier":
			configs++
			text, err := yaml.Marshal(top.Content[1])
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseConfig(text)
			if err != nil {
				t.Errorf("a configuration example is refused: %v\n%s", err, m[1])
				continue
			}
			if c.SlackInteractivity == nil {
				t.Errorf("a configuration example has no slack_interactivity:\n%s", m[1])
			}
		case "display_information":
			manifests++
			var mf struct {
				OAuth struct {
					Scopes struct {
						Bot []string `yaml:"bot"`
					} `yaml:"scopes"`
				} `yaml:"oauth_config"`
				Settings struct {
					Interactivity struct {
						IsEnabled  bool   `yaml:"is_enabled"`
						RequestURL string `yaml:"request_url"`
					} `yaml:"interactivity"`
					SocketMode    bool `yaml:"socket_mode_enabled"`
					TokenRotation bool `yaml:"token_rotation_enabled"`
				} `yaml:"settings"`
			}
			if err := top.Decode(&mf); err != nil {
				t.Fatal(err)
			}
			// What the notifier calls: chat.postMessage, chat.update and
			// chat.postEphemeral; conversations.history and .list;
			// usergroups.users.list; the chart's file upload.
			for _, scope := range []string{"chat:write", "channels:history", "groups:history", "channels:read", "groups:read", "usergroups:read", "files:write"} {
				if !strings.Contains(" "+strings.Join(mf.OAuth.Scopes.Bot, " ")+" ", " "+scope+" ") {
					t.Errorf("a manifest lacks the bot scope %s: %v", scope, mf.OAuth.Scopes.Bot)
				}
			}
			s := mf.Settings
			if !s.Interactivity.IsEnabled || s.TokenRotation {
				t.Errorf("a manifest has interactivity.is_enabled %v and token_rotation_enabled %v, want true and false", s.Interactivity.IsEnabled, s.TokenRotation)
			}
			if s.SocketMode == (s.Interactivity.RequestURL != "") {
				t.Errorf("a manifest has socket_mode_enabled %v with request_url %q: want one way in", s.SocketMode, s.Interactivity.RequestURL)
			}
			if u := s.Interactivity.RequestURL; u != "" && !strings.HasSuffix(u, "/slack/interactions") {
				t.Errorf("the HTTP manifest's request_url %s is not paged's /slack/interactions", u)
			}
		default:
			t.Errorf("a YAML example starts with %s, neither a configuration nor a manifest", key)
		}
	}
	if configs < 2 || manifests != 2 {
		t.Errorf("the section has %d configuration examples and %d manifests, want one of each per mode", configs, manifests)
	}
}
