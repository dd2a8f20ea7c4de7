package history

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// notification is an event as the notifier writes it (notifier/history.go).
func notification(group, receiver, integration, outcome string, at time.Time, errText string, alerts ...notifiedAlert) Event {
	firing := 0
	var list []map[string]string
	for _, a := range alerts {
		if a.Status == "firing" {
			firing++
		}
		list = append(list, map[string]string{"fingerprint": a.Fingerprint, "alertname": a.Alertname, "status": a.Status})
	}
	d := map[string]any{"firing": firing, "resolved": len(alerts) - firing, "alerts": list}
	if errText != "" {
		d["error"] = errText
	}
	e := Event{Time: at, Type: TypeNotification, GroupKey: group, Receiver: receiver, Integration: integration, Outcome: outcome, Details: Details(d)}
	if len(alerts) == 1 {
		e.Fingerprint, e.Alertname = alerts[0].Fingerprint, alerts[0].Alertname
	}
	return e
}

func TestNoticeOf(t *testing.T) {
	fp1, fp2 := "00000000000000a1", "00000000000000b2"
	a1 := notifiedAlert{fp1, "Disk", "firing"}
	a2 := notifiedAlert{fp2, "Queue", "firing"}
	r1 := notifiedAlert{fp1, "Disk", "resolved"}
	for name, c := range map[string]struct {
		e    Event
		want string // kind receiver/integration names error
		ok   bool
	}{
		"one alert":            {notification("g", "oncall", "slack", OutcomeSent, t0, "", a1), "page oncall/slack [Disk] ", true},
		"one alert resolved":   {notification("g", "oncall", "slack", OutcomeSent, t0, "", r1), "resolved / [] ", true},
		"two alerts":           {notification("g", "oncall", "slack", OutcomeSent, t0, "", a2, r1, a1), "page oncall/slack [Queue Disk] ", true},
		"failed":               {notification("g", "oncall", "webhook", OutcomeFailed, t0, "status 500", a1), "failed oncall/webhook [] status 500", true},
		"an outcome of no use": {notification("g", "oncall", "webhook", "retried", t0, "", a1), "other / [] ", true},
		"acknowledged":         {Event{Time: t0, Type: TypeAck, GroupKey: "g", Outcome: OutcomeAcknowledged}, "ack / [] ", true},
		"no group":             {Event{Time: t0, Type: TypeAck, Outcome: OutcomeAcknowledged}, "other / [] ", true},
		"ended":                {Event{Time: t0, Type: TypeAck, GroupKey: "g", Outcome: OutcomeEnded}, "other / [] ", true},
		"an alert's event":     {alert(TypeFiring, "Disk", "a", t0), "", false},
	} {
		n, ok := NoticeOf(&c.e)
		got := ""
		if ok {
			got = fmt.Sprintf("%s %s/%s %v %s", n.Kind, n.Receiver, n.Integration, n.Alertnames, n.Error)
		}
		if ok != c.ok || got != c.want {
			t.Errorf("%s: %q %v, want %q", name, got, ok, c.want)
		}
	}
	// A page is identified by its firing alerts, whatever their order
	// and the resolved ones beside; the one-alert path, reading no JSON,
	// agrees with the other.
	one := notification("g", "r", "i", OutcomeSent, t0, "", a1)
	n1, _ := NoticeOf(&one)
	one.Fingerprint = ""
	n2, _ := NoticeOf(&one)
	mixed := notification("g", "r", "i", OutcomeSent, t0, "", r1, a2)
	n3, _ := NoticeOf(&mixed)
	both := [][]notifiedAlert{{a1, a2}, {a2, r1, a1}}
	var keys []uint64
	for _, as := range both {
		e := notification("g", "r", "i", OutcomeSent, t0, "", as...)
		n, _ := NoticeOf(&e)
		keys = append(keys, n.Alerts)
	}
	if n1.Alerts != n2.Alerts || !slices.Equal(n1.Alertnames, n2.Alertnames) || keys[0] != keys[1] || keys[0] == n1.Alerts || n3.Alerts == n1.Alerts {
		t.Errorf("alerts of pages: %x %x, %x, %x", n1.Alerts, n2.Alerts, keys, n3.Alerts)
	}
}

