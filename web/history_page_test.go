package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/history"
)

func getPage(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}

// The timeline of an alert: its state bands, the notifications of its
// group with receiver and outcome, the group's acknowledgement and the
// silence with who; the group's timeline has the same and links back.
func TestHistoryPage(t *testing.T) {
	h, store := historyHandler(t)
	t0 := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Minute)
	a := map[string]string{"alertname": "KV", "instance": "a"}
	b := map[string]string{"alertname": "KV", "instance": "b"}
	fpA := history.Fingerprint(a)
	group := `{}:{alertname="KV"}`
	store.Record(
		history.Event{Time: t0, Type: history.TypePending, Labels: a},
		history.Event{Time: t0.Add(time.Minute), Type: history.TypeFiring, Labels: a, Details: history.Details(map[string]any{"value": 0.97})},
		history.Event{Time: t0.Add(time.Minute), Type: history.TypeFiring, Labels: b},
		history.Event{Time: t0.Add(61 * time.Second), Type: history.TypeNotification, Labels: map[string]string{"alertname": "KV"}, GroupKey: group,
			Receiver: "oncall", Integration: "slack", Outcome: history.OutcomeSent,
			Details: history.Details(map[string]any{"firing": 2, "resolved": 0, "slack_ts": "1700000000.000100", "slack_channel": "C1",
				"alerts": []map[string]string{{"fingerprint": fpA, "alertname": "KV", "status": "firing"}, {"fingerprint": history.Fingerprint(b), "alertname": "KV", "status": "firing"}}})},
		history.Event{Time: t0.Add(62 * time.Second), Type: history.TypeNotification, Labels: map[string]string{"alertname": "KV"}, GroupKey: group,
			Receiver: "oncall", Integration: "webhook", Outcome: history.OutcomeFailed,
			Details: history.Details(map[string]any{"firing": 2, "error": "unexpected status code 503"})},
		history.Event{Time: t0.Add(5 * time.Minute), Type: history.TypeAck, GroupKey: group, Outcome: history.OutcomeAcknowledged, User: "ana"},
		history.Event{Time: t0.Add(6 * time.Minute), Type: history.TypeSilence, Alertname: "KV", Outcome: history.OutcomeCreated, User: "bob",
			Details: []byte(`{"silenceCreated":{"silence":{"id":"s1","matchers":[{"name":"alertname","pattern":"KV","rendered":"alertname=\"KV\""}],"comment":"deploy","endsAt":"2030-01-01T00:00:00Z"}}}`)},
		history.Event{Time: t0.Add(30 * time.Minute), Type: history.TypeResolved, Labels: a},
	)
	if err := store.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, body := getPage(t, h, "/history?alertname=KV&fingerprint="+fpA+"&range=3h")
	if code != 200 {
		t.Fatalf("%d\n%s", code, body)
	}
	bands := regexp.MustCompile(`class="band state-(\w+)"`).FindAllStringSubmatch(body, -1)
	if len(bands) != 2 || bands[0][1] != "pending" || bands[1][1] != "firing" {
		t.Errorf("bands %v, want pending then firing (instance b is another alert)", bands)
	}
	if strings.Contains(body, `instance=&#34;b&#34;`) {
		t.Errorf("the alert's timeline shows instance b")
	}
	for _, want := range []string{
		`data-kind="notification" data-outcome="sent"`, `data-kind="notification" data-outcome="failed"`,
		`data-kind="ack" data-outcome="acknowledged"`, `data-kind="silence" data-outcome="created"`,
		`<td class="who">ana</td>`, `<td class="who">bob</td>`, "oncall/slack", "Slack C1 ts 1700000000.000100", "error: unexpected status code 503",
		`{alertname=&#34;KV&#34;} until 2030-01-01T00:00:00Z: deploy`,
		`href="history?group=%7B%7D%3A%7Balertname%3D%22KV%22%7D&amp;range=3h"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("alert timeline lacks %s", want)
		}
	}
	types := regexp.MustCompile(`<tr class="event" data-type="(\w+)"`).FindAllStringSubmatch(body, -1)
	var seq []string
	for _, m := range types {
		seq = append(seq, m[1])
	}
	if got := strings.Join(seq, " "); got != "pending firing notification notification ack silence resolved" {
		t.Errorf("events %s", got)
	}

	// The group's timeline: both alerts, the same marks.
	code, body = getPage(t, h, "/history?group="+url.QueryEscape(group)+"&range=3h")
	if code != 200 {
		t.Fatalf("group: %d\n%s", code, body)
	}
	if n := strings.Count(body, `class="track alert-track"`); n != 2 {
		t.Errorf("group timeline has %d alert tracks, want 2", n)
	}
	if !strings.Contains(body, `data-kind="ack"`) || !strings.Contains(body, "History of group {}:{alertname=&#34;KV&#34;}") {
		t.Errorf("group timeline:\n%s", body)
	}

	// Every bad input is a 400 with the reason.
	for q, want := range map[string]string{
		"":                                     "give an alertname",
		"alertname=KV&group=x":                 "not both",
		"alertname=KV&fingerprint=XYZ":         "invalid fingerprint",
		"alertname=KV&range=forever":           "invalid range",
		"alertname=KV&range=90d":               "at most 32d",
		"alertname=KV&end=tomorrow":            "invalid end",
		"alertname=KV&colour=red":              "unknown parameter",
		"alertname=KV&alertname=X":             "give it once",
		"alertname=" + strings.Repeat("x", 99): "invalid alertname",
	} {
		code, body := getPage(t, h, "/history?"+q)
		if code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%q: %d, want 400 with %q", q, code, want)
		}
	}
}

func TestHistoryLink(t *testing.T) {
	ls := labels.FromStrings("alertname", "KV", "instance", "a")
	got := historyLink("KV", ls, labels.FromStrings("cluster", "eu", "instance", "ignored"))
	want := "history?alertname=KV&fingerprint=" + history.Fingerprint(map[string]string{"alertname": "KV", "instance": "a", "cluster": "eu"})
	if got != want {
		t.Errorf("historyLink = %s, want %s", got, want)
	}
}

func FuzzHistoryPage(f *testing.F) {
	f.Add("alertname=KV&fingerprint=0123456789abcdef&range=1d&end=2026-01-01T00:00:00Z")
	f.Add("group=%7B%7D&range=-1h")
	f.Add("alertname=%ff&end=1e30")
	h, _ := historyHandler(f)
	f.Fuzz(func(t *testing.T, q string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/history?"+url.PathEscape(q), nil))
		if rec.Code != 200 && rec.Code != 400 {
			t.Fatalf("%q: %d", q, rec.Code)
		}
	})
}

// Without a range, the timeline begins a little before the alert's first
// event of the day: an alert of the last minutes fills it, instead of
// being a line at the right edge of a 24-hour axis.
func TestHistoryPageDefaultRangeFitsTheEvents(t *testing.T) {
	h, store := historyHandler(t)
	now := time.Now().UTC()
	a := map[string]string{"alertname": "Recent", "instance": "a"}
	store.Record(
		history.Event{Time: now.Add(-3 * time.Minute), Type: history.TypePending, Labels: a},
		history.Event{Time: now.Add(-2 * time.Minute), Type: history.TypeFiring, Labels: a},
	)
	if err := store.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]time.Duration{
		"/history?alertname=Recent":          8 * time.Minute, // 3 minutes of events and the 5-minute margin
		"/history?alertname=Recent&range=1d": 24 * time.Hour,  // asked for: kept
	} {
		code, body := getPage(t, h, target)
		if code != 200 {
			t.Fatalf("%s: %d\n%s", target, code, body)
		}
		m := regexp.MustCompile(`(\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ) to (\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ)`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no span shown", target)
		}
		from, _ := time.Parse("2006-01-02 15:04:05Z", m[1])
		to, _ := time.Parse("2006-01-02 15:04:05Z", m[2])
		if got := to.Sub(from); got < want-time.Minute || got > want+time.Minute {
			t.Errorf("%s: the timeline spans %v (%s), want about %v", target, got, m[0], want)
		}
	}
}
