package notifiertest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// alertBlocks are blocks like paged's alert message: a summary with an
// overflow menu of silences (block_id summary), and a row of buttons
// posted without a block_id.
func alertBlocks() []slack.Block {
	opt := func(v, text string) *slack.OptionBlockObject {
		return slack.NewOptionBlockObject(v, slack.NewTextBlockObject(slack.PlainTextType, text, true, false), nil)
	}
	overflow := slack.NewOverflowBlockElement("paged.silence", opt("paged.silence.4h", "Silence 4h"), opt("paged.silence.24h", "Silence 24h"))
	summary := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*queue full*", false, false), nil,
		slack.NewAccessory(overflow), slack.SectionBlockOptionBlockID("summary"))
	ack := slack.NewButtonBlockElement("paged.ack", "fp-1", slack.NewTextBlockObject(slack.PlainTextType, "Acknowledge", true, false))
	silence := slack.NewButtonBlockElement("paged.silence.1h", "fp-1", slack.NewTextBlockObject(slack.PlainTextType, "Silence 1h", true, false))
	return []slack.Block{summary, slack.NewActionBlock("", ack, silence)}
}

// postAlert posts an alert message with metadata to s, in process.
func postAlert(t *testing.T, s *Slack) (api *slack.Client, ts string) {
	t.Helper()
	api = slack.New(testBotToken, slack.OptionAPIURL(s.APIURL()), slack.OptionHTTPClient(&http.Client{Transport: InProcess(s)}))
	meta := slack.SlackMetadata{EventType: "paged_alert", EventPayload: map[string]any{"fingerprint": "fp-1"}}
	_, ts, err := api.PostMessage("C0ALERTS", slack.MsgOptionText("queue full", false), slack.MsgOptionBlocks(alertBlocks()...), slack.MsgOptionMetadata(meta))
	if err != nil {
		t.Fatal(err)
	}
	return api, ts
}

