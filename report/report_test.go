package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/history"
)

// Monday 2 March 2026, 10:00 UTC.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func store(t *testing.T, evs ...history.Event) *history.Store {
	t.Helper()
	s, err := history.Open(history.Options{Path: filepath.Join(t.TempDir(), history.FileName), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Record(evs...)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func alertEv(typ, name, inst string, at time.Time) history.Event {
	return history.Event{Time: at, Type: typ, Labels: map[string]string{"alertname": name, "instance": inst}}
}

func notif(group, receiver, integration, outcome string, at time.Time, firing map[string]string, errText string) history.Event {
	var alerts []map[string]string
	for fp, name := range firing {
		alerts = append(alerts, map[string]string{"fingerprint": fp, "alertname": name, "status": "firing"})
	}
	d := map[string]any{"firing": len(firing), "resolved": 0, "alerts": alerts}
	if errText != "" {
		d["error"] = errText
	}
	if len(firing) == 0 {
		d["resolved"] = 1
	}
	return history.Event{Time: at, Type: history.TypeNotification, GroupKey: group, Receiver: receiver, Integration: integration,
		Outcome: outcome, Details: history.Details(d)}
}

func TestBuild(t *testing.T) {
	m := func(d time.Duration) time.Time { return t0.Add(d) }
	flappy := map[string]string{"f1": "Flappy"}
	var evs []history.Event
	// Flappy fires and resolves 5 times, paged each time: at 10:00 (working
	// hours) and then at 22:00 onwards (outside).
	for i := range 5 {
		at := m(time.Duration(i) * time.Hour)
		if i > 0 {
			at = m(12*time.Hour + time.Duration(i)*time.Minute*10)
		}
		evs = append(evs, alertEv(history.TypeFiring, "Flappy", "a", at),
			notif("{}:{alertname=\"Flappy\"}", "oncall", "slack", history.OutcomeSent, at.Add(time.Second), flappy, ""),
			alertEv(history.TypeResolved, "Flappy", "a", at.Add(2*time.Minute)),
			notif("{}:{alertname=\"Flappy\"}", "oncall", "slack", history.OutcomeSent, at.Add(2*time.Minute+time.Second), nil, ""))
	}
	// Disk fires once, paged to two integrations of one receiver; the
	// second member of the pair recorded the same page: one page.
	disk := map[string]string{"d1": "Disk"}
	evs = append(evs, alertEv(history.TypeFiring, "Disk", "b", m(time.Minute)),
		notif("g-disk", "storage", "slack", history.OutcomeSent, m(time.Minute+time.Second), disk, ""),
		notif("g-disk", "storage", "pagerduty", history.OutcomeSent, m(time.Minute+2*time.Second), disk, ""),
		notif("g-disk", "storage", "webhook", history.OutcomeFailed, m(time.Minute+2*time.Second), disk, "unexpected status code 500"),
		notif("g-disk", "storage", "webhook", history.OutcomeFailed, m(time.Minute+3*time.Second), disk, "unexpected status code 502"),
		// acknowledged 4 minutes after the page
		history.Event{Time: m(5*time.Minute + time.Second), Type: history.TypeAck, GroupKey: "g-disk", Outcome: history.OutcomeAcknowledged, User: "bob"},
	)
	// The first Flappy page is acknowledged after 30s; the others never.
	evs = append(evs, history.Event{Time: m(31 * time.Second), Type: history.TypeAck, GroupKey: "{}:{alertname=\"Flappy\"}", Outcome: history.OutcomeAcknowledged, User: "alice"})
	// Silences: alice twice (1h and 2h), bob once for 1d expired early.
	sil := func(id, user, outcome string, start time.Time, d time.Duration) history.Event {
		kind := "silenceCreated"
		if outcome != history.OutcomeCreated {
			kind = "silenceUpdated"
		}
		body, _ := json.Marshal(map[string]any{kind: map[string]any{"silence": map[string]any{"id": id, "startsAt": start, "endsAt": start.Add(d), "createdBy": user}}})
		return history.Event{Time: start, Type: history.TypeSilence, Outcome: outcome, User: user, Details: body}
	}
	evs = append(evs, sil("s1", "alice", history.OutcomeCreated, m(time.Hour), time.Hour),
		sil("s2", "alice", history.OutcomeCreated, m(2*time.Hour), 2*time.Hour),
		sil("s3", "bob", history.OutcomeCreated, m(3*time.Hour), 24*time.Hour),
		sil("s3", "bob", history.OutcomeExpired, m(3*time.Hour), 30*time.Minute))
	a := store(t, evs...)
	// The other member of the pair: the same Disk page a few seconds later.
	b := store(t, notif("g-disk", "storage", "slack", history.OutcomeSent, m(time.Minute+5*time.Second), disk, ""))

	r, err := Build(context.Background(), Options{From: m(-time.Hour), To: m(24 * time.Hour), FlappingThreshold: 3}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Pages != 6 || r.PagesOutsideHours != 4 {
		t.Errorf("pages %d, outside hours %d; want 6 and 4", r.Pages, r.PagesOutsideHours)
	}
	if len(r.Noisiest) != 2 || r.Noisiest[0].Alertname != "Flappy" || r.Noisiest[0].Pages != 5 || r.Noisiest[1].Alertname != "Disk" || r.Noisiest[1].Pages != 1 {
		t.Errorf("noisiest %+v", r.Noisiest)
	}
	if len(r.Flapping) != 1 || r.Flapping[0].Alertname != "Flappy" || r.Flapping[0].Fired != 5 || r.Flapping[0].Labels["instance"] != "a" {
		t.Errorf("flapping %+v", r.Flapping)
	}
	ack := r.Acknowledgement
	if ack.Acknowledged != 2 || ack.Never != 4 || time.Duration(ack.Median) != 30*time.Second || time.Duration(ack.P90) != 4*time.Minute {
		t.Errorf("acknowledgement %+v", ack)
	}
	if len(ack.NeverAlerts) != 0 {
		t.Errorf("never acknowledged alerts %v, want none (both had one acknowledged page)", ack.NeverAlerts)
	}
	if len(r.Receivers) != 2 || r.Receivers[0] != (ReceiverStats{Receiver: "oncall", Pages: 5, PagesOutsideHours: 4}) ||
		r.Receivers[1] != (ReceiverStats{Receiver: "storage", Pages: 1, Failures: 2}) {
		t.Errorf("receivers %+v", r.Receivers)
	}
	if len(r.Failures) != 1 || r.Failures[0].Failures != 2 || r.Failures[0].Integration != "webhook" || r.Failures[0].LastError != "unexpected status code 502" {
		t.Errorf("failures %+v", r.Failures)
	}
	if len(r.Silences) != 2 || r.Silences[0] != (SilenceStats{User: "alice", Created: 2, Total: Duration(3 * time.Hour), Longest: Duration(2 * time.Hour)}) ||
		r.Silences[1] != (SilenceStats{User: "bob", Created: 1, Total: Duration(30 * time.Minute), Longest: Duration(30 * time.Minute), Expired: 1}) {
		t.Errorf("silences %+v", r.Silences)
	}

	// Working hours in another zone: 10:00 UTC is 19:00 in Tokyo.
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	r2, err := Build(context.Background(), Options{From: m(-time.Hour), To: m(24 * time.Hour), Location: tokyo}, a)
	if err != nil {
		t.Fatal(err)
	}
	if r2.PagesOutsideHours != 6 {
		t.Errorf("in Tokyo %d pages outside hours, want 6", r2.PagesOutsideHours)
	}

	var text, js, page bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"6 pages, 4 outside working hours", "  Flappy  5", "median 30s, p90 4m0s", "alice", "unexpected status code 502"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back["pages"] != 6.0 || back["acknowledgement"].(map[string]any)["median"] != 30.0 {
		t.Errorf("JSON %v: %s", err, js.String())
	}
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<b id="pages">6</b>`, "<td>Flappy</td><td class=\"n\">5</td>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	for _, forbidden := range []string{"<script", "src=", "href="} {
		if strings.Contains(page.String(), forbidden) {
			t.Errorf("HTML is not self-contained: %q", forbidden)
		}
	}
}

func TestBuildValidates(t *testing.T) {
	for _, o := range []Options{
		{},
		{From: t0, To: t0},
		{From: t0, To: t0.Add(time.Hour), WorkStart: 20 * time.Hour, WorkEnd: 8 * time.Hour},
		{From: t0, To: t0.Add(time.Hour), FlappingThreshold: -1},
	} {
		if _, err := Build(context.Background(), o); err == nil {
			t.Errorf("Build(%+v) accepted", o)
		}
	}
}

// A group that fires again seconds after it resolved is paged again: the
// same integration of the same member delivering the same alerts within
// the window is another page, not a copy.
func TestPagedAgainWithinTheWindow(t *testing.T) {
	fl := map[string]string{"f1": "Flappy"}
	s := store(t,
		notif("g", "oncall", "webhook", history.OutcomeSent, t0, fl, ""),
		notif("g", "oncall", "webhook", history.OutcomeSent, t0.Add(3*time.Second), nil, ""),
		notif("g", "oncall", "webhook", history.OutcomeSent, t0.Add(6*time.Second), fl, ""),
		notif("g", "oncall", "email", history.OutcomeSent, t0.Add(7*time.Second), fl, ""))
	r, err := Build(context.Background(), Options{From: t0.Add(-time.Hour), To: t0.Add(time.Hour)}, s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Pages != 2 {
		t.Errorf("%d pages, want 2 (the email is the second page's copy)", r.Pages)
	}
}

// queryOnly hides a store's Scanner: Build reads its events one by one,
// as from a running paged's API.
type queryOnly struct{ s *history.Store }

func (q queryOnly) Query(ctx context.Context, hq history.Query) (history.Page, error) {
	return q.s.Query(ctx, hq)
}

// randomEvents are a few hours of what paged records, drawn at random:
// alerts firing and resolving, pages of one or several alerts to several
// integrations, resolutions, failures, acknowledgements and their ends,
// silences, at times that often coincide to the millisecond.
func randomEvents(rng *rand.Rand, n int) []history.Event {
	names := []string{"Disk", "Queue", "KV", "Latency"}
	type al struct {
		name, fp string
		labels   map[string]string
	}
	var alerts []al
	for i := range 8 {
		ls := map[string]string{"alertname": names[i%len(names)], "instance": fmt.Sprint("i", i)}
		alerts = append(alerts, al{ls["alertname"], history.Fingerprint(ls), ls})
	}
	groups := []string{"g0", "g1", "g2", `{}:{alertname="Disk"}`}
	// Times on a coarse grid, so that many coincide, and now and then at
	// the bounds of the spans TestBuildBothWays asks for.
	bounds := []time.Duration{-time.Hour, 7 * time.Hour, 90 * time.Minute, 4*time.Hour + 17*time.Second}
	at := func() time.Time {
		if rng.IntN(20) == 0 {
			return t0.Add(bounds[rng.IntN(len(bounds))])
		}
		return t0.Add(time.Duration(rng.IntN(6*360)) * 10 * time.Second)
	}
	var evs []history.Event
	for range n {
		t := at()
		switch k := rng.IntN(10); {
		case k < 3:
			a := alerts[rng.IntN(len(alerts))]
			typ := []string{history.TypeFiring, history.TypeResolved, history.TypePending, history.TypeStale}[rng.IntN(4)]
			evs = append(evs, history.Event{Time: t, Type: typ, Labels: a.labels})
		case k < 7:
			g, r, in := groups[rng.IntN(len(groups))], []string{"oncall", "storage"}[rng.IntN(2)], []string{"slack", "webhook", "email"}[rng.IntN(3)]
			var list []map[string]string
			firing := 0
			for range 1 + rng.IntN(3) {
				a := alerts[rng.IntN(len(alerts))]
				status := []string{"firing", "firing", "resolved"}[rng.IntN(3)]
				if status == "firing" {
					firing++
				}
				list = append(list, map[string]string{"fingerprint": a.fp, "alertname": a.name, "status": status})
			}
			outcome := []string{history.OutcomeSent, history.OutcomeSent, history.OutcomeSent, history.OutcomeFailed, "retried"}[rng.IntN(5)]
			d := map[string]any{"firing": firing, "resolved": len(list) - firing, "alerts": list}
			if outcome == history.OutcomeFailed {
				d["error"] = fmt.Sprint("status ", 500+rng.IntN(3))
			}
			e := history.Event{Time: t, Type: history.TypeNotification, GroupKey: g, Receiver: r, Integration: in, Outcome: outcome, Details: history.Details(d)}
			if len(list) == 1 {
				e.Fingerprint, e.Labels = list[0]["fingerprint"], map[string]string{"alertname": list[0]["alertname"]}
			}
			evs = append(evs, e)
			for rng.IntN(3) == 0 { // the same page delivered again at once, by the same integration or another
				e.Integration = []string{"slack", "webhook", "email"}[rng.IntN(3)]
				evs = append(evs, e)
			}
		case k < 9:
			outcome := []string{history.OutcomeAcknowledged, history.OutcomeAcknowledged, history.OutcomeEnded}[rng.IntN(3)]
			g := groups[rng.IntN(len(groups))]
			if rng.IntN(10) == 0 {
				g = ""
			}
			evs = append(evs, history.Event{Time: t, Type: history.TypeAck, GroupKey: g, Outcome: outcome, User: "ana"})
		default:
			id := fmt.Sprint("s", rng.IntN(5))
			kind, outcome := "silenceCreated", history.OutcomeCreated
			if rng.IntN(3) == 0 {
				kind, outcome = "silenceUpdated", []string{history.OutcomeExpired, history.OutcomeUpdated}[rng.IntN(2)]
			}
			body, _ := json.Marshal(map[string]any{kind: map[string]any{"silence": map[string]any{"id": id, "startsAt": t, "endsAt": t.Add(time.Duration(rng.IntN(120)) * time.Minute), "createdBy": "bo"}}})
			evs = append(evs, history.Event{Time: t, Type: history.TypeSilence, Outcome: outcome, User: []string{"", "bo"}[rng.IntN(2)], Details: body})
		}
	}
	return evs
}

// A store's report, read from what it keeps for the report (notices,
// counts of its indexes), says exactly what the same report reads from
// every event one by one: on random histories, of one paged and of an HA
// pair that delivered some pages both, with other working hours, windows
// and spans.
func TestBuildBothWays(t *testing.T) {
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	var exercised [3]bool // pages and acknowledgements; failures and silences; flapping and working hours
	defer func() {
		if exercised != [3]bool{true, true, true} {
			t.Errorf("the histories do not exercise every part of the report: %v", exercised)
		}
	}()
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 7))
		a := randomEvents(rng, 600)
		// The other member: some of the same pages, a little later or at
		// the same millisecond, and its own events.
		var b []history.Event
		for _, e := range a {
			if e.Type == history.TypeNotification && rng.IntN(3) == 0 {
				e.Time = e.Time.Add(time.Duration(rng.IntN(3)) * 20 * time.Second)
				b = append(b, e)
			}
		}
		b = append(b, randomEvents(rng, 200)...)
		sa, sb := store(t, a...), store(t, b...)
		for name, o := range map[string]Options{
			"defaults":        {From: t0.Add(-time.Hour), To: t0.Add(7 * time.Hour)},
			"tokyo, 10s":      {From: t0.Add(-time.Hour), To: t0.Add(7 * time.Hour), Location: tokyo, DedupWindow: 10 * time.Second, FlappingThreshold: 1},
			"part of the day": {From: t0.Add(90 * time.Minute), To: t0.Add(4*time.Hour + 17*time.Second), WorkStart: 11 * time.Hour, WorkEnd: 13*time.Hour + 30*time.Minute},
		} {
			for sources, srcs := range map[string][2][]Source{
				"one":  {{sa}, {queryOnly{sa}}},
				"pair": {{sa, sb}, {queryOnly{sa}, queryOnly{sb}}},
			} {
				fast, err := Build(context.Background(), o, srcs[0]...)
				if err != nil {
					t.Fatal(err)
				}
				slow, err := Build(context.Background(), o, srcs[1]...)
				if err != nil {
					t.Fatal(err)
				}
				exercised[0] = exercised[0] || fast.Pages > fast.Acknowledgement.Acknowledged && fast.Acknowledgement.Acknowledged > 0
				exercised[1] = exercised[1] || len(fast.Failures) > 0 && len(fast.Silences) > 0
				exercised[2] = exercised[2] || len(fast.Flapping) > 0 && fast.PagesOutsideHours > 0
				if !reflect.DeepEqual(fast, slow) {
					fj, _ := json.MarshalIndent(fast, "", " ")
					sj, _ := json.MarshalIndent(slow, "", " ")
					t.Errorf("seed %d, %s, %s: from the store's notices:\n%s\nevent by event:\n%s", seed, name, sources, fj, sj)
				}
			}
		}
	}
}
