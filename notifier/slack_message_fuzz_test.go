package notifier

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
	"github.com/slack-go/slack"
)

// FuzzRenderSlack renders alert groups with arbitrary labels and
// annotations and checks every Slack limit the renderer promises
// (slack_message.go): block count, header, section and field text,
// fields per section, button text and URL length, fallback text. Slack
// refuses the whole message when one of them is exceeded, so a page
// would be lost.
func FuzzRenderSlack(f *testing.F) {
	f.Add("KVCacheSaturated", "instance", "vllm-0:8000", "KV cache at 97%", "Requests queue.", "vllm/KV.md", "https://grafana.example/d/x", "http://prom.example/graph", "", "", uint8(1), false, uint8(0))
	f.Add("A", "x", "é", "<&>", "d", "https://r.example/p", "javascript:alert(1)", "", "T", "t", uint8(60), false, uint8(255))
	f.Add("", "", "", "", "", "", "", "", "", "", uint8(0), true, uint8(0))
	f.Add("B\xff\xfe", "a\x00b", "\xff", "*bold* _it_ `code` <!channel>", "\n\n\n", "../../etc", "https://", "http://[::1]:9090/graph?g0.expr=%", "🔥", "", uint8(25), true, uint8(100))
	f.Add("NNNNNNNNNN", "kkkkkkkkkk", "v", "s", "d", "%zz", "ftp://x", "https://x", "", "", uint8(255), false, uint8(30))
	f.Add(">", "", "", "0", "0", "0", "0", "", "", "", uint8('X'), true, uint8(0))

	links := linkBuilder{external: &url.URL{Scheme: "http", Host: "paged.example:9095"}}
	tmpl, err := template.FromGlobs(nil)
	if err != nil {
		f.Fatal(err)
	}
	tmpl.ExternalURL = links.external
	f.Fuzz(func(t *testing.T, name, key, value, summary, desc, runbook, dashboard, generator, title, text string, n uint8, resolved bool, rep uint8) {
		// Long texts from short inputs: the corpus stays small, the
		// fuzzer fast, and every limit is within reach (rep up to 256
		// times the input).
		long := func(s string) string { return strings.Repeat(s, int(rep)+1) }
		name, value, summary, desc, title, text = long(name), long(value), long(summary), long(desc), long(title), long(text)
		if rep > 0 {
			runbook, dashboard, generator = runbook+long("/r"), dashboard+long("/d"), generator+long("/g")
		}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		count := int(n%60) + 1
		alerts := make([]*alert.Alert, 0, count)
		for i := range count {
			ls := model.LabelSet{"alertname": model.LabelValue(name), "severity": "critical", "i": model.LabelValue(strings.Repeat("i", i))}
			if key != "" {
				ls[model.LabelName(key)] = model.LabelValue(value)
			}
			end := now.Add(time.Hour)
			if resolved && i%2 == 0 {
				end = now.Add(-time.Minute)
			}
			alerts = append(alerts, alert.New(model.Alert{
				Labels: ls,
				Annotations: model.LabelSet{
					"summary": model.LabelValue(summary), "description": model.LabelValue(desc),
					"runbook_url": model.LabelValue(runbook), "dashboard_url": model.LabelValue(dashboard),
				},
				StartsAt: now.Add(-time.Hour), EndsAt: end, GeneratorURL: generator,
			}, now, false))
		}
		data := tmpl.Data("oncall", model.LabelSet{"alertname": model.LabelValue(name)}, nil, "", alerts...)
		msg := renderSlack(messageInput{
			data: data, title: title, text: text, maxAlerts: int(n), links: links,
			stale: func(a template.Alert) bool { return len(a.Labels["i"])%3 == 1 },
		})
		checkSlackLimits(t, msg)
		if title == "" && text == "" {
			checkEscaped(t, msg)
		}
	})
}

