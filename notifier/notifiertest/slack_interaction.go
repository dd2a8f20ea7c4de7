package notifiertest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// BlockAction is a click on a button (or an overflow menu's option) of a
// message, for BlockActionPayload. Fields left empty are filled as
// Slack would fill them, from the message the stand-in holds where it
// can.
type BlockAction struct {
	ActionID string
	// BlockID is the block holding the element; empty: the block of the
	// element with ActionID in the message.
	BlockID string
	// Value is a button's value; empty: the value of the button with
	// ActionID in the message.
	Value string
	// SelectedOption, when set, makes the action an overflow menu's
	// ("type":"overflow") with the option of this value chosen.
	SelectedOption string

	UserID   string // default U0001
	UserName string // default the name given to SetUser, or UserID in lower case
	TeamID   string // default T0000

	ChannelID   string
	ChannelName string // default ChannelID's name as conversations.list gives it
	MessageTS   string
	ActionTS    string // default now, "secs.micros"
	ResponseURL string

	// Message is the message object as Slack sends it (type, user, ts,
	// text, blocks, metadata); nil: the message at ChannelID/MessageTS
	// as the stand-in holds it (after any chat.update), with block_ids
	// given to blocks posted without one, as Slack gives them.
	Message json.RawMessage
}

// interactionPayload is a block_actions payload, its fields in Slack's
// order.
type interactionPayload struct {
	Type                string            `json:"type"`
	User                interactionUser   `json:"user"`
	APIAppID            string            `json:"api_app_id"`
	Token               string            `json:"token"`
	Container           interactionCont   `json:"container"`
	TriggerID           string            `json:"trigger_id"`
	Team                interactionTeam   `json:"team"`
	Enterprise          *struct{}         `json:"enterprise"`
	IsEnterpriseInstall bool              `json:"is_enterprise_install"`
	Channel             interactionChan   `json:"channel"`
	Message             json.RawMessage   `json:"message"`
	State               interactionState  `json:"state"`
	ResponseURL         string            `json:"response_url"`
	Actions             []interactionItem `json:"actions"`
}

type interactionUser struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Name     string `json:"name"`
	TeamID   string `json:"team_id"`
}

type interactionCont struct {
	Type        string `json:"type"`
	MessageTS   string `json:"message_ts"`
	ChannelID   string `json:"channel_id"`
	IsEphemeral bool   `json:"is_ephemeral"`
}

type interactionTeam struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
}

type interactionChan struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type interactionState struct {
	Values map[string]any `json:"values"`
}

type interactionItem struct {
	Type           string             `json:"type"`
	ActionID       string             `json:"action_id"`
	BlockID        string             `json:"block_id"`
	Text           *slackText         `json:"text,omitempty"`
	Value          string             `json:"value,omitempty"`
	SelectedOption *interactionOption `json:"selected_option,omitempty"`
	ActionTS       string             `json:"action_ts"`
}

type interactionOption struct {
	Text  slackText `json:"text"`
	Value string    `json:"value"`
}

type slackText struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Emoji bool   `json:"emoji,omitempty"`
}

// slackVerificationToken is the (deprecated) verification token Slack
// puts in every payload.
const slackVerificationToken = "stand-in-verification-token"

// BlockActionPayload returns the block_actions payload Slack sends when
// someone clicks a's element, as Socket Mode carries it (SendInteractive)
// and a request URL receives it (SignedInteraction):
//
//	{"type":"block_actions",
//	 "user":{"id","username","name","team_id"},
//	 "api_app_id":"A0PAGED","token":"…",
//	 "container":{"type":"message","message_ts","channel_id","is_ephemeral":false},
//	 "trigger_id":"…","team":{"id","domain"},"enterprise":null,"is_enterprise_install":false,
//	 "channel":{"id","name"},
//	 "message":{"type":"message","user","bot_id","app_id","team","ts","text","blocks","metadata"},
//	 "state":{"values":{}},"response_url":"…",
//	 "actions":[{"type":"button","action_id","block_id","text":{"type":"plain_text","text","emoji"},"value","action_ts"}]}
//
// An overflow menu's action is {"type":"overflow","action_id","block_id",
// "selected_option":{"text":{…},"value"},"action_ts"}.
func (s *Slack) BlockActionPayload(a BlockAction) []byte {
	if a.UserID == "" {
		a.UserID = "U0001"
	}
	if a.TeamID == "" {
		a.TeamID = slackTeamID
	}
	if a.ActionTS == "" {
		us := time.Now().UnixMicro()
		a.ActionTS = fmt.Sprintf("%d.%06d", us/1_000_000, us%1_000_000)
	}
	if a.ChannelName == "" {
		a.ChannelName = strings.ToLower(strings.TrimPrefix(a.ChannelID, "C"))
	}
	s.mu.Lock()
	if a.UserName == "" {
		a.UserName = s.users[a.UserID]
	}
	if a.Message == nil {
		a.Message = s.messageObject(a.ChannelID, a.MessageTS)
	}
	s.mu.Unlock()
	if a.UserName == "" {
		a.UserName = strings.ToLower(a.UserID)
	}

	el := findElement(a.Message, a.ActionID)
	if a.BlockID == "" {
		a.BlockID = el.blockID
	}
	act := interactionItem{Type: "button", ActionID: a.ActionID, BlockID: a.BlockID, ActionTS: a.ActionTS}
	if a.SelectedOption != "" {
		act.Type = "overflow"
		opt := interactionOption{Text: slackText{Type: "plain_text", Text: a.SelectedOption, Emoji: true}, Value: a.SelectedOption}
		for _, o := range el.Options {
			if o.Value == a.SelectedOption {
				opt.Text = o.Text
			}
		}
		act.SelectedOption = &opt
	} else {
		act.Value = a.Value
		if act.Value == "" {
			act.Value = el.Value
		}
		act.Text = &slackText{Type: "plain_text", Text: a.ActionID, Emoji: true}
		if el.Text != nil {
			act.Text = el.Text
		}
	}

	p := interactionPayload{
		Type:        "block_actions",
		User:        interactionUser{ID: a.UserID, Username: a.UserName, Name: a.UserName, TeamID: a.TeamID},
		APIAppID:    slackAppID,
		Token:       slackVerificationToken,
		Container:   interactionCont{Type: "message", MessageTS: a.MessageTS, ChannelID: a.ChannelID},
		TriggerID:   fmt.Sprintf("%s.%s.%s", strings.ReplaceAll(a.ActionTS, ".", ""), "1000000001", randomHex(16)),
		Team:        interactionTeam{ID: a.TeamID, Domain: slackTeamDomain},
		Channel:     interactionChan{ID: a.ChannelID, Name: a.ChannelName},
		Message:     a.Message,
		State:       interactionState{Values: map[string]any{}},
		ResponseURL: a.ResponseURL,
		Actions:     []interactionItem{act},
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic("notifiertest: block_actions payload: " + err.Error()) // a.Message is not JSON
	}
	return b
}

