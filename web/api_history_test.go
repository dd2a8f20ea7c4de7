package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/history"
)

func historyHandler(t testing.TB) (*Handler, *history.Store) {
	t.Helper()
	store, err := history.Open(history.Options{Path: filepath.Join(t.TempDir(), history.FileName)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := newTestHandler(t, "web: {max_label_value_bytes: 64, max_regexp_size: 32}\n")
	h.opts.History = store
	return h, store
}

type historyAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		Events []struct {
			Time     string            `json:"time"`
			Type     string            `json:"type"`
			Labels   map[string]string `json:"labels"`
			Receiver string            `json:"receiver"`
			Outcome  string            `json:"outcome"`
			User     string            `json:"user"`
			Details  json.RawMessage   `json:"details"`
		} `json:"events"`
		Next string `json:"next"`
	} `json:"data"`
}

func getHistory(t *testing.T, h http.Handler, query string) (int, historyAnswer) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/history?"+query, nil))
	var a historyAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("%s: answer is not JSON: %v: %s", query, err, rec.Body)
	}
	return rec.Code, a
}

func TestAPIHistory(t *testing.T) {
	h, store := historyHandler(t)
	t0 := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour) // within the retention
	kv := map[string]string{"alertname": "KV", "instance": "a"}
	store.Record(
		history.Event{Time: t0, Type: history.TypePending, Labels: kv, Details: history.Details(map[string]float64{"value": 0.95})},
		history.Event{Time: t0.Add(time.Minute), Type: history.TypeFiring, Labels: kv},
		history.Event{Time: t0.Add(61 * time.Second), Type: history.TypeNotification, Labels: map[string]string{"alertname": "KV"},
			Receiver: "oncall", Integration: "slack", Outcome: history.OutcomeSent, Details: history.Details(map[string]string{"slack_ts": "1700000000.000100"})},
		history.Event{Time: t0.Add(2 * time.Minute), Type: history.TypeSilence, Outcome: history.OutcomeCreated, User: "ana"},
		history.Event{Time: t0.Add(3 * time.Minute), Type: history.TypeResolved, Labels: map[string]string{"alertname": "Other"}},
	)
	if err := store.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	code, a := getHistory(t, h, "alertname=KV")
	if code != 200 || a.Status != "success" || len(a.Data.Events) != 3 {
		t.Fatalf("alertname=KV: %d %+v", code, a)
	}
	e := a.Data.Events[0]
	if e.Type != "pending" || e.Time != t0.Format(time.RFC3339) || e.Labels["instance"] != "a" || string(e.Details) != `{"value":0.95}` {
		t.Errorf("first event = %+v", e)
	}
	if n := a.Data.Events[2]; n.Type != "notification" || n.Receiver != "oncall" || n.Outcome != "sent" || !strings.Contains(string(n.Details), "1700000000.000100") {
		t.Errorf("notification = %+v", n)
	}

	for q, want := range map[string]string{
		url.Values{"match[]": {`{instance="a"}`}}.Encode():                        "pending firing",
		url.Values{"match[]": {`{alertname="Other"}`, `{instance="a"}`}}.Encode(): "pending firing resolved",
		"type=silence,resolved":    "silence resolved",
		"type=silence&type=firing": "firing silence",
		"start=" + t0.Add(time.Minute).Format(time.RFC3339) + "&end=" + fmt.Sprint(t0.Add(2*time.Minute).Unix()): "firing notification silence",
		"alertname=Nobody": "",
	} {
		code, a := getHistory(t, h, q)
		var got []string
		for _, e := range a.Data.Events {
			got = append(got, e.Type)
		}
		if code != 200 || strings.Join(got, " ") != want {
			t.Errorf("%s: %d %q, want %q", q, code, strings.Join(got, " "), want)
		}
		if a.Data.Events == nil {
			t.Errorf("%s: events is null, want []", q)
		}
	}

	// Pages: limit and the cursor.
	var all []string
	q := "limit=2"
	for range 5 {
		_, a := getHistory(t, h, q)
		for _, e := range a.Data.Events {
			all = append(all, e.Type)
		}
		if a.Data.Next == "" {
			break
		}
		q = "limit=2&cursor=" + url.QueryEscape(a.Data.Next)
	}
	if strings.Join(all, " ") != "pending firing notification silence resolved" {
		t.Errorf("pages gave %v", all)
	}
}

func TestAPIHistoryRejects(t *testing.T) {
	h, _ := historyHandler(t)
	for q, want := range map[string]string{
		"type=paged":                         `invalid parameter "type": "paged" is not an event type`,
		"limit=0":                            `invalid parameter "limit": "0" is not a whole number from 1 to 10000`,
		"limit=10001":                        `invalid parameter "limit"`,
		"start=yesterday":                    `invalid parameter "start": cannot parse "yesterday"`,
		"start=200&end=100":                  `invalid parameter "end": end timestamp must not be before start time`,
		"cursor=xyz":                         `invalid parameter "cursor": invalid cursor`,
		"match[]=" + url.QueryEscape(`{a=~`): `invalid parameter "match[]"`,
		"match[]=" + url.QueryEscape(`{a="`+strings.Repeat("v", 65)+`"}`):   "longer than web.max_label_value_bytes (64)",
		"match[]=" + url.QueryEscape(`{a=~"`+strings.Repeat("x|", 20)+`"}`): "more than web.max_regexp_size (32)",
		"alertnam=KV": `unknown parameter "alertnam"`,
	} {
		code, a := getHistory(t, h, q)
		if code != http.StatusBadRequest || a.Status != "error" || a.ErrorType != "bad_data" || !strings.Contains(a.Error, want) {
			t.Errorf("%s: %d %s %q, want 400 bad_data containing %q", q, code, a.ErrorType, a.Error, want)
		}
	}
	h.opts.History = nil
	if code, a := getHistory(t, h, ""); code != http.StatusServiceUnavailable || a.ErrorType != "unavailable" {
		t.Errorf("without a history: %d %+v", code, a)
	}
}
