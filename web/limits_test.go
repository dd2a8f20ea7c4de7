package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// limitsConfig is a server with a notifier (so /api/v2 exists) and the
// given web block.
func limitsConfig(web string) string {
	return configWith("rules/basic.rules.yaml") + uiNotifier + "web:\n" + web
}

var limitsFiles = map[string]string{"rules/basic.rules.yaml": basicRules}

// alertsBody is a POST /api/v2/alerts body of n alerts whose descriptions
// are pad bytes long.
func alertsBody(n, pad int) string {
	start := time.Now().UTC().Format(time.RFC3339)
	end := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"labels":{"alertname":"Limit%d","severity":"warning"},"annotations":{"description":%q},"startsAt":%q,"endsAt":%q}`,
			i, strings.Repeat("x", pad), start, end)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// padTo grows the description of the last alert of body so that body is
// exactly size bytes.
func padTo(t *testing.T, body string, size int) string {
	t.Helper()
	i := strings.LastIndex(body, `"x`)
	if i < 0 || len(body) > size {
		t.Fatalf("cannot pad a %d-byte body to %d", len(body), size)
	}
	return body[:i+1] + strings.Repeat("x", size-len(body)) + body[i+1:]
}

// storedAlerts lists the alertnames GET /api/v2/alerts returns.
func storedAlerts(t *testing.T, base string) []string {
	t.Helper()
	code, body := call(t, nil, http.MethodGet, base+"/api/v2/alerts", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/v2/alerts = %d %s", code, body)
	}
	var alerts []struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal([]byte(body), &alerts); err != nil {
		t.Fatalf("GET /api/v2/alerts: %v\n%s", err, body)
	}
	var names []string
	for _, a := range alerts {
		names = append(names, a.Labels["alertname"])
	}
	return names
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// An alerts body over web.max_request_body_bytes gets 413 with the reason,
// whether its length is declared or the body is chunked, and none of its
// alerts is stored; a body of exactly the limit is accepted.
func TestBodyLimitAlerts(t *testing.T) {
	addr, s := serveConfig(t, limitsConfig("  max_request_body_bytes: 16KiB\n"), limitsFiles, Options{})
	base := "http://" + addr
	const limit = 16 << 10
	over := alertsBody(40, 500)
	if len(over) <= limit {
		t.Fatalf("test body of %d bytes is not over the limit", len(over))
	}
	code, body := call(t, nil, http.MethodPost, base+"/api/v2/alerts", strings.NewReader(over), nil)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than web.max_request_body_bytes (16384 bytes)") {
		t.Errorf("POST of %d bytes with Content-Length = %d %q, want 413 naming the limit", len(over), code, body)
	}
	code, body = call(t, nil, http.MethodPost, base+"/api/v2/alerts", onlyReader{strings.NewReader(over)}, nil)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "web.max_request_body_bytes") {
		t.Errorf("chunked POST of %d bytes = %d %q, want 413", len(over), code, body)
	}
	if got := storedAlerts(t, base); len(got) != 0 {
		t.Fatalf("alerts stored from refused bodies: %v", got)
	}

	// One byte over the limit is refused, exactly at the limit is
	// accepted and stored, both ways.
	for _, chunked := range []bool{false, true} {
		var r io.Reader = strings.NewReader(padTo(t, strings.ReplaceAll(alertsBody(3, 10), "Limit", "Over"), limit+1))
		if chunked {
			r = onlyReader{r}
		}
		if code, _ := call(t, nil, http.MethodPost, base+"/api/v2/alerts", r, nil); code != http.StatusRequestEntityTooLarge {
			t.Errorf("POST of limit+1 bytes (chunked %v) = %d, want 413", chunked, code)
		}
	}
	for _, chunked := range []bool{false, true} {
		at := padTo(t, alertsBody(3, 10), limit)
		var r io.Reader = strings.NewReader(at)
		if chunked {
			r = onlyReader{r}
		}
		if code, body := call(t, nil, http.MethodPost, base+"/api/v2/alerts", r, nil); code != http.StatusOK {
			t.Fatalf("POST of exactly %d bytes (chunked %v) = %d %q, want 200", len(at), chunked, code, body)
		}
	}
	if got := storedAlerts(t, base); fmt.Sprint(sorted(got)) != "[Limit0 Limit1 Limit2]" {
		t.Errorf("stored alerts = %v, want Limit0..2", got)
	}
	if got, _ := testbin.GatherSum(s.Registry(), "paged_http_requests_rejected_total", "reason", "body_too_large"); got != 4 {
		t.Errorf("paged_http_requests_rejected_total{reason=body_too_large} = %v, want 4", got)
	}
}

