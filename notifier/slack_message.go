package notifier

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
	"github.com/slack-go/slack"
)

// Slack's limits (api.slack.com/reference/block-kit).
const (
	slackMaxBlocks      = 50
	slackMaxHeader      = 150
	slackMaxSectionText = 3000
	slackMaxField       = 2000
	slackMaxFields      = 10
	slackMaxButtonText  = 75
	slackMaxURL         = 3000
	slackMaxFallback    = 4000
	slackMaxAlertsShown = 20 // 4 fixed blocks + 2 per alert + "+N more" stay under 50
)

// slackMessage is a rendered Block Kit message.
type slackMessage struct {
	Text   string // fallback for notifications and old clients
	Blocks []slack.Block
	// Stale: the message says the datasource is failing (a firing alert
	// of the group is stale).
	Stale bool
	// actions is what the message shows of the group's actions; nil
	// without buttons.
	actions *actionsView
}

// messageInput is what a message is rendered from.
type messageInput struct {
	data      *template.Data
	title     string // rendered title override, or ""
	text      string // rendered text override, or ""
	keyLabels []string
	maxAlerts int
	links     linkBuilder
	stale     func(template.Alert) bool
	// actions, when set, adds the status of the group's acknowledgement
	// and silence and the buttons that change them.
	actions *actionsView
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func statusEmoji(status string) string {
	if status == string(model.AlertResolved) {
		return "✅"
	}
	return "🔥"
}

// renderSlack lays out one message for an alert group: header with status
// and severity, summary, then per alert its description, key labels and
// the Runbook, Dashboard, Silence and Source buttons.
func renderSlack(in messageInput) slackMessage {
	d := in.data
	firing, resolved := len(d.Alerts.Firing()), len(d.Alerts.Resolved())
	name := d.CommonLabels["alertname"]
	if name == "" {
		name = d.GroupLabels["alertname"]
	}
	if name == "" && len(d.Alerts) > 0 {
		name = d.Alerts[0].Labels["alertname"]
	}
	severity := d.CommonLabels["severity"]
	status := strings.ToUpper(d.Status)

	title := in.title
	if title == "" {
		title = fmt.Sprintf("%s %s", statusEmoji(d.Status), status)
		if severity != "" {
			title += " [" + severity + "]"
		}
		title += " " + name
		if n := len(d.Alerts); n > 1 {
			title += fmt.Sprintf(" (%d)", n)
		}
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(title, slackMaxHeader), true, false)),
	}

	// The configured text is the operator's mrkdwn; annotations come from
	// the monitored systems and are escaped, so that <!channel> in one
	// pings nobody.
	summary := in.text
	if summary == "" {
		summary = d.CommonAnnotations["summary"]
		if summary == "" && len(d.Alerts) == 1 {
			summary = d.Alerts[0].Annotations["summary"]
		}
		summary = escapeMrkdwn(summary)
	}
	if summary != "" {
		blocks = append(blocks, slack.NewSectionBlock(
			slack.NewTextBlockObject(slack.MarkdownType, truncate(summary, slackMaxSectionText), false, false), nil, nil))
	}

	ctx := []string{fmt.Sprintf("*%d firing*, %d resolved", firing, resolved)}
	if len(d.GroupLabels) > 0 {
		ctx = append(ctx, "group: "+kvString(d.GroupLabels, nil))
	}
	anyStale := false
	for _, a := range d.Alerts {
		if a.Status == string(model.AlertFiring) && in.stale != nil && in.stale(a) {
			anyStale = true
		}
	}
	if anyStale {
		ctx = append(ctx, "⚠️ datasource failing: state is the last known, not resolved")
	}
	blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, truncate(strings.Join(ctx, " · "), slackMaxSectionText), false, false)))

	maxAlerts := in.maxAlerts
	if maxAlerts <= 0 {
		maxAlerts = DefaultSlackMaxAlerts
	}
	maxAlerts = min(maxAlerts, slackMaxAlertsShown)
	shown := d.Alerts
	if len(shown) > maxAlerts {
		shown = shown[:maxAlerts]
	}
	for _, a := range shown {
		blocks = append(blocks, alertBlocks(a, d, in)...)
	}
	if more := len(d.Alerts) - len(shown); more > 0 {
		blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType,
			fmt.Sprintf("+%d more alert(s) not shown", more), false, false)))
	}
	if in.actions != nil {
		blocks = append(blocks, actionBlocks(in.actions, firing > 0)...)
	}
	if len(blocks) > slackMaxBlocks { // cannot happen with the caps above; keep Slack's limit anyway
		blocks = append(blocks[:slackMaxBlocks-1], slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "+ more not shown", false, false)))
	}

	fallback := fmt.Sprintf("%s %s: %s", status, escapeMrkdwn(name), summary)
	return slackMessage{Text: truncate(strings.TrimSuffix(fallback, ": "), slackMaxFallback), Blocks: blocks, Stale: anyStale, actions: in.actions}
}

