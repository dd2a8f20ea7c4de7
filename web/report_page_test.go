package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/internal/testbin"
)

// reportHandler is the HTTP surface over a history with the report:
// block given, and the pages of a week: Flappy paged three times (one
// on Saturday 7 March 2026), Steady once and acknowledged after 4
// minutes.
func reportHandler(t *testing.T, reportBlock string) *Handler {
	t.Helper()
	// The history's clock in that week: its retention keeps them.
	store, err := history.Open(history.Options{Path: filepath.Join(t.TempDir(), history.FileName), Now: func() time.Time { return time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := newTestHandler(t, reportBlock)
	h.opts.History = store
	page := func(at time.Time, group, name string) history.Event {
		return history.Event{Time: at, Type: history.TypeNotification, GroupKey: group, Receiver: "oncall", Integration: "slack", Outcome: history.OutcomeSent,
			Details: history.Details(map[string]any{"firing": 1, "resolved": 0, "alerts": []map[string]string{{"fingerprint": name + "fp", "alertname": name, "status": "firing"}}})}
	}
	mon := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	store.Record(
		page(mon, "g1", "Flappy"), page(mon.Add(time.Hour), "g1", "Flappy"), page(mon.Add(5*24*time.Hour), "g1", "Flappy"),
		page(mon.Add(2*time.Hour), "g2", "Steady"),
		history.Event{Time: mon.Add(2*time.Hour + 4*time.Minute), Type: history.TypeAck, GroupKey: "g2", Outcome: history.OutcomeAcknowledged, User: "ana"},
	)
	if err := store.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

const reportWeek = "/report?from=2026-03-02T09%3A00%3A00Z&to=2026-03-09T09%3A00%3A00Z"

// The page is the report paged report --format html writes, with the
// working hours of the report: block.
func TestReportPage(t *testing.T) {
	h := reportHandler(t, "")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, reportWeek, nil))
	body := rec.Body.String()
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || rec.Header().Get("Content-Security-Policy") == "" {
		t.Fatalf("%d %v\n%s", rec.Code, rec.Header(), body)
	}
	for _, want := range []string{
		`<b id="pages">4</b>`, `<b id="outside">1</b>`, "<td>Flappy</td><td class=\"n\">3</td>", "<td>Steady</td><td class=\"n\">1</td>",
		"Paging from 2026-03-02 09:00 UTC to 2026-03-09 09:00 UTC", "median 4m0s",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	if strings.Contains(body, "<script") {
		t.Error("the report has a script")
	}
	// The report: block's working hours: every day, all day.
	h = reportHandler(t, "report: {time_zone: Asia/Tokyo, working_hours: 00:00-24:00, working_days: [mon, tue, wed, thu, fri, sat, sun]}\n")
	_, body = getPage(t, h, reportWeek)
	if !strings.Contains(body, `<b id="outside">0</b>`) || !strings.Contains(body, "(Asia/Tokyo)") {
		t.Errorf("the report does not take the working hours of the report: block:\n%.2000s", body)
	}
	// By default, the last 7 days: none of those pages.
	code, body := getPage(t, h, "/report")
	if code != 200 || !strings.Contains(body, `<b id="pages">0</b>`) {
		t.Errorf("default span: %d\n%.1000s", code, body)
	}
}

func TestReportPageBadRequests(t *testing.T) {
	h := reportHandler(t, "")
	for q, want := range map[string]string{
		"from=tomorrow":   `invalid from: "tomorrow" is neither now`,
		"to=-7x":          `invalid to: "-7x" is not a duration back from now`,
		"from=-0s":        "invalid from",
		"from=now&to=-1h": "must be before to",
		"from=2026-03-09T00:00:00Z&to=2026-03-02T00:00:00Z": "must be before to",
		"from=-1d&from=-2d":                "from is given 2 times",
		"colour=red":                       `unknown parameter "colour"`,
		"from=" + strings.Repeat("9", 500): "invalid from",
		"from=-99999999999y":               "invalid from",
		"to=%00%ff":                        "invalid to",
	} {
		code, body := getPage(t, h, "/report?"+q)
		if code != http.StatusBadRequest || !strings.Contains(body, html.EscapeString(want)) || !strings.Contains(body, `id="report-error"`) {
			t.Errorf("%q: %d, want 400 with %q\n%.600s", q, code, want, body)
		}
	}
	_, body := getPage(t, h, "/report?from="+url.QueryEscape(strings.Repeat("x", 5000)))
	reason := testbin.FindByID(testbin.ParseHTML(t, body), "report-error")
	if reason == nil || strings.Count(testbin.Text(reason), "x") > 100 {
		t.Error("a long parameter is echoed whole in the reason")
	}
}

// Without a history the page says it is off and how to turn it on.
func TestReportPageWithoutHistory(t *testing.T) {
	h := newTestHandler(t, "")
	code, body := getPage(t, h, "/report")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "storage.history.enabled is true") {
		t.Errorf("%d\n%s", code, body)
	}
}

func FuzzReportPage(f *testing.F) {
	f.Add("from=-7d&to=now")
	f.Add("from=2026-03-02T09:00:00Z&to=2026-03-09T09:00:00+01:00")
	f.Add("from=-1e9h&to=-%ff")
	h := newTestHandler(f, "")
	f.Fuzz(func(t *testing.T, q string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/report?"+url.PathEscape(q), nil))
		if rec.Code != http.StatusBadRequest && rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%q: %d", q, rec.Code)
		}
	})
}

// What a browser shows: the numbers, and the alerts in the table.
func TestReportPageInChromium(t *testing.T) {
	srv := httptest.NewServer(reportHandler(t, ""))
	defer srv.Close()
	doc := testbin.ParseHTML(t, testbin.ChromiumDOM(t, srv.URL+reportWeek))
	if n := testbin.FindByID(doc, "pages"); n == nil || testbin.Text(n) != "4" {
		t.Fatalf("pages shown: %v", n)
	}
	if n := testbin.FindByID(doc, "outside"); n == nil || testbin.Text(n) != "1" {
		t.Errorf("outside working hours shown: %v", n)
	}
	noisiest := testbin.FindByID(doc, "noisiest")
	if noisiest == nil || !strings.Contains(testbin.Text(noisiest), "Flappy 3") || !strings.Contains(testbin.Text(noisiest), "Steady 1") {
		t.Errorf("noisiest table: %q", testbin.Text(noisiest))
	}
	// The UI's navigation leads there.
	ui := testbin.ParseHTML(t, testbin.ChromiumDOM(t, srv.URL+"/"))
	if a := testbin.FindByID(ui, "nav-report"); a == nil || testbin.Attr(a, "href") != "report" {
		t.Errorf("no Report link in the UI's navigation")
	}
}
