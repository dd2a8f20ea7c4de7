// Package history keeps paged's event history: every alert state change,
// notification, silence, acknowledgement, reload and datasource outage,
// in one SQLite file (history.db under storage.path) that any SQLite
// tool can open.
//
// Writers hand events to a Store, which commits them in batches from
// one goroutine: every BatchSize events or every BatchInterval, and at
// once when a writer asks for a barrier (Flush) before it acts on what
// the events say. The file is in WAL mode with synchronous=NORMAL: a
// commit is one write to the WAL and no fsync, so a kill -9 loses no
// committed event (a power cut may lose the last ones). A file that
// cannot be read is moved aside as the other state files are and a new
// one started; the history never stops paging: its errors are logged and
// counted, and events that cannot be written are dropped, oldest first,
// once the queue is full.
package history

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// Event types.
const (
	// TypePending: an alert became active, waiting for its rule's for.
	TypePending = "pending"
	// TypeFiring: an alert fires.
	TypeFiring = "firing"
	// TypeResolved: a firing alert resolved.
	TypeResolved = "resolved"
	// TypeInactive: a pending alert went away before it fired.
	TypeInactive = "inactive"
	// TypeStale: the query of a firing alert's rule fails; the alert
	// keeps its state, marked stale.
	TypeStale = "stale"
	// TypeFresh: the rule of a stale alert is answered again.
	TypeFresh = "fresh"
	// TypeNotification: a notification of a group to one integration of
	// a receiver, with its outcome (sent or failed).
	TypeNotification = "notification"
	// TypeSilence: a silence was created, updated or expired.
	TypeSilence = "silence"
	// TypeAck: an alert group was acknowledged (outcome acknowledged) or
	// its acknowledgement ended (outcome ended).
	TypeAck = "ack"
	// TypeReload: the configuration was reloaded (outcome success or
	// failure).
	TypeReload = "reload"
	// TypeDatasource: the datasource stopped answering (outcome down) or
	// answers again (outcome up).
	TypeDatasource = "datasource"
)

// Types lists every event type, for validating user input.
var Types = []string{
	TypePending, TypeFiring, TypeResolved, TypeInactive, TypeStale, TypeFresh,
	TypeNotification, TypeSilence, TypeAck, TypeReload, TypeDatasource,
}

// Outcomes of events.
const (
	OutcomeSent         = "sent"
	OutcomeFailed       = "failed"
	OutcomeCreated      = "created"
	OutcomeUpdated      = "updated"
	OutcomeExpired      = "expired"
	OutcomeAcknowledged = "acknowledged"
	OutcomeEnded        = "ended"
	OutcomeSuccess      = "success"
	OutcomeFailure      = "failure"
	OutcomeDown         = "down"
	OutcomeUp           = "up"
)

// Event is one row of the history. Time and Type are required; the other
// fields are set where they apply (Labels for events about an alert,
// Receiver and Integration for notifications, User for what a person
// did). Details holds what is particular to the type, as a JSON object.
type Event struct {
	// ID orders events recorded at the same time; set by the store.
	ID        int64     `json:"id,omitempty"`
	Time      time.Time `json:"time"`
	Type      string    `json:"type"`
	Alertname string    `json:"alertname,omitempty"`
	// Fingerprint names the one alert the event is about, as Fingerprint
	// writes it; the store derives it from the labels of an alert's state
	// change. An event recorded with a fingerprint and no labels is read
	// back with its alert's labels when the history knows them.
	Fingerprint string            `json:"fingerprint,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	GroupKey    string            `json:"group_key,omitempty"`
	Receiver    string            `json:"receiver,omitempty"`
	Integration string            `json:"integration,omitempty"`
	Outcome     string            `json:"outcome,omitempty"`
	User        string            `json:"user,omitempty"`
	Details     json.RawMessage   `json:"details,omitempty"`
}

// Fingerprint returns the fingerprint of a label set as Alertmanager
// writes it (16 hex digits), the one the engine and the notifier agree
// on.
func Fingerprint(ls map[string]string) string {
	return fmt.Sprintf("%016x", model.LabelsToSignature(ls))
}

// Details encodes v as an event's details; nil when it cannot (a map of
// plain values always can).
func Details(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// normalize fills the alert name an event can take from its labels. The
// writer derives the fingerprint of an alert's state change from them.
func (e *Event) normalize() {
	if e.Alertname == "" && e.Labels != nil {
		e.Alertname = e.Labels[model.AlertNameLabel]
	}
}
