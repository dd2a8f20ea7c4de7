package notifier

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	commoncfg "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v3"
)

// Interactivity modes: how Slack delivers button presses.
const (
	// InteractSocket: paged opens an outbound WebSocket (Socket Mode)
	// with an app-level token; no inbound URL is needed.
	InteractSocket = "socket"
	// InteractHTTP: Slack posts signed requests to /slack/interactions.
	InteractHTTP = "http"
)

// SlackInteractivity is the notifier's slack_interactivity block.
type SlackInteractivity struct {
	Mode string `yaml:"mode"` // socket (default) or http

	// Socket Mode: the app-level token (xapp-…), connections:write.
	AppLevelToken     commoncfg.Secret `yaml:"app_level_token"`
	AppLevelTokenFile string           `yaml:"app_level_token_file"`
	// HTTP mode: the app's signing secret, which signs every request.
	SigningSecret     commoncfg.Secret `yaml:"signing_secret"`
	SigningSecretFile string           `yaml:"signing_secret_file"`

	// AllowedUsers and AllowedUserGroups are Slack user and user-group
	// ids that may act; both empty: anyone who sees the message.
	AllowedUsers      []string `yaml:"allowed_users"`
	AllowedUserGroups []string `yaml:"allowed_user_groups"`

	// AppURL is the Web API base Socket Mode connects through (default
	// https://slack.com/api/).
	AppURL string `yaml:"app_url"`
}

var (
	slackUserID  = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	slackGroupID = regexp.MustCompile(`^S[A-Z0-9]{2,}$`)
)

// ModeOrDefault returns the mode, socket when unset.
func (s *SlackInteractivity) ModeOrDefault() string {
	if s.Mode == "" {
		return InteractSocket
	}
	return s.Mode
}

// validate checks the block; errors are positioned at the key at fault.
func (s *SlackInteractivity) validate(n *yaml.Node) error {
	at := func(key string) *yaml.Node {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
		return n
	}
	var errs []error
	fail := func(key, format string, args ...any) {
		errs = append(errs, posErr(at(key), "slack_interactivity: "+format, args...))
	}
	switch s.ModeOrDefault() {
	case InteractSocket:
		switch {
		case s.AppLevelToken != "" && s.AppLevelTokenFile != "":
			fail("app_level_token_file", "at most one of app_level_token and app_level_token_file")
		case s.AppLevelToken == "" && s.AppLevelTokenFile == "":
			fail("mode", "mode socket needs app_level_token or app_level_token_file (an app-level token, xapp-…, with connections:write)")
		case s.AppLevelToken != "" && !strings.HasPrefix(string(s.AppLevelToken), "xapp-"):
			// Never echo the value: it may be a bot token pasted by mistake.
			fail("app_level_token", "app_level_token is not an app-level token (they start with xapp-; a bot token, xoxb-, goes in the receiver's app_token)")
		}
	case InteractHTTP:
		switch {
		case s.SigningSecret != "" && s.SigningSecretFile != "":
			fail("signing_secret_file", "at most one of signing_secret and signing_secret_file")
		case s.SigningSecret == "" && s.SigningSecretFile == "":
			fail("mode", "mode http needs signing_secret or signing_secret_file (Basic Information → Signing Secret in the app's settings)")
		}
	default:
		fail("mode", "mode must be socket or http, not %q", s.Mode)
	}
	if s.AppURL != "" {
		if err := checkURL(s.AppURL); err != nil {
			fail("app_url", "app_url: %v", err)
		}
	}
	if err := checkSlackIDs("allowed_users", s.AllowedUsers, slackUserID); err != nil {
		fail("allowed_users", "%v", err)
	}
	if err := checkSlackIDs("allowed_user_groups", s.AllowedUserGroups, slackGroupID); err != nil {
		fail("allowed_user_groups", "%v", err)
	}
	return errors.Join(errs...)
}

// checkSlackIDs checks that every entry is a Slack id of the kind re
// matches: names change and collide, ids do not.
func checkSlackIDs(key string, ids []string, re *regexp.Regexp) error {
	for _, id := range ids {
		if !re.MatchString(id) {
			hint := "list user ids (U…): a profile's ⋮ → Copy member ID"
			if re == slackGroupID {
				hint = "list user-group ids (S…): the last part of the group's URL in People → User groups"
			}
			return fmt.Errorf("%s: %q is not a Slack id; %s", key, id, hint)
		}
	}
	return nil
}