func alertBlocks(a template.Alert, d *template.Data, in messageInput) []slack.Block {
	head := a.Annotations["summary"]
	if head == "" {
		head = a.Labels["alertname"]
	}
	text := fmt.Sprintf("%s *%s*", statusEmoji(a.Status), escapeMrkdwn(head))
	if desc := a.Annotations["description"]; desc != "" {
		text += "\n" + escapeMrkdwn(desc)
	}
	if in.stale != nil && a.Status == string(model.AlertFiring) && in.stale(a) {
		text += "\n_⚠️ stale: the datasource is failing_"
	}
	var fields []*slack.TextBlockObject
	for _, k := range keyLabels(a, d, in.keyLabels) {
		if len(fields) == slackMaxFields {
			break
		}
		fields = append(fields, slack.NewTextBlockObject(slack.MarkdownType,
			truncate(fmt.Sprintf("*%s*\n%s", escapeMrkdwn(k), escapeMrkdwn(a.Labels[k])), slackMaxField), false, false))
	}
	blocks := []slack.Block{slack.NewSectionBlock(
		slack.NewTextBlockObject(slack.MarkdownType, truncate(text, slackMaxSectionText), false, false), fields, nil)}

	var buttons []slack.BlockElement
	add := func(id, label, u string) {
		if u = absURL(u); u == "" || len(u) > slackMaxURL {
			return
		}
		b := slack.NewButtonBlockElement(id, "", slack.NewTextBlockObject(slack.PlainTextType, truncate(label, slackMaxButtonText), false, false))
		b.URL = u
		buttons = append(buttons, b)
	}
	add("runbook", "Runbook", in.links.Runbook(a.Annotations["runbook_url"]))
	add("dashboard", "Dashboard", a.Annotations["dashboard_url"])
	if a.Status == string(model.AlertFiring) {
		add("silence", "Silence", in.links.Silence(a.Labels))
	}
	add("history", "History", in.links.History(a.Labels["alertname"], a.Fingerprint))
	add("source", "Source", a.GeneratorURL)
	if len(buttons) > 0 {
		if len(buttons) > 0 && buttons[0].(*slack.ButtonBlockElement).ActionID == "runbook" {
			buttons[0].(*slack.ButtonBlockElement).Style = slack.StylePrimary
		}
		blocks = append(blocks, slack.NewActionBlock("", buttons...))
	}
	return blocks
}

// keyLabels are the labels worth showing for an alert: the configured
// ones, or those not common to the whole group (what tells the alerts
// apart), minus alertname and severity which the header already shows.
func keyLabels(a template.Alert, d *template.Data, configured []string) []string {
	if len(configured) > 0 {
		var out []string
		for _, k := range configured {
			if a.Labels[k] != "" {
				out = append(out, k)
			}
		}
		return out
	}
	var out []string
	for k := range a.Labels {
		if k == "alertname" || k == "severity" {
			continue
		}
		if len(d.Alerts) > 1 && d.CommonLabels[k] == a.Labels[k] {
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// absURL returns s when it is an absolute http(s) URL with a host, ""
// otherwise: Slack refuses a whole message for one button whose URL it
// cannot take.
func absURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(u.Host, " \t") {
		return ""
	}
	return s
}

func kvString(kv template.KV, skip map[string]bool) string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%s", k, escapeMrkdwn(kv[k])))
	}
	return strings.Join(parts, ", ")
}

// escapeMrkdwn escapes the three characters Slack's mrkdwn treats as
// control characters.
func escapeMrkdwn(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// threadReply is the short text posted in the group's thread on a change.
func threadReply(d *template.Data) string {
	firing, resolved := len(d.Alerts.Firing()), len(d.Alerts.Resolved())
	if firing == 0 {
		return fmt.Sprintf("✅ Resolved: all %d alert(s) in this group", resolved)
	}
	return fmt.Sprintf("🔥 Update: %d firing, %d resolved", firing, resolved)
}