// checkEscaped fails t when a mrkdwn text holds a raw < or >: labels and
// annotations come from the monitored systems, and Slack reads <!channel>,
// <@U123> and <url|text> in them as mentions and links. Only the
// configured title and text templates may use them.
func checkEscaped(t *testing.T, msg slackMessage) {
	t.Helper()
	check := func(where string, o *slack.TextBlockObject) {
		if o != nil && o.Type == slack.MarkdownType && strings.ContainsAny(o.Text, "<>") {
			t.Errorf("%s text has a raw < or >: %.120q", where, o.Text)
		}
	}
	if strings.ContainsAny(msg.Text, "<>") {
		t.Errorf("fallback text has a raw < or >: %.120q", msg.Text)
	}
	for _, b := range msg.Blocks {
		switch b := b.(type) {
		case *slack.SectionBlock:
			check("section", b.Text)
			for _, fl := range b.Fields {
				check("field", fl)
			}
		case *slack.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				if o, ok := e.(*slack.TextBlockObject); ok {
					check("context", o)
				}
			}
		}
	}
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// checkSlackLimits fails t when msg breaks one of Slack's limits.
func checkSlackLimits(t *testing.T, msg slackMessage) {
	t.Helper()
	if len(msg.Blocks) == 0 || len(msg.Blocks) > slackMaxBlocks {
		t.Fatalf("%d blocks, want 1..%d", len(msg.Blocks), slackMaxBlocks)
	}
	if n := runes(msg.Text); n > slackMaxFallback {
		t.Errorf("fallback text of %d characters, limit %d", n, slackMaxFallback)
	}
	text := func(where string, o *slack.TextBlockObject, limit int) {
		if o == nil {
			return
		}
		if n := runes(o.Text); n == 0 || n > limit {
			t.Errorf("%s text of %d characters, want 1..%d: %.80q", where, n, limit, o.Text)
		}
	}
	for i, b := range msg.Blocks {
		switch b := b.(type) {
		case *slack.HeaderBlock:
			if i != 0 {
				t.Errorf("header at block %d", i)
			}
			if b.Text.Type != slack.PlainTextType {
				t.Errorf("header is %s, Slack wants plain_text", b.Text.Type)
			}
			text("header", b.Text, slackMaxHeader)
		case *slack.SectionBlock:
			text("section", b.Text, slackMaxSectionText)
			if len(b.Fields) > slackMaxFields {
				t.Errorf("section with %d fields, limit %d", len(b.Fields), slackMaxFields)
			}
			for _, fl := range b.Fields {
				text("field", fl, slackMaxField)
			}
		case *slack.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				if o, ok := e.(*slack.TextBlockObject); ok {
					text("context", o, slackMaxSectionText)
				}
			}
		case *slack.ActionBlock:
			if n := len(b.Elements.ElementSet); n == 0 || n > 25 {
				t.Errorf("actions block with %d elements, want 1..25", n)
			}
			for _, e := range b.Elements.ElementSet {
				btn, ok := e.(*slack.ButtonBlockElement)
				if !ok {
					t.Fatalf("action element %T", e)
				}
				text("button", btn.Text, slackMaxButtonText)
				if len(btn.URL) == 0 || len(btn.URL) > slackMaxURL {
					t.Errorf("button %s with a URL of %d bytes, want 1..%d", btn.ActionID, len(btn.URL), slackMaxURL)
				}
				if u, err := url.Parse(btn.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
					t.Errorf("button %s URL %.80q is not an http(s) URL", btn.ActionID, btn.URL)
				}
			}
		default:
			t.Errorf("unexpected block %T", b)
		}
	}
	if _, err := json.Marshal(msg.Blocks); err != nil {
		t.Errorf("blocks do not encode: %v", err)
	}
}

// Annotations and label names cannot mention @channel or hide a link in
// the summary, the fields or the fallback text; the configured text can.
func TestRenderSlackEscapesAnnotations(t *testing.T) {
	tmpl, err := template.FromGlobs(nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	a := alert.New(model.Alert{
		Labels:      model.LabelSet{"alertname": "Disk<!here>", "<@U1>": "v"},
		Annotations: model.LabelSet{"summary": "<!channel> disk full, see <https://evil.example|runbook>"},
		StartsAt:    now, EndsAt: now.Add(time.Hour),
	}, now, false)
	links := linkBuilder{external: &url.URL{Scheme: "http", Host: "paged.example"}}
	tmpl.ExternalURL = links.external
	msg := renderSlack(messageInput{data: tmpl.Data("r", nil, nil, "", a), links: links})
	checkEscaped(t, msg)
	contains(t, "blocks", rawJSON(t, msg.Blocks), `&lt;!channel&gt; disk full, see &lt;https://evil.example|runbook&gt;`, `*&lt;@U1&gt;*`)
	contains(t, "fallback", msg.Text, "FIRING Disk&lt;!here&gt;: &lt;!channel&gt;")

	msg = renderSlack(messageInput{data: tmpl.Data("r", nil, nil, "", a), links: links, text: "<!subteam^S1> look"})
	contains(t, "blocks with a configured text", rawJSON(t, msg.Blocks), `"text":"<!subteam^S1> look"`)
}

// rawJSON encodes v as Slack receives it, without HTML escapes.
func rawJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
