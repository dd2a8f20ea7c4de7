package digest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/report"
)

// slackNoisiest is how many of the noisiest alerts the Slack message
// lists; the report page has them all.
const slackNoisiest = 5

// maxName bounds an alert or receiver name in the Slack message, so
// that a section stays within Slack's 3,000 characters.
const maxName = 100

// ReportLink is the /report page of the span from..to on the paged at
// external (global.external_url).
func ReportLink(external *url.URL, from, to time.Time) string {
	u := url.URL{Scheme: "http", Host: "localhost:9095"}
	if external != nil {
		u = *external
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/report"
	u.RawPath, u.Fragment = "", ""
	u.RawQuery = url.Values{"from": {from.UTC().Format(time.RFC3339)}, "to": {to.UTC().Format(time.RFC3339)}}.Encode()
	return u.String()
}

// webhookBody is the JSON a webhook receives: the report (as paged
// report --format json writes it) with what the digest is.
type webhookBody struct {
	Version   string         `json:"version"`
	Type      string         `json:"type"`
	Receiver  string         `json:"receiver"`
	Key       string         `json:"key"`
	ReportURL string         `json:"report_url"`
	Report    *report.Report `json:"report"`
}

// Message is the digest of r for the notifier: the Slack message (the
// headline numbers, the noisiest alerts and a button that opens link)
// and the webhooks' JSON. key names its period.
func Message(r *report.Report, receiver, key, link string, due time.Time) (notifier.Digest, error) {
	body, err := json.Marshal(webhookBody{Version: "1", Type: "paged_digest", Receiver: receiver, Key: key, ReportURL: link, Report: r})
	if err != nil {
		return notifier.Digest{}, fmt.Errorf("digest: encoding the report: %w", err)
	}
	loc, err := time.LoadLocation(r.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	span := fmt.Sprintf("%s to %s", r.From.In(loc).Format("Mon 2 Jan 15:04"), r.To.In(loc).Format("Mon 2 Jan 2006 15:04 MST"))
	a := r.Acknowledgement
	ack := "no page acknowledged"
	if a.Acknowledged > 0 {
		ack = fmt.Sprintf("median %s, p90 %s", a.Median, a.P90)
	}
	failures := 0
	for _, f := range r.Failures {
		failures += f.Failures
	}
	field := func(title string, value any) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, fmt.Sprintf("*%s*\n%v", title, value), false, false)
	}
	fields := []*slack.TextBlockObject{
		field("Pages", r.Pages),
		field("Outside working hours", r.PagesOutsideHours),
		field("Time to acknowledge", ack),
		field("Never acknowledged", a.Never),
		field("Flapping alerts", len(r.Flapping)),
		field("Delivery failures", failures),
	}
	var noisy strings.Builder
	noisy.WriteString("*Noisiest alerts*")
	if len(r.Noisiest) == 0 {
		noisy.WriteString("\nNone paged.")
	}
	for i, n := range r.Noisiest {
		if i == slackNoisiest {
			fmt.Fprintf(&noisy, "\n…and %d more in the report", len(r.Noisiest)-slackNoisiest)
			break
		}
		fmt.Fprintf(&noisy, "\n• `%s`: %d %s", strings.ReplaceAll(mrkdwn(n.Alertname), "`", "'"), n.Pages, plural(n.Pages, "page", "pages"))
		if n.PagesOutsideHours > 0 {
			fmt.Fprintf(&noisy, ", %d outside working hours", n.PagesOutsideHours)
		}
		if n.Acknowledged == 0 {
			noisy.WriteString(", never acknowledged")
		}
	}
	button := slack.NewButtonBlockElement("open_report", "", slack.NewTextBlockObject(slack.PlainTextType, "Open the report", false, false))
	button.URL = link
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, "Paging digest", false, false)),
		slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, mrkdwn(span), false, false)),
		slack.NewSectionBlock(nil, fields, nil),
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, noisy.String(), false, false), nil, nil),
		slack.NewActionBlock("report", button),
		slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, mrkdwn(fmt.Sprintf("Working hours %s on %s (%s); flapping: fired and resolved more than %d times.",
			r.WorkingHours, strings.Join(r.WorkingDays, ", "), r.TimeZone, r.FlappingThreshold)), false, false)),
	}
	text := fmt.Sprintf("Paging digest, %s: %d %s, %d outside working hours, %d never acknowledged, %d flapping, %d delivery failures",
		span, r.Pages, plural(r.Pages, "page", "pages"), r.PagesOutsideHours, a.Never, len(r.Flapping), failures)
	return notifier.Digest{Key: key, Due: due, Text: text, Blocks: blocks, JSON: body}, nil
}

// mrkdwn escapes text for Slack's mrkdwn (&, <, >) and cuts a long name.
func mrkdwn(s string) string {
	if utf8.RuneCountInString(s) > maxName {
		s = string([]rune(s)[:maxName]) + "…"
	}
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