// silencesBody is a POST /api/v2/silences body with a comment of n bytes.
func silenceBody(n int) string {
	return fmt.Sprintf(`{"matchers":[{"name":"alertname","value":"X","isRegex":false,"isEqual":true}],"startsAt":%q,"endsAt":%q,"createdBy":"ana","comment":%q}`,
		time.Now().UTC().Format(time.RFC3339), time.Now().Add(time.Hour).UTC().Format(time.RFC3339), strings.Repeat("c", n))
}

func silenceCount(t *testing.T, base string) int {
	t.Helper()
	code, body := call(t, nil, http.MethodGet, base+"/api/v2/silences", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/v2/silences = %d %s", code, body)
	}
	var sils []json.RawMessage
	if err := json.Unmarshal([]byte(body), &sils); err != nil {
		t.Fatalf("GET /api/v2/silences: %v\n%s", err, body)
	}
	return len(sils)
}

// More alerts than web.max_alerts_per_request in one POST: 413, none of
// them stored; exactly the maximum is accepted.
func TestMaxAlertsPerRequest(t *testing.T) {
	addr, s := serveConfig(t, limitsConfig("  max_alerts_per_request: 5\n"), limitsFiles, Options{})
	base := "http://" + addr
	code, body := call(t, nil, http.MethodPost, base+"/api/v2/alerts", strings.NewReader(alertsBody(6, 1)), nil)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "more than web.max_alerts_per_request (5) alerts") {
		t.Errorf("POST of 6 alerts = %d %q, want 413 naming the limit", code, body)
	}
	if got := storedAlerts(t, base); len(got) != 0 {
		t.Fatalf("alerts stored from a refused request: %v", got)
	}
	if code, body := call(t, nil, http.MethodPost, base+"/api/v2/alerts", strings.NewReader(alertsBody(5, 1)), nil); code != http.StatusOK {
		t.Fatalf("POST of 5 alerts = %d %q, want 200", code, body)
	}
	if got := storedAlerts(t, base); len(got) != 5 {
		t.Errorf("stored %d alerts, want 5: %v", len(got), got)
	}
	// A body that is not an array is the API's to refuse, with its 400.
	if code, _ := call(t, nil, http.MethodPost, base+"/api/v2/alerts", strings.NewReader(`{"labels":{}}`), nil); code != http.StatusBadRequest {
		t.Errorf("POST of an object = %d, want the API's 400", code)
	}
	if got, _ := testbin.GatherSum(s.Registry(), "paged_http_requests_rejected_total", "reason", "too_many_alerts"); got != 1 {
		t.Errorf("paged_http_requests_rejected_total{reason=too_many_alerts} = %v, want 1", got)
	}
}

// rawRequest sends head (a request line and headers, ending in a blank
// line) and then part of a body on a new connection, and returns the
// status paged answers and how long until it closed the connection. The
// client never sends the rest.
func rawRequest(t *testing.T, addr, head, part string) (status string, closedAfter time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_ = c.SetDeadline(start.Add(60 * time.Second))
	if _, err := io.WriteString(c, head+part); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := io.ReadAll(c) // until paged closes the connection
	if err != nil {
		t.Fatalf("no answer and no close within 60s: %v (read %q)", err, resp)
	}
	status = "none"
	if f := strings.Fields(string(resp)); len(f) > 1 {
		status = f[1]
	}
	return status, time.Since(start)
}

