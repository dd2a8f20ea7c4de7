package notifiertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// PagerDutyEvent is one Events API v2 event as PagerDuty receives it.
type PagerDutyEvent struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	DedupKey    string `json:"dedup_key"`
	Payload     *struct {
		Summary       string         `json:"summary"`
		Source        string         `json:"source"`
		Severity      string         `json:"severity"`
		CustomDetails map[string]any `json:"custom_details"`
	} `json:"payload"`
	Links []struct {
		Href string `json:"href"`
		Text string `json:"text"`
	} `json:"links"`
	Client    string `json:"client"`
	ClientURL string `json:"client_url"`
	Body      []byte `json:"-"`
}

// Incident is what PagerDuty makes of the events with one dedup key.
type Incident struct {
	DedupKey string
	Opened   int  // trigger events while the incident was not open
	Resolved bool // the last event was a resolve
	Events   []string
}

// PagerDuty stands in for the PagerDuty Events API v2
// (POST /v2/enqueue): 202 with the dedup key for a valid event, 400 with
// the problems for an invalid one, the statuses queued with Script before
// either (429 for rate limiting, 5xx). Events with the same dedup_key
// make one incident, as in PagerDuty: a trigger opens it (or is added to
// the open one), a resolve closes it.
type PagerDuty struct {
	srv       *httptest.Server
	httpCalls // its mu guards the fields below too

	events    []PagerDutyEvent
	incidents incidents
}

// NewPagerDuty starts a stand-in that stops at the end of the test.
func NewPagerDuty(t testing.TB) *PagerDuty {
	p := &PagerDuty{httpCalls: newHTTPCalls()}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the events endpoint, for pagerduty_configs' url.
func (p *PagerDuty) URL() string { return p.srv.URL + "/v2/enqueue" }

// Events returns the events accepted so far.
func (p *PagerDuty) Events() []PagerDutyEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.events)
}

// Incidents returns the incidents in the order they were first opened.
func (p *PagerDuty) Incidents() []Incident {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.incidents.list()
}

// Wait waits until cond holds on the stand-in, failing the test after
// timeout (a bail-out, not a timing assertion).
func (p *PagerDuty) Wait(t testing.TB, timeout time.Duration, cond func(*PagerDuty) bool) {
	t.Helper()
	waitFor(t, timeout, "pagerduty", &p.mu, &p.changed, func() bool { return cond(p) })
}

func (p *PagerDuty) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	status, scripted := p.received()
	w.Header().Set("Content-Type", "application/json")
	if scripted {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"status":"throttle event","message":"Requests for this service are arriving too quickly.  Please retry later."}`)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v2/enqueue" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	var ev PagerDutyEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		invalid(w, "Event object is invalid", "JSON parse error")
		return
	}
	ev.Body = body
	var errs []string
	if ev.RoutingKey == "" {
		errs = append(errs, "'routing_key' is missing or blank")
	}
	switch ev.EventAction {
	case "trigger":
		switch {
		case ev.Payload == nil:
			errs = append(errs, "'payload' is missing")
		default:
			if ev.Payload.Summary == "" {
				errs = append(errs, "'payload.summary' is missing or blank")
			}
			if ev.Payload.Source == "" {
				errs = append(errs, "'payload.source' is missing or blank")
			}
			if !slices.Contains([]string{"critical", "error", "warning", "info"}, ev.Payload.Severity) {
				errs = append(errs, "'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')")
			}
		}
	case "acknowledge", "resolve":
		if ev.DedupKey == "" {
			errs = append(errs, "'dedup_key' is missing or blank")
		}
	default:
		errs = append(errs, "'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')")
	}
	if len(errs) > 0 {
		invalid(w, "Event object is invalid", errs...)
		return
	}
	p.events = append(p.events, ev)
	switch ev.EventAction {
	case "trigger":
		p.incidents.open(ev.DedupKey, ev.EventAction)
	case "resolve":
		// PagerDuty accepts a resolve for an unknown key and drops it.
		p.incidents.close(ev.DedupKey, ev.EventAction)
	}
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "success", "message": "Event processed", "dedup_key": ev.DedupKey})
}

// incidents are what PagerDuty (or Opsgenie, the alerts by alias) makes
// of the events with one key, in the order they were first opened.
type incidents struct {
	byKey map[string]*Incident
	order []string
}

// open opens the incident of key, or adds event to the open one.
func (s *incidents) open(key, event string) {
	inc := s.byKey[key]
	if inc == nil {
		if s.byKey == nil {
			s.byKey = map[string]*Incident{}
		}
		inc = &Incident{DedupKey: key, Resolved: true}
		s.byKey[key] = inc
		s.order = append(s.order, key)
	}
	if inc.Resolved {
		inc.Opened++
	}
	inc.Resolved = false
	inc.Events = append(inc.Events, event)
}

// close resolves the incident of key; an unknown key is dropped.
func (s *incidents) close(key, event string) {
	if inc := s.byKey[key]; inc != nil {
		inc.Resolved = true
		inc.Events = append(inc.Events, event)
	}
}

func (s *incidents) list() []Incident {
	out := make([]Incident, 0, len(s.order))
	for _, k := range s.order {
		i := *s.byKey[k]
		i.Events = slices.Clone(i.Events)
		out = append(out, i)
	}
	return out
}

func invalid(w http.ResponseWriter, msg string, errs ...string) {
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "invalid event", "message": msg, "errors": errs})
}
