package notifiertest

import (
	"net/http"
	"slices"
)

// The workspace's people, for apps that check who clicked: users.info
// and usergroups.users.list.

// SetUser makes a user exist (users.info), with name as its handle, real
// name and display name. BlockActionPayload takes it as the name of the
// user clicking.
func (s *Slack) SetUser(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = name
}

// SetUserGroup makes a user group exist (usergroups.users.list) with
// these members, replacing those it had.
func (s *Slack) SetUserGroup(id string, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = slices.Clone(users)
}

// userInfo answers users.info:
//
//	{"ok":true,"user":{"id","team_id","name","deleted":false,"real_name","is_bot":false,
//	 "profile":{"display_name","display_name_normalized","real_name","real_name_normalized"}}}
//
// or user_not_found. Called with s.mu held.
func (s *Slack) userInfo(w http.ResponseWriter, call SlackCall) {
	name, ok := s.users[call.User]
	if !ok {
		s.fail(w, call, "user_not_found")
		return
	}
	s.record(call)
	writeJSON(w, map[string]any{"ok": true, "user": map[string]any{
		"id": call.User, "team_id": slackTeamID, "name": name, "deleted": false, "real_name": name, "is_bot": false,
		"profile": map[string]any{
			"display_name": name, "display_name_normalized": name,
			"real_name": name, "real_name_normalized": name,
		},
	}})
}

// userGroupMembers answers usergroups.users.list: {"ok":true,"users":[…]},
// or no_such_subteam. Called with s.mu held.
func (s *Slack) userGroupMembers(w http.ResponseWriter, call SlackCall) {
	users, ok := s.groups[call.Form.Get("usergroup")]
	if !ok {
		s.fail(w, call, "no_such_subteam")
		return
	}
	s.record(call)
	writeJSON(w, map[string]any{"ok": true, "users": append([]string{}, users...)})
}
