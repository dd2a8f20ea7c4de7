//go:build reliability

package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
)

// pagerDuty is the PagerDuty Events v2 stand-in behind a fault switch:
// requests that pass the switch go to the stand-in, which validates them
// and keeps the incidents; the events it accepts are recorded with the
// time they arrived.
type pagerDuty struct {
	*notifiertest.PagerDuty
	faults *faulty
	srv    *httptest.Server

	mu       sync.Mutex
	accepted []pdAccepted
}

type pdAccepted struct {
	at   time.Time
	body []byte
}

func newPagerDuty(t *testing.T) *pagerDuty {
	p := &pagerDuty{PagerDuty: notifiertest.NewPagerDuty(t)}
	p.faults = &faulty{next: http.HandlerFunc(p.forward)}
	p.srv = httptest.NewServer(p.faults)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pagerDuty) forward(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	resp, err := http.Post(p.PagerDuty.URL(), "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusAccepted {
		p.mu.Lock()
		p.accepted = append(p.accepted, pdAccepted{at: time.Now(), body: body})
		p.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// config is a pagerduty_configs entry for the receiver of notifierConfig.
func (p *pagerDuty) config() string {
	return fmt.Sprintf(`      pagerduty_configs:
        - routing_key: reliability
          url: %s/v2/enqueue
`, p.srv.URL)
}

// deliveries returns the notifications about episodes: a trigger is a
// firing one, a resolve a resolved one, the episode read from the
// alerts' summaries in custom_details.
func (p *pagerDuty) deliveries() []delivery {
	p.mu.Lock()
	acc := append([]pdAccepted(nil), p.accepted...)
	p.mu.Unlock()
	var out []delivery
	for _, a := range acc {
		var ev struct {
			EventAction string `json:"event_action"`
			Payload     struct {
				CustomDetails struct {
					Firing   []hookAlert `json:"firing"`
					Resolved []hookAlert `json:"resolved"`
				} `json:"custom_details"`
			} `json:"payload"`
		}
		if json.Unmarshal(a.body, &ev) != nil {
			continue
		}
		alerts, status := ev.Payload.CustomDetails.Firing, "firing"
		if ev.EventAction == "resolve" {
			alerts, status = ev.Payload.CustomDetails.Resolved, "resolved"
		}
		for _, al := range alerts {
			in, id := episodeOf(al.Annotations["summary"])
			if id < 0 {
				continue
			}
			out = append(out, delivery{instance: in, ep: id, status: status, at: a.at})
		}
	}
	return out
}
