package notifiertest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func chartPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// slack-go's UploadFileContext (UploadFileV2 before v0.36) against the
// stand-in over a socket: the PNG's bytes arrive at the upload URL and
// the file is shared in the alert's thread.
func TestUploadFile(t *testing.T) {
	s := NewSlack(t, testBotToken)
	api := slack.New(testBotToken, slack.OptionAPIURL(s.APIURL()))
	_, ts, err := api.PostMessage("C0ALERTS", slack.MsgOptionText("queue full", false))
	if err != nil {
		t.Fatal(err)
	}
	chart := chartPNG(t)
	f, err := api.UploadFileContext(t.Context(), slack.UploadFileParameters{
		Reader: bytes.NewReader(chart), FileSize: len(chart), Filename: "queue.png",
		Title: "Queue depth", AltTxt: "queue depth, last hour", Channel: "C0ALERTS", ThreadTimestamp: ts,
	})
	if err != nil {
		t.Fatal(err)
	}
	files := s.Files()
	if len(files) != 1 {
		t.Fatalf("files %+v, want 1", files)
	}
	got := files[0]
	want := SlackFile{ID: f.ID, Name: "queue.png", Title: "Queue depth", AltText: "queue depth, last hour", Length: len(chart),
		Uploaded: true, Completed: true, Channel: "C0ALERTS", ThreadTS: ts}
	if !bytes.Equal(got.Bytes, chart) {
		t.Errorf("received %d bytes, want the %d of the PNG", len(got.Bytes), len(chart))
	}
	got.Bytes = nil
	if !reflect.DeepEqual(got, want) || f.Title != "Queue depth" {
		t.Errorf("file %+v (answered %+v), want %+v", got, f, want)
	}
	var methods []string
	for _, c := range s.Calls() {
		methods = append(methods, c.Method)
	}
	if strings.Join(methods, " ") != "chat.postMessage files.getUploadURLExternal upload files.completeUploadExternal" {
		t.Errorf("calls %v", methods)
	}
	if c := s.Calls()[2]; c.Token != testBotToken || !c.TokenInHeader {
		t.Errorf("upload call %+v, want the bot token as slack-go sends it", c)
	}
	if _, ok := s.Message("C0ALERTS", ts); !ok {
		t.Error("the alert is gone")
	}
}

// The upload's steps fail as scripted, and a failed step stops slack-go's
// upload.
func TestUploadFileScripted(t *testing.T) {
	s := NewSlack(t, testBotToken)
	api := slack.New(testBotToken, slack.OptionAPIURL(s.APIURL()))
	chart := chartPNG(t)
	params := slack.UploadFileParameters{Reader: bytes.NewReader(chart), FileSize: len(chart), Filename: "queue.png", Channel: "C0ALERTS"}

	s.Script(SlackReply{Method: "files.completeUploadExternal", Error: "not_in_channel"})
	if _, err := api.UploadFileContext(t.Context(), params); err == nil || !strings.Contains(err.Error(), "not_in_channel") {
		t.Errorf("scripted completeUploadExternal: %v, want not_in_channel", err)
	}
	if f := s.Files(); len(f) != 1 || !f[0].Uploaded || f[0].Completed {
		t.Errorf("files %+v, want one uploaded, not completed", f)
	}

	s.Script(SlackReply{Method: "upload", Status: http.StatusInternalServerError})
	params.Reader = bytes.NewReader(chart)
	if _, err := api.UploadFileContext(t.Context(), params); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("scripted upload failure: %v, want a 500", err)
	}
	s.Script(SlackReply{Method: "files.getUploadURLExternal", Status: http.StatusTooManyRequests, RetryAfter: 3})
	params.Reader = bytes.NewReader(chart)
	if _, err := api.UploadFileContext(t.Context(), params); err == nil || !strings.Contains(err.Error(), "rate limit") {
		t.Errorf("scripted getUploadURLExternal 429: %v, want rate limited", err)
	}
	if n := countCalls(s, "files.completeUploadExternal"); n != 1 {
		t.Errorf("%d files.completeUploadExternal calls, want only the first upload's", n)
	}
	if f := s.Files(); len(f) != 2 || f[1].Uploaded {
		t.Errorf("files %+v, want a second one whose bytes did not arrive", f)
	}

	if _, err := api.CompleteUploadExternalContext(t.Context(), slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: "F999"}}, Channel: "C0ALERTS",
	}); err == nil || err.Error() != "file_not_found" {
		t.Errorf("completing a file never started: %v, want file_not_found", err)
	}
	if _, err := api.GetUploadURLExternalContext(t.Context(), slack.GetUploadURLExternalParameters{FileName: "x.png", FileSize: -1}); err == nil || err.Error() != "invalid_arguments" {
		t.Errorf("a negative length: %v, want invalid_arguments", err)
	}
}
