package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"strings"
	"time"
)

// Message is one Slack message as a channel shows it.
type Message struct {
	Author string // bold name beside the avatar; default "paged"
	Time   time.Time
	Edited bool            // shows "(edited)", as Slack does after chat.update
	Text   string          // mrkdwn; shown only when Blocks is empty (Slack's fallback rule)
	Blocks json.RawMessage // Block Kit "blocks" array
}

// Page is what one picture shows: a channel with messages, or a thread
// (the first message is the parent, the others its replies).
type Page struct {
	Channel  string // without "#"
	Thread   bool
	Messages []Message
	// Users names the user ids the messages mention (<@U…>), as the
	// workspace knows them.
	Users map[string]string
}

//go:embed page.html.tmpl
var pageTemplate string

type renderedMessage struct {
	Author string
	Time   string
	Edited bool
	Body   template.HTML
}

// Render writes p as a self-contained HTML page in Slack's light theme:
// inline CSS and SVG, system fonts, no resource loaded from anywhere.
func Render(w io.Writer, p Page) error {
	tmpl, err := template.New("page").Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("page template: %w", err)
	}
	md := mrkdwn{users: p.Users}
	var msgs []renderedMessage
	for i, m := range p.Messages {
		body, err := renderBody(m, md)
		if err != nil {
			return fmt.Errorf("message %d: %w", i+1, err)
		}
		author := m.Author
		if author == "" {
			author = "paged"
		}
		msgs = append(msgs, renderedMessage{Author: author, Time: m.Time.Format("3:04 PM"), Edited: m.Edited, Body: body})
	}
	data := struct {
		Channel string
		Thread  bool
		Parent  *renderedMessage
		Replies []renderedMessage
		All     []renderedMessage
		Reply   string
	}{Channel: p.Channel, Thread: p.Thread, All: msgs}
	if p.Thread && len(msgs) > 0 {
		data.Parent, data.Replies = &msgs[0], msgs[1:]
		data.Reply = fmt.Sprintf("%d %s", len(data.Replies), map[bool]string{true: "reply", false: "replies"}[len(data.Replies) == 1])
	}
	return tmpl.Execute(w, data)
}

// renderBody is the HTML of a message's content.
func renderBody(m Message, md mrkdwn) (template.HTML, error) {
	var b strings.Builder
	raw := strings.TrimSpace(string(m.Blocks))
	if raw == "" || raw == "null" || raw == "[]" {
		b.WriteString(`<div class="section">` + md.html(m.Text) + `</div>`)
		return template.HTML(b.String()), nil
	}
	blocks, err := parseBlocks(m.Blocks)
	if err != nil {
		return "", err
	}
	for _, bl := range blocks {
		writeBlock(&b, bl, md)
	}
	return template.HTML(b.String()), nil
}

// writeBlock writes one block; a block_id, when the message gives one,
// is kept as data-block-id (Slack shows nothing of it).
func writeBlock(b *strings.Builder, bl block, md mrkdwn) {
	id := ""
	if bl.BlockID != "" {
		id = ` data-block-id="` + html.EscapeString(bl.BlockID) + `"`
	}
	switch bl.Type {
	case "header":
		b.WriteString(`<div class="header"` + id + `>`)
		if bl.Text != nil {
			b.WriteString(html.EscapeString(bl.Text.Text))
		}
		b.WriteString("</div>")
	case "section":
		b.WriteString(`<div class="section"` + id + `><div class="section-main">`)
		if bl.Text != nil {
			b.WriteString(`<div class="section-text">` + textHTML(*bl.Text, md) + `</div>`)
		}
		if len(bl.Fields) > 0 {
			b.WriteString(`<div class="fields">`)
			for _, f := range bl.Fields {
				b.WriteString(`<div class="field">` + textHTML(f, md) + `</div>`)
			}
			b.WriteString("</div>")
		}
		b.WriteString("</div>")
		if bl.Accessory != nil {
			b.WriteString(`<div class="accessory">`)
			writeElement(b, *bl.Accessory)
			b.WriteString("</div>")
		}
		b.WriteString("</div>")
	case "context":
		b.WriteString(`<div class="context"` + id + `>`)
		for _, e := range bl.Elements {
			switch e.Type {
			case "mrkdwn", "plain_text":
				b.WriteString(`<span class="context-text">` + textHTML(e.Text, md) + `</span>`)
			default:
				writeElement(b, e)
			}
		}
		b.WriteString("</div>")
	case "divider":
		b.WriteString(`<hr class="divider"` + id + `>`)
	case "actions":
		b.WriteString(`<div class="actions"` + id + `>`)
		for _, e := range bl.Elements {
			writeElement(b, e)
		}
		b.WriteString("</div>")
	case "image":
		b.WriteString(`<div class="image-block"` + id + `>`)
		if bl.Title != nil {
			b.WriteString(`<div class="image-title">` + html.EscapeString(bl.Title.Text) + `</div>`)
		}
		b.WriteString(imagePlaceholder(bl.AltText, "image-large"))
		b.WriteString("</div>")
	default:
		b.WriteString(`<div class="unknown">[` + html.EscapeString(bl.Type) + ` block]</div>`)
	}
}

func writeElement(b *strings.Builder, e element) {
	switch e.Type {
	case "button":
		class := "btn"
		switch e.Style {
		case "primary":
			class += " btn-primary"
		case "danger":
			class += " btn-danger"
		}
		label := html.EscapeString(e.Text.Text)
		if safeHref(e.URL) {
			b.WriteString(`<a class="` + class + `" href="` + html.EscapeString(e.URL) + `">` + label + `</a>`)
		} else {
			b.WriteString(`<span class="` + class + `">` + label + `</span>`)
		}
	case "image":
		// Never loaded: the picture must not depend on the network.
		b.WriteString(imagePlaceholder(e.AltText, "image-small"))
	default:
		b.WriteString(`<span class="unknown">[` + html.EscapeString(e.Type) + `]</span>`)
	}
}

func imagePlaceholder(alt, class string) string {
	return `<span class="image ` + class + `" title="` + html.EscapeString(alt) + `">` + html.EscapeString(alt) + `</span>`
}

func textHTML(t textObj, md mrkdwn) string {
	if t.Type == "mrkdwn" {
		return md.html(t.Text)
	}
	return strings.ReplaceAll(html.EscapeString(t.Text), "\n", "<br>")
}