// A request that does not take a body (GET, HEAD, DELETE, OPTIONS) and
// comes with one is answered 413 without reading it, health checks
// included, and its connection is closed; the same requests without a
// body are served.
func TestBodyRefusedWhereNoneIsTaken(t *testing.T) {
	addr, s := serveConfig(t, limitsConfig("  read_timeout: 1m\n"), limitsFiles, Options{})
	base := "http://" + addr
	for _, target := range []string{"GET /-/healthy", "GET /api/v2/alerts", "DELETE /api/v2/silence/x", "OPTIONS /api/v2/alerts"} {
		head := target + " HTTP/1.1\r\nHost: paged\r\nContent-Length: 4194304\r\n\r\n"
		status, after := rawRequest(t, addr, head, strings.Repeat("b", 1000))
		if status != "413" || after > 30*time.Second {
			t.Errorf("%s with a 4 MiB body (1000 bytes sent) = %s, closed after %v; want 413 and closed at once", target, status, after)
		}
	}
	code, body := call(t, nil, http.MethodGet, base+"/-/healthy", onlyReader{strings.NewReader("chunked body")}, nil)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "GET requests take no body") {
		t.Errorf("GET /-/healthy with a chunked body = %d %q, want 413 with the reason", code, body)
	}
	if code, _ := call(t, nil, http.MethodGet, base+"/-/healthy", nil, nil); code != http.StatusOK {
		t.Errorf("GET /-/healthy = %d, want 200", code)
	}
	if got, _ := testbin.GatherSum(s.Registry(), "paged_http_requests_rejected_total", "reason", "body_not_allowed"); got != 5 {
		t.Errorf("paged_http_requests_rejected_total{reason=body_not_allowed} = %v, want 5", got)
	}
}

// A body that stops arriving is answered 408 once web.read_timeout has
// passed, and its connection closed; a request without the bearer token
// is answered 401 at once, its body unread.
func TestStalledBodyTimesOut(t *testing.T) {
	files := map[string]string{"rules/basic.rules.yaml": basicRules, "token": "tok-1\n"}
	addr, s := serveConfig(t, limitsConfig("  read_timeout: 1s\n  auth_token_file: token\n"), files, Options{})
	head := "POST /api/v2/alerts HTTP/1.1\r\nHost: paged\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"
	status, after := rawRequest(t, addr, head+"Authorization: Bearer tok-1\r\n\r\n", "[")
	if status != "408" || after < time.Second || after > 20*time.Second {
		t.Errorf("stalled body with the token = %s after %v, want 408 after web.read_timeout (1s)", status, after)
	}
	status, after = rawRequest(t, addr, head+"\r\n", "[")
	if status != "401" || after > 900*time.Millisecond {
		t.Errorf("stalled body without the token = %s after %v, want 401 before the read timeout", status, after)
	}
	// Chunked, stalled between chunks.
	chunked := "POST /api/v2/silences HTTP/1.1\r\nHost: paged\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer tok-1\r\n\r\n"
	status, after = rawRequest(t, addr, chunked, "5\r\n{\"a\":\r\n")
	if status != "408" || after > 20*time.Second {
		t.Errorf("stalled chunked body = %s after %v, want 408", status, after)
	}
	if got, _ := testbin.GatherSum(s.Registry(), "paged_http_requests_rejected_total", "reason", "body_timeout"); got != 2 {
		t.Errorf("paged_http_requests_rejected_total{reason=body_timeout} = %v, want 2", got)
	}
}

