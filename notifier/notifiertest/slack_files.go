package notifiertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// File uploads as Slack takes them since files.upload was retired:
// files.getUploadURLExternal (filename, length) answers an upload URL
// and a file ID, the bytes are POSTed to the URL, and
// files.completeUploadExternal (files=[{"id","title"}], channel_id,
// thread_ts, initial_comment) shares the file.

// uploadPath is where upload URLs point, as Slack's
// https://files.slack.com/upload/v1/...; on the API's host, which
// slack-go requires before it sends the bot token there.
const uploadPath = "/upload/v1/"

// SlackFile is a file uploaded to the stand-in.
type SlackFile struct {
	ID      string
	Name    string // filename given to files.getUploadURLExternal
	Title   string // title given to files.completeUploadExternal
	AltText string // alt_txt
	// Length is the length declared to files.getUploadURLExternal; Bytes
	// is what arrived at the upload URL (Uploaded: anything did).
	Length   int
	Bytes    []byte
	Uploaded bool
	// Completed: files.completeUploadExternal named the file, sharing it
	// to Channel (channel_id, or channels as sent), in the thread of
	// ThreadTS if set, with InitialComment.
	Completed      bool
	Channel        string
	ThreadTS       string
	InitialComment string
}

// Files returns the files started with files.getUploadURLExternal, in
// order.
func (s *Slack) Files() []SlackFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SlackFile, 0, len(s.files))
	for _, f := range s.files {
		c := *f
		c.Bytes = slices.Clone(f.Bytes)
		out = append(out, c)
	}
	return out
}

// uploadURL answers files.getUploadURLExternal. Called with s.mu held.
func (s *Slack) uploadURL(w http.ResponseWriter, call SlackCall) {
	name := call.Form.Get("filename")
	length, err := strconv.Atoi(call.Form.Get("length"))
	if name == "" || err != nil || length <= 0 {
		s.fail(w, call, "invalid_arguments")
		return
	}
	f := &SlackFile{ID: fmt.Sprintf("F%09d", len(s.files)+1), Name: name, Length: length, AltText: call.Form.Get("alt_txt")}
	key := randomHex(16)
	s.files = append(s.files, f)
	s.upload[key] = f
	s.record(call)
	writeJSON(w, map[string]any{"ok": true, "upload_url": s.base() + uploadPath + key, "file_id": f.ID})
}

// uploadedBytes reads what was POSTed to an upload URL: the part named
// file of a multipart form (as slack-go sends it), or the whole body.
func uploadedBytes(r *http.Request, body []byte) ([]byte, error) {
	if r.Method != http.MethodPost {
		return nil, errors.New("not a POST")
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return body, nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil, fmt.Errorf("no part named file: %w", err)
		}
		if p.FormName() == "file" {
			return io.ReadAll(p)
		}
	}
}

// receiveUpload stores the bytes sent to an upload URL and answers as
// Slack does, "OK - <length>". Called with s.mu held.
func (s *Slack) receiveUpload(w http.ResponseWriter, path string, call SlackCall, data []byte) {
	key := strings.TrimPrefix(path, uploadPath)
	f, ok := s.upload[key]
	if !ok {
		call.Status = http.StatusNotFound
		s.record(call)
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	f.Bytes, f.Uploaded = data, true
	s.record(call)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "OK - %d", len(data))
}

// completeUpload answers files.completeUploadExternal: it shares the
// files named, each of which must have been started with
// files.getUploadURLExternal. Whether their bytes arrived is for the
// test to check (SlackFile.Uploaded). Called with s.mu held.
func (s *Slack) completeUpload(w http.ResponseWriter, call SlackCall) {
	var named []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(call.Form.Get("files")), &named); err != nil || len(named) == 0 {
		s.fail(w, call, "invalid_arguments")
		return
	}
	var files []*SlackFile
	for _, n := range named {
		i := slices.IndexFunc(s.files, func(f *SlackFile) bool { return f.ID == n.ID })
		if i < 0 {
			s.fail(w, call, "file_not_found")
			return
		}
		files = append(files, s.files[i])
	}
	channel := call.Form.Get("channel_id")
	if channel == "" {
		channel = call.Form.Get("channels")
	}
	out := []map[string]any{}
	for i, f := range files {
		f.Title = named[i].Title
		if f.Title == "" {
			f.Title = f.Name
		}
		f.Completed, f.Channel, f.ThreadTS = true, channel, call.ThreadTS
		f.InitialComment = call.Form.Get("initial_comment")
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	call.Channel = channel
	s.record(call)
	writeJSON(w, map[string]any{"ok": true, "files": out})
}
