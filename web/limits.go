package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// limitRequests bounds what a request body may cost before any handler
// sees a byte of it. The limits are read per request, so a reload applies
// them.
//
//   - GET, HEAD, DELETE and OPTIONS take no body: one that comes with a
//     body gets 413 at once, nothing of it read, and the connection is
//     closed.
//   - A body larger than web.max_request_body_bytes gets 413: a declared
//     Content-Length is checked up front, a chunked body as it arrives.
//   - The bodies held for all the requests being read and served at once
//     stay within web.max_request_bytes_in_flight: a body that would go
//     past it gets 503 with Retry-After, before it is read (a declared
//     length) or as soon as it outgrows what was left (chunked).
//   - A body must arrive within web.read_timeout of the request reaching
//     the handlers (bodyDeadline sets the connection's read deadline);
//     one still arriving then gets 408 and its connection is closed.
//   - POST /api/v2/alerts with more than web.max_alerts_per_request
//     alerts gets 413.
//
// A body that passes is read whole into memory and handed on from there
// (heldBody), so the handler reads nothing from the network.
func (h *Handler) limitRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasBody(r) {
			next.ServeHTTP(w, r)
			return
		}
		web := h.Config().Web
		if !takesBody(r.Method) {
			h.refuse(w, r, http.StatusRequestEntityTooLarge, "body_not_allowed", fmt.Sprintf("%s requests take no body: send it without one", r.Method))
			return
		}
		limit := web.MaxRequestBodyBytes
		if r.ContentLength > limit {
			h.refuse(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body of %d bytes is larger than web.max_request_body_bytes (%d bytes)", r.ContentLength, limit))
			return
		}
		body, held, err := h.readBody(r, limit, web.MaxRequestBytesInFlight)
		defer h.inFlight.give(held)
		switch {
		case errors.Is(err, errBodyTooLarge):
			h.refuse(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body is larger than web.max_request_body_bytes (%d bytes)", limit))
			return
		case errors.Is(err, errInFlight):
			w.Header().Set("Retry-After", "1")
			h.refuse(w, r, http.StatusServiceUnavailable, "bytes_in_flight", fmt.Sprintf("paged already holds web.max_request_bytes_in_flight (%d bytes) of request bodies: retry later", web.MaxRequestBytesInFlight))
			return
		case isTimeout(err):
			h.refuse(w, r, http.StatusRequestTimeout, "body_timeout", fmt.Sprintf("the request body did not arrive within web.read_timeout (%v)", web.ReadTimeout))
			return
		case err != nil:
			// The client went away or sent a broken chunked body.
			h.refuse(w, r, http.StatusBadRequest, "body_unreadable", "cannot read the request body")
			return
		}
		// The whole body is here: the handler and the connection's
		// background read (which notices a client that leaves) need no
		// read deadline any more.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		if r.Method == http.MethodPost && strings.TrimSuffix(r.URL.Path, "/") == "/api/v2/alerts" && moreElements(body, web.MaxAlertsPerRequest) {
			h.refuse(w, r, http.StatusRequestEntityTooLarge, "too_many_alerts", fmt.Sprintf("more than web.max_alerts_per_request (%d) alerts in one request: send them in batches", web.MaxAlertsPerRequest))
			return
		}
		_ = r.Body.Close()
		r.Body = &heldBody{Reader: bytes.NewReader(body), b: body}
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// bodyDeadline gives a request that comes with a body web.read_timeout to
// deliver it: the connection's read deadline, which limitRequests clears
// once the body is read. It runs before the bearer check, so that a body
// refused unread cannot hold its connection open either.
func (h *Handler) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hasBody(r) {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.Config().Web.ReadTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

func hasBody(r *http.Request) bool { return r.Body != nil && r.Body != http.NoBody }

// takesBody reports whether requests of method may carry a body: the
// endpoints that take one are POST (alerts, silences, reload, the query
// API's forms) and PUT (reload).
func takesBody(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return true
	}
	return false
}

var (
	errBodyTooLarge = errors.New("request body too large")
	errInFlight     = errors.New("too many request bytes in flight")
)

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// readBody reads r's body, at most limit bytes, into memory it first takes
// from the in-flight budget (of budget bytes). held is what it took, to give
// back when the request is done, whatever the error.
func (h *Handler) readBody(r *http.Request, limit, budget int64) (body []byte, held int64, err error) {
	if r.ContentLength >= 0 {
		if !h.inFlight.take(r.ContentLength, budget) {
			return nil, 0, errInFlight
		}
		held = r.ContentLength
		body = make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, held, err
		}
		return body, held, nil
	}
	// Chunked: grow the buffer as the body arrives, taking each growth
	// from the budget first.
	const first = 64 << 10
	for {
		if len(body) == cap(body) {
			size := min(max(first, 2*int64(cap(body))), limit+1)
			if size <= int64(cap(body)) {
				return nil, held, errBodyTooLarge
			}
			if !h.inFlight.take(size-held, budget) {
				return nil, held, errInFlight
			}
			held = size
			grown := make([]byte, len(body), size)
			copy(grown, body)
			body = grown
		}
		n, err := r.Body.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if int64(len(body)) > limit {
			return nil, held, errBodyTooLarge
		}
		if errors.Is(err, io.EOF) {
			return body, held, nil
		}
		if err != nil {
			return nil, held, err
		}
	}
}

// heldBody is a request body read whole by limitRequests: handlers that
// want the bytes take them without copying.
type heldBody struct {
	*bytes.Reader
	b []byte
}

func (*heldBody) Close() error { return nil }

// bytesInFlight is the budget of web.max_request_bytes_in_flight: the
// bytes of request bodies held at once, over every connection.
type bytesInFlight struct {
	mu   sync.Mutex
	used int64
}

// take reserves n bytes if that keeps the total within max.
func (b *bytesInFlight) take(n, max int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > max {
		return false
	}
	b.used += n
	return true
}

func (b *bytesInFlight) give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

func (b *bytesInFlight) load() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// refuse answers code with a short plain-text reason, counts it by reason
// and logs it. The rest of the body, if any, is not read: the connection
// is closed rather than drained.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, code int, reason, msg string) {
	h.metrics.rejected.WithLabelValues(reason).Inc()
	h.logger.Warn("request refused", "method", r.Method, "path", r.URL.Path, "status", code, "reason", reason, "remote", r.RemoteAddr)
	leaveBody(w, r)
	http.Error(w, msg, code)
}

// leaveBody makes an answer given without reading the body the last one
// on its connection: net/http would otherwise read on (up to 256 KiB) to
// reuse the connection, waiting for a client that may never send it.
func leaveBody(w http.ResponseWriter, r *http.Request) {
	if _, read := r.Body.(*heldBody); read || !hasBody(r) {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
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
