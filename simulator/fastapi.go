package simulator

// fastapiHTTP is prometheus-fastapi-instrumentator's default metric set, as
// vLLM's OpenAI server mounts it (status codes grouped as 2xx/4xx/5xx).
type fastapiHTTP struct {
	requests, reqSize, respSize, highr, duration *family
}

func newFastapiHTTP(l *familyList) *fastapiHTTP {
	return &fastapiHTTP{
		requests: l.counter("http_requests_total", "Total number of requests by method, status and handler.", "method", "status", "handler"),
		reqSize:  l.summary("http_request_size_bytes", "Content length of incoming requests by handler. Only value of header is respected. Otherwise ignored. No percentile calculated. ", nil, "handler"),
		respSize: l.summary("http_response_size_bytes", "Content length of outgoing responses by handler. Only value of header is respected. Otherwise ignored. No percentile calculated. ", nil, "handler"),
		highr:    l.histogram("http_request_duration_highr_seconds", "Latency with many buckets but no API specific labels. Made for more accurate percentile calculations. ", fastapiHighR),
		duration: l.histogram("http_request_duration_seconds", "Latency with only few buckets by handler. Made to be only used if aggregation by handler is important. ", fastapiLowR, "method", "handler"),
	}
}

func (h *fastapiHTTP) record(s *step) {
	if s.cond.hung {
		// A hung engine answers nothing; the clients give up after their
		// timeout (60 s here). The instrumentator records a request when
		// its response ends, with the status it started with: a stream
		// has sent 200 already, and vLLM answers a non-streamed request
		// whose client left with 200 (with_cancellation returns None).
		// At a steady arrival rate as many give up per step as arrive.
		for range s.arrivals {
			h.requests.with(s.now, "POST", "2xx", "/v1/chat/completions").value++
			h.highr.observe(h.highr.with(s.now), 60, 1)
			h.duration.observe(h.duration.with(s.now, "POST", "/v1/chat/completions"), 60, 1)
		}
	}
	for _, r := range s.finished {
		h.requests.with(s.now, "POST", r.status, r.handler).value++
		h.reqSize.observe(h.reqSize.with(s.now, r.handler), 4*r.prompt+180, 1)
		d := r.e2e
		resp := 4*r.gen + 300
		if r.status != "2xx" {
			d, resp = 0.002+r.ttft/10, 120
		}
		h.respSize.observe(h.respSize.with(s.now, r.handler), resp, 1)
		h.highr.observe(h.highr.with(s.now), d, 1)
		h.duration.observe(h.duration.with(s.now, "POST", r.handler), d, 1)
	}
}
