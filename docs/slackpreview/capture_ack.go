package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// The acknowledged message: the same alert, posted by a notifier whose
// Slack buttons act (slack_interactivity, HTTP mode), then acknowledged
// by a user pressing paged.ack.
const (
	// captureSigningSecret signs the press as Slack would; a dummy.
	captureSigningSecret = "slackpreview-not-a-real-signing-secret"
	// captureChannelID is the channel the interactive notifier posts to,
	// by ID as the documentation advises; the picture shows its name.
	captureChannelID = "C07LLMALERTS"
	// ackUserID and ackUserName are who presses Acknowledge.
	ackUserID   = "U0ANA"
	ackUserName = "ana"
)

// captureUsers are the workspace's users as the picture names them.
var captureUsers = map[string]string{ackUserID: ackUserName}

// captureAcknowledged posts the scenario's firing alert through a
// notifier with slack_interactivity in HTTP mode, sends its
// /slack/interactions handler a signed press of paged.ack by ana, as
// Slack would, and returns the message as the notifier's chat.update
// left it.
func captureAcknowledged(ctx context.Context, sc Scenario, dir string) (Message, error) {
	ev, err := evaluate(ctx, sc, dir)
	if err != nil {
		return Message{}, err
	}
	defer ev.db.Close()

	slack := notifiertest.NewSlackHandler(captureToken)
	slack.SetUser(ackUserID, ackUserName)
	n, stop, err := startNotifier(ctx, sc, slack, captureConfig(slack, captureChannelID, fmt.Sprintf(`
slack_interactivity:
  mode: http
  signing_secret: %s
`, captureSigningSecret)))
	if err != nil {
		return Message{}, err
	}
	defer stop()

	n.Notify(ctx, []*rules.Alert{ev.fired})
	calls, err := waitCalls(ctx, slack, 1)
	if err != nil {
		return Message{}, err
	}
	post := calls[0]

	payload := slack.BlockActionPayload(notifiertest.BlockAction{
		ActionID: notifier.ActionAck, UserID: ackUserID, ChannelID: captureChannelID, MessageTS: post.TS,
	})
	body, header := notifiertest.SignedInteraction(captureSigningSecret, payload, time.Now())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/slack/interactions", strings.NewReader(body))
	req.Header = header
	w := httptest.NewRecorder()
	n.SlackInteractionsHandler().ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		return Message{}, fmt.Errorf("the press of %s got %d: %s", notifier.ActionAck, w.Code, strings.TrimSpace(w.Body.String()))
	}
	calls, err = waitCalls(ctx, slack, 2)
	if err != nil {
		return Message{}, err
	}
	if update := calls[1]; update.Method != "chat.update" || update.TS != post.TS {
		return Message{}, fmt.Errorf("want the message edited after the press, got %s (ts %q)", update.Method, update.TS)
	}
	edited, ok := slack.Message(captureChannelID, post.TS)
	if !ok {
		return Message{}, errors.New("the stand-in lost the posted message")
	}
	return Message{Time: ev.fired.StartsAt, Edited: true, Text: edited.Text, Blocks: edited.Blocks}, nil
}