// messageObject returns the message at channel/ts as a block_actions
// payload carries it. Called with s.mu held.
func (s *Slack) messageObject(channel, ts string) json.RawMessage {
	m := map[string]any{"type": "message", "ts": ts}
	if stored, ok := s.messages[channel+"/"+ts]; ok {
		m["user"], m["bot_id"], m["app_id"], m["team"] = slackBotUserID, slackBotID, slackAppID, slackTeamID
		m["text"] = stored.Text
		if stored.ThreadTS != "" {
			m["thread_ts"] = stored.ThreadTS
		}
		if stored.Blocks != nil {
			m["blocks"] = withBlockIDs(stored.Blocks)
		}
		if stored.Metadata != nil {
			m["metadata"] = stored.Metadata
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// withBlockIDs gives the blocks without a block_id one, derived from
// their place and content, as Slack gives blocks one when it stores a
// message.
func withBlockIDs(blocks json.RawMessage) json.RawMessage {
	var bs []map[string]any
	if json.Unmarshal(blocks, &bs) != nil {
		return blocks
	}
	for i, b := range bs {
		if id, _ := b["block_id"].(string); id == "" {
			raw, _ := json.Marshal(b)
			h := fnv.New32a()
			h.Write(raw)
			b["block_id"] = strconv.Itoa(i) + strconv.FormatUint(uint64(h.Sum32()), 36)
		}
	}
	out, err := json.Marshal(bs)
	if err != nil {
		return blocks
	}
	return out
}

// blockElement is an element of a message's blocks: an interactive one
// (button, overflow menu), or any other, such as a context block's text,
// whose "text" is a string.
type blockElement struct {
	blockID  string
	Type     string
	ActionID string
	Text     *slackText // a button's label; nil for a text element
	Value    string
	Options  []interactionOption
}

func (e *blockElement) UnmarshalJSON(b []byte) error {
	var raw struct {
		Type     string              `json:"type"`
		ActionID string              `json:"action_id"`
		Text     json.RawMessage     `json:"text"`
		Value    string              `json:"value"`
		Options  []interactionOption `json:"options"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = blockElement{Type: raw.Type, ActionID: raw.ActionID, Value: raw.Value, Options: raw.Options}
	if len(raw.Text) > 0 && raw.Text[0] == '{' {
		e.Text = &slackText{}
		return json.Unmarshal(raw.Text, e.Text)
	}
	return nil
}

// findElement finds the element with actionID in a message's blocks
// (an actions block's elements, a section's accessory).
func findElement(message json.RawMessage, actionID string) blockElement {
	var m struct {
		Blocks []struct {
			BlockID   string         `json:"block_id"`
			Elements  []blockElement `json:"elements"`
			Accessory *blockElement  `json:"accessory"`
		} `json:"blocks"`
	}
	if json.Unmarshal(message, &m) != nil {
		return blockElement{}
	}
	for _, b := range m.Blocks {
		els := b.Elements
		if b.Accessory != nil {
			els = append(els, *b.Accessory)
		}
		for _, el := range els {
			if el.ActionID == actionID {
				el.blockID = b.BlockID
				return el
			}
		}
	}
	return blockElement{}
}

// SignedInteraction returns what Slack sends to a request URL for an
// interaction payload: the form body "payload=<payload>", URL-encoded,
// and the headers Content-Type, User-Agent, X-Slack-Request-Timestamp (ts
// in Unix seconds) and X-Slack-Signature, "v0=" and the hex HMAC-SHA256,
// keyed with signingSecret, of "v0:<timestamp>:<body>".
func SignedInteraction(signingSecret string, payload []byte, ts time.Time) (body string, header http.Header) {
	body = url.Values{"payload": {string(payload)}}.Encode()
	sec := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(signingSecret))
	mac.Write([]byte("v0:" + sec + ":" + body))
	header = http.Header{}
	header.Set("Content-Type", "application/x-www-form-urlencoded")
	header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	header.Set("X-Slack-Request-Timestamp", sec)
	header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return body, header
}

// randomHex returns n random bytes in hex, for IDs and secrets in URLs.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
