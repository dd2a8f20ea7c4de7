package digest

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/report"
)

func TestReportLink(t *testing.T) {
	from, to := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC)
	for ext, want := range map[string]string{
		"http://127.0.0.1:9095":              "http://127.0.0.1:9095/report?from=2026-03-02T09%3A00%3A00Z&to=2026-03-09T09%3A00%3A00Z",
		"https://paged.example/sub/":         "https://paged.example/sub/report?from=2026-03-02T09%3A00%3A00Z&to=2026-03-09T09%3A00%3A00Z",
		"https://paged.example/a?x=1#f":      "https://paged.example/a/report?from=2026-03-02T09%3A00%3A00Z&to=2026-03-09T09%3A00%3A00Z",
		"https://paged.example/with%20space": "https://paged.example/with%20space/report?from=2026-03-02T09%3A00%3A00Z&to=2026-03-09T09%3A00%3A00Z",
	} {
		u, err := url.Parse(ext)
		if err != nil {
			t.Fatal(err)
		}
		if got := ReportLink(u, from.In(time.FixedZone("X", 3600)), to); got != want {
			t.Errorf("%s: %s, want %s", ext, got, want)
		}
	}
}

// Alert names are the users': Slack must show them, not act on them,
// and a long one must not take the message over Slack's limits.
func TestMessageHostileNames(t *testing.T) {
	r := &report.Report{
		From: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC),
		TimeZone: "Mars/Olympus", WorkingHours: "09:00-18:00", WorkingDays: []string{"mon"}, Pages: 9,
	}
	for _, name := range []string{"<!channel> & `rm`", strings.Repeat("ÿ", 5000), "A", "B", "C", "D", "E"} {
		r.Noisiest = append(r.Noisiest, report.AlertStats{Alertname: name, Pages: 1})
	}
	d, err := Message(r, "team", "k", "https://paged.example/report?from=a&to=b", r.To)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := json.Marshal(d.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var decoded []struct {
		Type string `json:"type"`
		Text *struct {
			Text string `json:"text"`
		} `json:"text"`
	}
	if err := json.Unmarshal(blocks, &decoded); err != nil {
		t.Fatal(err)
	}
	var noisy string
	for _, b := range decoded {
		if b.Type == "section" && b.Text != nil {
			noisy = b.Text.Text
		}
	}
	if strings.Contains(noisy, "<!channel>") || !strings.Contains(noisy, "`&lt;!channel&gt; &amp; 'rm'`") {
		t.Errorf("the name is not escaped:\n%s", noisy)
	}
	if n := len([]rune(noisy)); n > 3000 {
		t.Errorf("the noisiest section is %d characters, Slack takes 3,000", n)
	}
	if !strings.Contains(noisy, "…and 2 more in the report") || strings.Contains(noisy, "`E`") {
		t.Errorf("the list is not cut at %d:\n%s", slackNoisiest, noisy)
	}
	// An unknown zone (a report from elsewhere) is shown in UTC.
	if !strings.Contains(d.Text, "Mon 2 Mar 08:00 to Mon 9 Mar 2026 08:00 UTC: 9 pages") {
		t.Errorf("text %q", d.Text)
	}
	var body struct {
		Type      string        `json:"type"`
		ReportURL string        `json:"report_url"`
		Report    report.Report `json:"report"`
	}
	if err := json.Unmarshal(d.JSON, &body); err != nil || body.Type != "paged_digest" || body.Report.Pages != 9 || body.ReportURL != "https://paged.example/report?from=a&to=b" {
		t.Errorf("webhook body %s (%v)", d.JSON, err)
	}
}
