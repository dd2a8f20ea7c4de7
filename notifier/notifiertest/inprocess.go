package notifiertest

import (
	"net/http"
	"net/http/httptest"
)

// InProcess is an http.RoundTripper that serves every request with h in
// the calling goroutine, without a network: give it to
// notifier.Options.Transport to run the notifier inside testing/synctest.
func InProcess(h http.Handler) http.RoundTripper { return inProcess{h} }

type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