// Notices gives back what NoticeOf made of each event, and the events
// of the span only.
func TestNotices(t *testing.T) {
	s := open(t, Options{})
	a := notifiedAlert{"00000000000000a1", "Disk", "firing"}
	evs := []Event{
		notification("g1", "oncall", "slack", OutcomeSent, t0, "", a),
		notification("g1", "oncall", "slack", OutcomeSent, t0.Add(time.Minute), "", notifiedAlert{a.Fingerprint, a.Alertname, "resolved"}),
		notification("", "oncall", "webhook", OutcomeFailed, t0.Add(2*time.Minute), "status 502", a),
		{Time: t0.Add(3 * time.Minute), Type: TypeAck, GroupKey: "g1", Outcome: OutcomeAcknowledged, User: "ana"},
		{Time: t0.Add(4 * time.Minute), Type: TypeAck, GroupKey: "g1", Outcome: OutcomeAcknowledged, User: "bo"},
		{Time: t0.Add(5 * time.Minute), Type: TypeAck, GroupKey: "g1", Outcome: OutcomeEnded},
		notification("g2", "oncall", "slack", OutcomeSent, t0.Add(time.Hour), "", a), // after the span
		alert(TypeFiring, "Disk", "a", t0),
	}
	s.Record(evs...)
	flush(t, s)
	var got []string
	err := s.Notices(context.Background(), t0, t0.Add(30*time.Minute), func(n *Notice) error {
		got = append(got, fmt.Sprintf("%s %s %s %s/%s %v %x %s", n.Time.Sub(t0), n.Kind, n.GroupKey, n.Receiver, n.Integration, n.Alertnames, n.Alerts, n.Error))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	var want []string
	for _, e := range evs[:6] {
		n, _ := NoticeOf(&e)
		want = append(want, fmt.Sprintf("%s %s %s %s/%s %v %x %s", n.Time.Sub(t0), n.Kind, n.GroupKey, n.Receiver, n.Integration, n.Alertnames, n.Alerts, n.Error))
	}
	slices.Sort(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// CountTransitions counts each alert's firings and resolutions in the
// span, with its labels.
func TestCountTransitions(t *testing.T) {
	s := open(t, Options{})
	s.Record(
		alert(TypeFiring, "A", "a", t0.Add(-2*time.Hour)), // before the span
		alert(TypeFiring, "A", "a", t0),
		alert(TypeResolved, "A", "a", t0.Add(time.Minute)),
		alert(TypePending, "A", "a", t0.Add(90*time.Second)),
		alert(TypeFiring, "A", "a", t0.Add(2*time.Minute)),
		notification("g", "r", "i", OutcomeSent, t0.Add(3*time.Minute), "", notifiedAlert{Fingerprint(map[string]string{"alertname": "A", "instance": "a"}), "A", "firing"}),
		alert(TypeFiring, "B", "b", t0.Add(4*time.Minute)),
		alert(TypeFiring, "B", "b", t0.Add(3*time.Hour)), // after it
	)
	flush(t, s)
	ts, err := s.CountTransitions(context.Background(), t0, t0.Add(time.Hour))
	if err != nil || len(ts) != 2 {
		t.Fatalf("CountTransitions: %+v %v", ts, err)
	}
	for _, tr := range ts {
		want := map[string][2]int{"A": {2, 1}, "B": {1, 0}}[tr.Alertname]
		if [2]int{tr.Fired, tr.Resolved} != want || tr.Labels["instance"] == "" || tr.Fingerprint != Fingerprint(tr.Labels) {
			t.Errorf("%+v, want fired and resolved %v with its labels", tr, want)
		}
	}
	if ts, err := s.CountTransitions(context.Background(), t0.Add(10*time.Hour), t0.Add(11*time.Hour)); err != nil || len(ts) != 0 {
		t.Errorf("an empty span: %+v %v", ts, err)
	}
}
