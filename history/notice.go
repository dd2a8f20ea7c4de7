package history

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"slices"
	"time"
)

// Kinds of notices.
const (
	// NoticePage: a notification sent with firing alerts in it.
	NoticePage = "page"
	// NoticeResolved: a notification sent with no firing alert: its group
	// resolved.
	NoticeResolved = "resolved"
	// NoticeFailed: a notification that could not be delivered.
	NoticeFailed = "failed"
	// NoticeAck: a group acknowledged.
	NoticeAck = "ack"
	// NoticeOther: any other notification or acknowledgement event (an
	// acknowledgement's end): the report counts it, no more.
	NoticeOther = "other"
)

// Notice is what the report reads of a notification or an
// acknowledgement event, without its JSON: the store keeps one beside
// each (the notices table), so that a report over a week reads a narrow
// row of numbers per page instead of every event.
type Notice struct {
	// ID is the event's.
	ID       int64
	Time     time.Time
	Kind     string
	GroupKey string
	// Receiver and Integration of a page or a failure.
	Receiver, Integration string
	// Alerts identifies a page's firing alerts: a hash of their
	// fingerprints (those the notification lists), sorted.
	Alerts uint64
	// Alertnames of a page: those of its firing alerts, each once, or the
	// event's alert name when it lists none.
	Alertnames []string
	// Error of a failure.
	Error string
}

// notificationDetails is what the notifier writes in a notification's
// details (notifier/history.go).
type notificationDetails struct {
	Firing int             `json:"firing"`
	Error  string          `json:"error"`
	Alerts []notifiedAlert `json:"alerts"`
}

type notifiedAlert struct {
	Fingerprint string `json:"fingerprint"`
	Alertname   string `json:"alertname"`
	Status      string `json:"status"`
}

// firingZero is how the notifier's details say a notification carried no
// firing alert (json.Marshal of a map: compact, no leading zeros).
var firingZero = [][]byte{[]byte(`"firing":0,`), []byte(`"firing":0}`)}

// NoticeOf is the notice of a notification or acknowledgement event;
// false for an event of another type.
func NoticeOf(e *Event) (Notice, bool) {
	n := Notice{ID: e.ID, Time: e.Time, Kind: NoticeOther, GroupKey: e.GroupKey}
	switch e.Type {
	case TypeAck:
		if e.Outcome == OutcomeAcknowledged && e.GroupKey != "" {
			n.Kind = NoticeAck
		}
		return n, true
	case TypeNotification:
	default:
		return Notice{}, false
	}
	var d notificationDetails
	if e.Outcome == OutcomeSent && e.Fingerprint != "" && e.Alertname != "" {
		// One alert, sent: its fingerprint and name are the event's, and
		// whether it fired is all the details need say.
		if !bytes.Contains(e.Details, firingZero[0]) && !bytes.Contains(e.Details, firingZero[1]) {
			d.Firing = 1
			d.Alerts = []notifiedAlert{{Fingerprint: e.Fingerprint, Alertname: e.Alertname, Status: "firing"}}
		}
	} else {
		_ = json.Unmarshal(e.Details, &d)
	}
	switch {
	case e.Outcome == OutcomeFailed:
		n.Kind, n.Receiver, n.Integration, n.Error = NoticeFailed, e.Receiver, e.Integration, d.Error
		return n, true
	case e.Outcome != OutcomeSent:
		return n, true
	case d.Firing == 0:
		n.Kind = NoticeResolved
		return n, true
	}
	n.Kind, n.Receiver, n.Integration = NoticePage, e.Receiver, e.Integration
	var fps []string
	for _, a := range d.Alerts {
		if a.Status != "firing" {
			continue
		}
		fps = append(fps, a.Fingerprint)
		if !slices.Contains(n.Alertnames, a.Alertname) {
			n.Alertnames = append(n.Alertnames, a.Alertname)
		}
	}
	if len(n.Alertnames) == 0 && e.Alertname != "" {
		n.Alertnames = []string{e.Alertname} // more alerts than the event lists: the common name
	}
	slices.Sort(fps)
	h := fnv.New64a()
	for _, fp := range fps {
		h.Write([]byte(fp))
		h.Write([]byte{','})
	}
	n.Alerts = h.Sum64()
	return n, true
}
