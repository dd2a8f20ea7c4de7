package notifiertest

import (
	"net/http"
	"strings"
	"testing"
)

// TestSlackWebhookAttachments posts what Alertmanager 0.25's slack_configs
// send to an incoming webhook: no top-level text, the content in a legacy
// attachment. The stand-in records the attachment; a body that is not
// JSON is refused.
func TestSlackWebhookAttachments(t *testing.T) {
	s := NewSlack(t, "")
	body := `{"channel":"#alerts","username":"Alertmanager","attachments":[{"title":"firing","text":"queue on storm-007 is 12 ","fallback":"[FIRING:1] SlackStorm","color":"danger","mrkdwn_in":["fallback","pretext","text"]}]}`
	resp, err := http.Post(s.WebhookURL("secret"), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	resp, err = http.Post(s.WebhookURL("secret"), "application/json", strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: status %d, want 400", resp.StatusCode)
	}
	calls := s.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls recorded, want 1: %+v", len(calls), calls)
	}
	c := calls[0]
	want := SlackAttachment{Title: "firing", Text: "queue on storm-007 is 12 ", Fallback: "[FIRING:1] SlackStorm", Color: "danger"}
	if c.Method != "webhook" || c.Text != "" || len(c.Attachments) != 1 || c.Attachments[0] != want {
		t.Errorf("recorded %+v, want a webhook call with attachment %+v", c, want)
	}
}