// The bodies held at once stay within web.max_request_bytes_in_flight:
// with two stalled 64 KiB bodies holding all of its 128 KiB, a third
// body gets 503 with Retry-After before any of it is read; once the
// stalled ones time out, bodies are read again.
func TestRequestBytesInFlight(t *testing.T) {
	addr, s := serveConfig(t, limitsConfig("  read_timeout: 3s\n  max_request_body_bytes: 64KiB\n  max_request_bytes_in_flight: 128KiB\n"), limitsFiles, Options{})
	base := "http://" + addr
	head := "POST /api/v2/alerts HTTP/1.1\r\nHost: paged\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n"
	var stalled []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, head+"["); err != nil {
			t.Fatal(err)
		}
		stalled = append(stalled, c)
	}
	// Both are held once the gauge shows them.
	for i := 0; i < 100; i++ {
		if v, _ := testbin.GatherSum(s.Registry(), "paged_http_request_bytes_in_flight"); v == 128<<10 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v2/alerts", strings.NewReader(alertsBody(1, 1)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "web.max_request_bytes_in_flight (131072 bytes)") {
		t.Errorf("POST while 128 KiB of bodies are held = %d %q (Retry-After %q), want 503 naming the limit", resp.StatusCode, b, resp.Header.Get("Retry-After"))
	}
	for _, c := range stalled {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if out, _ := io.ReadAll(c); !strings.HasPrefix(string(out), "HTTP/1.1 408") {
			t.Errorf("stalled body answered %q, want 408", out)
		}
	}
	if code, body := call(t, nil, http.MethodPost, base+"/api/v2/alerts", strings.NewReader(alertsBody(1, 1)), nil); code != http.StatusOK {
		t.Errorf("POST after the stalled bodies timed out = %d %q, want 200", code, body)
	}
	if v, _ := testbin.GatherSum(s.Registry(), "paged_http_request_bytes_in_flight"); v != 0 {
		t.Errorf("paged_http_request_bytes_in_flight = %v with no request in flight, want 0", v)
	}
}

// onlyReader hides the type of a reader, so that net/http cannot tell its
// length and sends the body chunked, without Content-Length.
type onlyReader struct{ io.Reader }

// The limit holds for every endpoint with a body: an oversized silence
// is not stored, an oversized DELETE does not expire the silence, an
// oversized /-/reload does not reload.
func TestBodyLimitEveryEndpoint(t *testing.T) {
	addr, s := serveConfig(t, limitsConfig("  max_request_body_bytes: 4096\n"), limitsFiles, Options{})
	base := "http://" + addr
	code, body := call(t, nil, http.MethodPost, base+"/api/v2/silences", strings.NewReader(silenceBody(5000)), nil)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "4096 bytes") {
		t.Errorf("oversized silence = %d %q, want 413", code, body)
	}
	if n := silenceCount(t, base); n != 0 {
		t.Fatalf("%d silences stored from an oversized body", n)
	}
	code, body = call(t, nil, http.MethodPost, base+"/api/v2/silences", strings.NewReader(silenceBody(3000)), nil)
	if code != http.StatusOK {
		t.Fatalf("silence under the limit = %d %q", code, body)
	}
	var created struct{ SilenceID string }
	if err := json.Unmarshal([]byte(body), &created); err != nil || created.SilenceID == "" {
		t.Fatalf("POST /api/v2/silences answer %q: %v", body, err)
	}
	if n := silenceCount(t, base); n != 1 {
		t.Fatalf("%d silences after one accepted, want 1", n)
	}

	big := strings.NewReader(strings.Repeat("z", 8192))
	code, _ = call(t, nil, http.MethodDelete, base+"/api/v2/silence/"+created.SilenceID, big, nil)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("DELETE with an oversized body = %d, want 413", code)
	}
	_, list := call(t, nil, http.MethodGet, base+"/api/v2/silences", nil, nil)
	if !strings.Contains(list, `"state":"active"`) {
		t.Errorf("silence not active after a refused DELETE: %s", list)
	}

	code, _ = call(t, nil, http.MethodPost, base+"/-/reload", strings.NewReader(strings.Repeat("z", 8192)), nil)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /-/reload with an oversized body = %d, want 413", code)
	}
	if got, _ := testbin.GatherSum(s.Registry(), "paged_config_reloads_total"); got != 0 {
		t.Errorf("paged_config_reloads_total = %v after a refused reload, want 0", got)
	}
}