// A click on a button of a message the stand-in holds reads, through
// slack-go, as Slack's: every field set, the button's value and text and
// the message as posted, its blocks given block_ids.
func TestBlockActionPayloadButton(t *testing.T) {
	s := NewSlackHandler("")
	_, ts := postAlert(t, s)
	s.SetUser("U1", "alice")
	p := s.BlockActionPayload(BlockAction{
		ActionID: "paged.ack", UserID: "U1", TeamID: "T9", ChannelID: "C0ALERTS",
		MessageTS: ts, ActionTS: "1700000000.123456", ResponseURL: "https://hooks.slack.test/actions/T9/1/x",
	})
	var cb slack.InteractionCallback
	if err := json.Unmarshal(p, &cb); err != nil {
		t.Fatalf("%v in %s", err, p)
	}
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"type", cb.Type, slack.InteractionTypeBlockActions},
		{"user.id", cb.User.ID, "U1"},
		{"user.username", cb.User.Username, "alice"},
		{"user.name", cb.User.Name, "alice"},
		{"user.team_id", cb.User.TeamID, "T9"},
		{"team.id", cb.Team.ID, "T9"},
		{"team.domain", cb.Team.Domain, slackTeamDomain},
		{"api_app_id", cb.APIAppID, slackAppID},
		{"token", cb.Token, slackVerificationToken},
		{"container.type", cb.Container.Type, "message"},
		{"container.message_ts", cb.Container.MessageTs, ts},
		{"container.channel_id", cb.Container.ChannelID, "C0ALERTS"},
		{"container.is_ephemeral", cb.Container.IsEphemeral, false},
		{"trigger_id set", cb.TriggerID != "", true},
		{"channel.id", cb.Channel.ID, "C0ALERTS"},
		{"channel.name", cb.Channel.Name, "0alerts"},
		{"message.type", cb.Message.Type, "message"},
		{"message.user", cb.Message.User, slackBotUserID},
		{"message.bot_id", cb.Message.BotID, slackBotID},
		{"message.ts", cb.Message.Timestamp, ts},
		{"message.text", cb.Message.Text, "queue full"},
		{"message.blocks", len(cb.Message.Blocks.BlockSet), 2},
		{"message.metadata.event_type", cb.Message.Metadata.EventType, "paged_alert"},
		{"message.metadata.event_payload", cb.Message.Metadata.EventPayload["fingerprint"], "fp-1"},
		{"response_url", cb.ResponseURL, "https://hooks.slack.test/actions/T9/1/x"},
		{"actions", len(cb.ActionCallback.BlockActions), 1},
		{"state", cb.BlockActionState != nil, true},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
	if t.Failed() || len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("payload %s", p)
	}
	a := cb.ActionCallback.BlockActions[0]
	actions, ok := cb.Message.Blocks.BlockSet[1].(*slack.ActionBlock)
	if !ok || actions.BlockID == "" {
		t.Fatalf("second block %#v, want an actions block given a block_id", cb.Message.Blocks.BlockSet[1])
	}
	want := slack.BlockAction{Type: "button", ActionID: "paged.ack", BlockID: actions.BlockID, Value: "fp-1", ActionTs: "1700000000.123456"}
	if a.Type != want.Type || a.ActionID != want.ActionID || a.BlockID != want.BlockID || a.Value != want.Value || a.ActionTs != want.ActionTs {
		t.Errorf("action %+v, want %+v", a, want)
	}
	if a.Text.Type != "plain_text" || a.Text.Text != "Acknowledge" {
		t.Errorf("action text %+v, want the button's, Acknowledge", a.Text)
	}

	// The message is as it is now.
	if _, _, _, err := slack.New(testBotToken, slack.OptionAPIURL(s.APIURL()), slack.OptionHTTPClient(&http.Client{Transport: InProcess(s)})).
		UpdateMessage("C0ALERTS", ts, slack.MsgOptionText("acked by alice", false)); err != nil {
		t.Fatal(err)
	}
	cb = slack.InteractionCallback{}
	if err := json.Unmarshal(s.BlockActionPayload(BlockAction{ActionID: "paged.unack", ChannelID: "C0ALERTS", MessageTS: ts}), &cb); err != nil {
		t.Fatal(err)
	}
	if cb.Message.Text != "acked by alice" || len(cb.Message.Blocks.BlockSet) != 0 {
		t.Errorf("after chat.update: message %q with %d blocks, want the edit's text and no blocks", cb.Message.Text, len(cb.Message.Blocks.BlockSet))
	}
	if a := cb.ActionCallback.BlockActions[0]; a.Text.Text != "paged.unack" || cb.User.ID != "U0001" || cb.User.Username != "u0001" || cb.ActionTs != "" {
		t.Errorf("defaults: action %+v by %+v, want the action ID as text, user U0001", a, cb.User)
	}
}

