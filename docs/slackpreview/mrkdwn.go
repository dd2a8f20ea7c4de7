package main

import (
	"html"
	"strings"
)

// mrkdwn turns Slack mrkdwn into HTML: *bold*, _italic_, ~strike~,
// `code`, ```preformatted```, <url|label> links, <#C…>/<@U…>/<!here>
// mentions, <!date^…|fallback> dates and line breaks. The input is
// already escaped the way Slack wants (&amp; &lt; &gt;), so a raw "<"
// always opens a link, a mention or a date.
type mrkdwn struct {
	// users names the user ids of <@U…> mentions, as Slack shows a
	// mention: "@" and the user's name, in a pill.
	users map[string]string
}

// html renders s.
func (m mrkdwn) html(s string) string {
	var b strings.Builder
	m.write(&b, s, 0)
	return b.String()
}

const maxMrkdwnDepth = 8 // nested *_~ spans; deeper markers stay literal

func (m mrkdwn) write(b *strings.Builder, s string, depth int) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case strings.HasPrefix(s[i:], "```"):
			if end := strings.Index(s[i+3:], "```"); end >= 0 {
				b.WriteString(`<pre class="pre">`)
				writeText(b, strings.Trim(s[i+3:i+3+end], "\n"))
				b.WriteString("</pre>")
				i += 3 + end + 3
				continue
			}
		case c == '`':
			if end := strings.IndexAny(s[i+1:], "`\n"); end > 0 && s[i+1+end] == '`' {
				b.WriteString(`<code class="code">`)
				writeText(b, s[i+1:i+1+end])
				b.WriteString("</code>")
				i += 1 + end + 1
				continue
			}
		case c == '<':
			if end := strings.IndexAny(s[i+1:], ">\n"); end >= 0 && s[i+1+end] == '>' {
				m.angle(b, s[i+1:i+1+end])
				i += 1 + end + 1
				continue
			}
		case c == '*' || c == '_' || c == '~':
			if end := closingMarker(s, i); end > 0 && depth < maxMrkdwnDepth {
				tag := map[byte]string{'*': "b", '_': "i", '~': "s"}[c]
				b.WriteString("<" + tag + ">")
				m.write(b, s[i+1:end], depth+1)
				b.WriteString("</" + tag + ">")
				i = end + 1
				continue
			}
		case c == '\n':
			b.WriteString("<br>")
			i++
			continue
		}
		n := writeText(b, s[i:i+1+entityLen(s[i:])])
		i += n
	}
}

// closingMarker finds the marker closing the span opened at s[i], on the
// same line, following Slack's rules: the opener starts a word and is
// followed by a non-space, the closer ends a word. It returns -1 if none.
func closingMarker(s string, i int) int {
	m := s[i]
	if i > 0 && isWordByte(s[i-1]) {
		return -1
	}
	if i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == m || s[i+1] == '\n' {
		return -1
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\n':
			return -1
		case m:
			if s[j-1] != ' ' && (j+1 == len(s) || !isWordByte(s[j+1])) {
				return j
			}
		}
	}
	return -1
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// entityLen is how many bytes after s[0] belong to one of the three
// entities Slack escapes, so that they are copied whole.
func entityLen(s string) int {
	for _, e := range []string{"&amp;", "&lt;", "&gt;"} {
		if strings.HasPrefix(s, e) {
			return len(e) - 1
		}
	}
	return 0
}

// writeText writes Slack-escaped text as HTML text and returns len(s).
func writeText(b *strings.Builder, s string) int {
	b.WriteString(html.EscapeString(unescapeSlack(s)))
	return len(s)
}

func unescapeSlack(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// angle renders the inside of <…>: a link, a mention, a date or, for
// anything else, the literal text.
func (m mrkdwn) angle(b *strings.Builder, inner string) {
	target, label, hasLabel := strings.Cut(inner, "|")
	switch {
	case strings.HasPrefix(target, "#C"):
		if !hasLabel {
			label = "channel"
		}
		b.WriteString(`<span class="mention">#`)
		writeText(b, label)
		b.WriteString("</span>")
	case strings.HasPrefix(target, "@U"), strings.HasPrefix(target, "@W"):
		b.WriteString(`<span class="mention">@`)
		// Slack shows the user's name, whatever the label says.
		if name, ok := m.users[target[1:]]; ok {
			b.WriteString(html.EscapeString(name))
		} else if hasLabel {
			writeText(b, label)
		} else {
			writeText(b, target[1:])
		}
		b.WriteString("</span>")
	case strings.HasPrefix(target, "!date^"):
		// <!date^unix^format|fallback>: Slack writes the time in each
		// reader's time zone; the picture shows the fallback, which is
		// what a client that cannot format it shows.
		if !hasLabel {
			label = "date"
		}
		writeText(b, label)
	case strings.HasPrefix(target, "!"):
		if !hasLabel {
			label, _, _ = strings.Cut(target[1:], "^")
		}
		b.WriteString(`<span class="mention">@`)
		writeText(b, strings.TrimPrefix(label, "@")) // <!subteam^S…|@oncall>
		b.WriteString("</span>")
	case safeHref(unescapeSlack(target)):
		if !hasLabel {
			label = target
		}
		b.WriteString(`<a href="` + html.EscapeString(unescapeSlack(target)) + `">`)
		writeText(b, label)
		b.WriteString("</a>")
	default:
		writeText(b, "&lt;"+inner+"&gt;")
	}
}

// safeHref reports whether a link target may become an href: web and
// mail links only, never javascript: or data:.
func safeHref(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "mailto:")
}
