package notifiertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// OpsgenieRequest is one accepted request of the Alert API.
type OpsgenieRequest struct {
	Action string // "create", "close"
	Alias  string
	Body   []byte
	// Create's fields.
	Message string            `json:"message"`
	Details map[string]string `json:"details"`
	Source  string            `json:"source"`
}

// Opsgenie stands in for the Opsgenie Alert API: POST /v2/alerts creates
// an alert (202, or 400 without a message, 401 without a GenieKey),
// POST /v2/alerts/{alias}/close?identifierType=alias closes it; the
// statuses queued with Script answer first. Alerts with the same alias
// are one alert, as Opsgenie deduplicates them.
type Opsgenie struct {
	srv       *httptest.Server
	httpCalls // its mu guards the fields below too

	reqs      []OpsgenieRequest
	incidents incidents
}

// NewOpsgenie starts a stand-in that stops at the end of the test.
func NewOpsgenie(t testing.TB) *Opsgenie {
	o := &Opsgenie{httpCalls: newHTTPCalls()}
	o.srv = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.srv.Close)
	return o
}

// URL is the API's base, for opsgenie_configs' api_url.
func (o *Opsgenie) URL() string { return o.srv.URL + "/" }

// Requests returns the requests accepted so far.
func (o *Opsgenie) Requests() []OpsgenieRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.reqs)
}

// Alerts returns Opsgenie's alerts (one per alias) in creation order.
func (o *Opsgenie) Alerts() []Incident {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.incidents.list()
}

// Wait waits until cond holds, failing the test after timeout.
func (o *Opsgenie) Wait(t testing.TB, timeout time.Duration, cond func(*Opsgenie) bool) {
	t.Helper()
	waitFor(t, timeout, "opsgenie", &o.mu, &o.changed, func() bool { return cond(o) })
}

func (o *Opsgenie) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	o.mu.Lock()
	defer o.mu.Unlock()
	status, scripted := o.received()
	w.Header().Set("Content-Type", "application/json")
	answer := func(status int, msg string) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"result": msg, "message": msg, "took": 0.01, "requestId": "00000000-0000-0000-0000-000000000000"})
	}
	if scripted {
		answer(status, http.StatusText(status))
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "GenieKey ") || len(r.Header.Get("Authorization")) == len("GenieKey ") {
		answer(http.StatusUnauthorized, "Could not authenticate")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/v2/alerts")
	switch {
	case r.Method == http.MethodPost && path == "":
		var req OpsgenieRequest
		if err := json.Unmarshal(body, &req); err != nil {
			answer(http.StatusBadRequest, "Could not parse the request")
			return
		}
		var raw struct {
			Alias string `json:"alias"`
		}
		_ = json.Unmarshal(body, &raw)
		if req.Message == "" {
			answer(http.StatusUnprocessableEntity, "Message can not be empty.")
			return
		}
		req.Action, req.Alias, req.Body = "create", raw.Alias, body
		o.reqs = append(o.reqs, req)
		o.incidents.open(req.Alias, "create")
		answer(http.StatusAccepted, "Request will be processed")
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/close"):
		alias := strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/close")
		if r.URL.Query().Get("identifierType") != "alias" {
			answer(http.StatusBadRequest, "identifierType must be alias")
			return
		}
		o.reqs = append(o.reqs, OpsgenieRequest{Action: "close", Alias: alias, Body: body})
		o.incidents.close(alias, "close")
		answer(http.StatusAccepted, "Request will be processed")
	default:
		answer(http.StatusNotFound, "Not found")
	}
}
