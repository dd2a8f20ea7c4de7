package demo

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// maxWebhookBody bounds one notification the sink accepts.
const maxWebhookBody = 1 << 20

// webhookMessage is the part of Alertmanager's version 4 webhook payload
// that the sink reads.
type webhookMessage struct {
	Version  string `json:"version"`
	Receiver string `json:"receiver"`
	Status   string `json:"status"`
	Alerts   []struct {
		Status string            `json:"status"`
		Labels map[string]string `json:"labels"`
	} `json:"alerts"`
}

// labelKey identifies an alert by its label set.
func labelKey(ls map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(ls[k])
		b.WriteByte(0)
	}
	return b.String()
}

// webhookSink is the demo's stand-in for a team's webhook receiver: it
// accepts Alertmanager v4 payloads on POST and reports each to the console,
// proving that the engine's alerts went through the notifier's routing,
// grouping and delivery.
func webhookSink(c *console) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST an Alertmanager webhook payload", http.StatusMethodNotAllowed)
			return
		}
		var m webhookMessage
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxWebhookBody)).Decode(&m); err != nil {
			http.Error(w, "bad webhook payload: "+err.Error(), http.StatusBadRequest)
			return
		}
		if m.Version != "4" {
			http.Error(w, "unsupported webhook payload version "+m.Version+" (want 4)", http.StatusBadRequest)
			return
		}
		alerts := make([]sinkAlert, 0, len(m.Alerts))
		for _, a := range m.Alerts {
			alerts = append(alerts, sinkAlert{Name: a.Labels["alertname"], Key: labelKey(a.Labels), Status: a.Status})
		}
		c.webhook(m.Receiver, m.Status, alerts)
		w.WriteHeader(http.StatusOK)
	})
}
