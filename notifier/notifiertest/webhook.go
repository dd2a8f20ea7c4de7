package notifiertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// WebhookRequest is one request received by a Sink.
type WebhookRequest struct {
	At     time.Time
	Path   string
	Header http.Header
	Body   []byte
}

// Sink is a webhook receiver that records every request and answers 200,
// or the statuses queued with Script.
type Sink struct {
	srv *httptest.Server

	mu      sync.Mutex
	reqs    []WebhookRequest
	script  []int
	changed chan struct{}
}

// NewSink starts a sink that stops at the end of the test.
func NewSink(t testing.TB) *Sink {
	s := &Sink{changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// NewSinkServer starts a sink without a test (for benchmarks); call Close.
func NewSinkServer() *Sink {
	s := &Sink{changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the sink.
func (s *Sink) Close() { s.srv.Close() }

// URL is the sink's base URL; any path is accepted.
func (s *Sink) URL() string { return s.srv.URL }

// Script queues HTTP statuses for the next requests.
func (s *Sink) Script(status ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, status...)
}

// Requests returns the requests received so far.
func (s *Sink) Requests() []WebhookRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]WebhookRequest(nil), s.reqs...)
}

// Changed returns a channel closed at the next request.
func (s *Sink) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Wait waits until n requests were received, failing the test after
// timeout (a bail-out, not a timing assertion).
func (s *Sink) Wait(t testing.TB, n int, timeout time.Duration) []WebhookRequest {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if len(s.reqs) >= n {
			r := append([]WebhookRequest(nil), s.reqs...)
			s.mu.Unlock()
			return r
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("webhook sink: got %d requests, want %d", len(s.Requests()), n)
		}
	}
}

func (s *Sink) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, WebhookRequest{At: time.Now(), Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	status := http.StatusOK
	if len(s.script) > 0 {
		status, s.script = s.script[0], s.script[1:]
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	w.WriteHeader(status)
}