// A message whose blocks hold text elements (a context block's, where
// "text" is a string, as in every paged message) before the buttons: the
// click still carries the button's value, block and label.
func TestBlockActionPayloadBesideContext(t *testing.T) {
	s := NewSlackHandler("")
	api := slack.New(testBotToken, slack.OptionAPIURL(s.APIURL()), slack.OptionHTTPClient(&http.Client{Transport: InProcess(s)}))
	status := slack.NewContextBlock("paged.status", slack.NewTextBlockObject(slack.MarkdownType, "*1 firing*", false, false))
	ack := slack.NewButtonBlockElement("paged.ack", "fp-1", slack.NewTextBlockObject(slack.PlainTextType, "Acknowledge", true, false))
	_, ts, err := api.PostMessage("C0ALERTS", slack.MsgOptionText("queue full", false), slack.MsgOptionBlocks(status, slack.NewActionBlock("paged.actions", ack)))
	if err != nil {
		t.Fatal(err)
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal(s.BlockActionPayload(BlockAction{ActionID: "paged.ack", ChannelID: "C0ALERTS", MessageTS: ts}), &cb); err != nil {
		t.Fatal(err)
	}
	if a := cb.ActionCallback.BlockActions[0]; a.Value != "fp-1" || a.BlockID != "paged.actions" || a.Text.Text != "Acknowledge" {
		t.Errorf("action %+v, want the button's value fp-1, block paged.actions and label Acknowledge", a)
	}
}

// An overflow menu's choice, and a message given by the test.
func TestBlockActionPayloadOverflow(t *testing.T) {
	s := NewSlackHandler("")
	_, ts := postAlert(t, s)
	p := s.BlockActionPayload(BlockAction{ActionID: "paged.silence", SelectedOption: "paged.silence.24h", ChannelID: "C0ALERTS", MessageTS: ts})
	var cb slack.InteractionCallback
	if err := json.Unmarshal(p, &cb); err != nil {
		t.Fatal(err)
	}
	a := cb.ActionCallback.BlockActions[0]
	if a.Type != "overflow" || a.BlockID != "summary" || a.SelectedOption.Value != "paged.silence.24h" || a.SelectedOption.Text.Text != "Silence 24h" || a.Value != "" {
		t.Errorf("action %+v, want the overflow of block summary with Silence 24h chosen", a)
	}
	since := time.Since(parseTSTime(a.ActionTs))
	if since < 0 || since > time.Minute {
		t.Errorf("action_ts %s is not now", a.ActionTs)
	}

	old := json.RawMessage(`{"type":"message","ts":"` + ts + `","text":"stale","blocks":[{"type":"actions","block_id":"b1","elements":[{"type":"button","action_id":"paged.ack","value":"fp-0","text":{"type":"plain_text","text":"Ack"}}]}]}`)
	cb = slack.InteractionCallback{}
	if err := json.Unmarshal(s.BlockActionPayload(BlockAction{ActionID: "paged.ack", ChannelID: "C0ALERTS", MessageTS: ts, Message: old}), &cb); err != nil {
		t.Fatal(err)
	}
	a = cb.ActionCallback.BlockActions[0]
	if cb.Message.Text != "stale" || a.BlockID != "b1" || a.Value != "fp-0" || a.Text.Text != "Ack" {
		t.Errorf("with a message given: message %q, action %+v; want that message's button", cb.Message.Text, a)
	}
}

func parseTSTime(ts string) time.Time { return time.UnixMicro(parseTS(ts)) }

// SignedInteraction signs as Slack does: slack-go's verifier accepts it,
// and not once a byte changed; the body is the form Slack posts.
func TestSignedInteraction(t *testing.T) {
	s := NewSlackHandler("")
	payload := s.BlockActionPayload(BlockAction{ActionID: "paged.ack", ChannelID: "C0ALERTS", MessageTS: "1.000001"})
	body, h := SignedInteraction("s3cret", payload, time.Now())
	verify := func(body string, h http.Header, secret string) error {
		sv, err := slack.NewSecretsVerifier(h, secret)
		if err != nil {
			return err
		}
		if _, err := sv.Write([]byte(body)); err != nil {
			return err
		}
		return sv.Ensure()
	}
	if err := verify(body, h, "s3cret"); err != nil {
		t.Fatalf("slack-go refuses the signature: %v", err)
	}
	for _, i := range []int{0, len(body) / 2, len(body) - 1} {
		b := []byte(body)
		b[i] ^= 1
		if verify(string(b), h, "s3cret") == nil {
			t.Errorf("body changed at %d verifies", i)
		}
	}
	if verify(body, h, "other") == nil {
		t.Error("another secret verifies")
	}
	if _, old := SignedInteraction("s3cret", payload, time.Now().Add(-time.Hour)); verify(body, old, "s3cret") == nil {
		t.Error("an hour-old timestamp verifies")
	}

	req, err := http.NewRequest(http.MethodPost, "http://paged.test/slack/interactions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	cb, err := slack.InteractionCallbackParse(req)
	if err != nil || cb.ActionCallback.BlockActions[0].ActionID != "paged.ack" {
		t.Errorf("parsed %+v, %v; want the paged.ack click", cb, err)
	}
	if h.Get("Content-Type") != "application/x-www-form-urlencoded" || !strings.HasPrefix(body, "payload=") {
		t.Errorf("body %q with Content-Type %q, want a form of payload", body[:20], h.Get("Content-Type"))
	}
	if form, _ := url.ParseQuery(body); !bytes.Equal([]byte(form.Get("payload")), payload) {
		t.Error("the form's payload is not the payload")
	}
}
