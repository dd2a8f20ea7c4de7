package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// limitRequests enforces web.max_request_body_bytes on every request and
// web.max_alerts_per_request on POST /api/v2/alerts. A body over the limit
// is refused with 413 before any handler sees a byte of it, so nothing of
// it is stored: a declared Content-Length is checked up front, and any
// other body is read whole (at most limit+1 bytes) and handed on from
// memory. The limits are read per request, so a reload applies them.
func (s *Server) limitRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		web := s.Config().Web
		limit := web.MaxRequestBodyBytes
		if r.ContentLength > limit {
			s.tooLarge(w, r, "body_too_large", fmt.Sprintf("request body of %d bytes is larger than web.max_request_body_bytes (%d bytes)", r.ContentLength, limit))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			// The client went away or sent a broken chunked body.
			http.Error(w, "cannot read the request body", http.StatusBadRequest)
			return
		}
		if int64(len(body)) > limit {
			s.tooLarge(w, r, "body_too_large", fmt.Sprintf("request body is larger than web.max_request_body_bytes (%d bytes)", limit))
			return
		}
		if r.Method == http.MethodPost && strings.TrimSuffix(r.URL.Path, "/") == "/api/v2/alerts" && moreElements(body, web.MaxAlertsPerRequest) {
			s.tooLarge(w, r, "too_many_alerts", fmt.Sprintf("more than web.max_alerts_per_request (%d) alerts in one request: send them in batches", web.MaxAlertsPerRequest))
			return
		}
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// tooLarge answers 413 with a short plain-text reason and counts it.
func (s *Server) tooLarge(w http.ResponseWriter, r *http.Request, reason, msg string) {
	s.metrics.rejected.WithLabelValues(reason).Inc()
	s.logger.Warn("request refused", "method", r.Method, "path", r.URL.Path, "reason", reason, "remote", r.RemoteAddr)
	// The rest of the body is not read: let the connection go rather
	// than drain it.
	w.Header().Set("Connection", "close")
	http.Error(w, msg, http.StatusRequestEntityTooLarge)
}

// moreElements reports whether body is a JSON array of more than max
// elements. It stops counting at max+1 and decodes no element. A body that
// is not an array is left to the handler to refuse.
func moreElements(body []byte, max int) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return false
	}
	var skip json.RawMessage
	for n := 0; dec.More(); n++ {
		if n == max {
			return true
		}
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}
