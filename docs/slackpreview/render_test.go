package main

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/pagedhq/paged/internal/testbin"
)

func readMessages(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func render(t *testing.T, p Page) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, p); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return buf.String()
}

// button is a button as the notifier sent it, read from the raw JSON
// without the renderer's own decoder.
type button struct{ Label, URL string }

func buttonsOf(t *testing.T, raw json.RawMessage) []button {
	t.Helper()
	var blocks []map[string]any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	var out []button
	for _, b := range blocks {
		if b["type"] != "actions" {
			continue
		}
		for _, e := range b["elements"].([]any) {
			el := e.(map[string]any)
			if el["type"] == "button" {
				out = append(out, button{el["text"].(map[string]any)["text"].(string), el["url"].(string)})
			}
		}
	}
	return out
}

// remoteLoad matches anything that would make a browser fetch from the
// network: src/srcset/poster attributes, CSS url(), @import, <link>.
var remoteLoad = regexp.MustCompile(`(?i)(src|srcset|poster|data)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?\s*(https?:)?//|@import|<link\b|<script\b|<iframe\b`)

func assertNoRemoteLoads(t *testing.T, page string) {
	t.Helper()
	if m := remoteLoad.FindString(page); m != "" {
		t.Errorf("page loads a remote resource (%q):\n%s", m, page)
	}
}

func TestRenderFiringMessage(t *testing.T) {
	var m Message
	readMessages(t, "firing.json", &m)
	page := render(t, Page{Channel: "llm-alerts", Messages: []Message{m}})

	for _, want := range []string{
		`<div class="header">🔥 FIRING [warning] VLLMKVCacheSaturated</div>`,
		`<b>vLLM KV cache 97.3% full for meta-llama/Llama-3.1-8B-Instruct on 10.0.3.7:8000</b>`,
		`<b>1 firing</b>, 0 resolved · group: alertname=VLLMKVCacheSaturated`,
		`<div class="field"><b>model_name</b><br>meta-llama/Llama-3.1-8B-Instruct</div>`,
		`<span class="name">paged</span>`,
		"# llm-alerts",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	buttons := buttonsOf(t, m.Blocks)
	if len(buttons) != 4 {
		t.Fatalf("testdata has %d buttons, want Runbook, Silence, History, Source: %+v", len(buttons), buttons)
	}
	for _, b := range buttons {
		want := `href="` + html.EscapeString(b.URL) + `">` + html.EscapeString(b.Label) + `</a>`
		if !strings.Contains(page, want) {
			t.Errorf("button %q: page lacks %s", b.Label, want)
		}
	}
	if !strings.Contains(page, `class="btn btn-primary" href="http://paged.example:9095/runbooks/vllm/VLLMKVCacheSaturated.md"`) {
		t.Error("the Runbook button is not primary")
	}
	assertNoRemoteLoads(t, page)
}

func TestRenderResolvedThread(t *testing.T) {
	var msgs []Message
	readMessages(t, "resolved.json", &msgs)
	page := render(t, Page{Channel: "llm-alerts", Thread: true, Messages: msgs})
	for _, want := range []string{
		`<div class="header">✅ RESOLVED [warning] VLLMKVCacheSaturated</div>`,
		`<span class="edited">(edited)</span>`,
		`<div class="replies">1 reply</div>`,
		"✅ Resolved: all 1 alert(s) in this group",
		`<span class="sub">#llm-alerts</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, b := range buttonsOf(t, msgs[0].Blocks) {
		if !strings.Contains(page, `href="`+html.EscapeString(b.URL)+`">`+b.Label+`</a>`) {
			t.Errorf("button %q missing", b.Label)
		}
	}
	if strings.Contains(page, ">Silence<") {
		t.Error("a resolved message shows a Silence button")
	}
	// The reply comes after the parent, below the "1 reply" line.
	if strings.Index(page, "1 reply") > strings.Index(page, "Resolved: all 1 alert(s)") {
		t.Error("the thread reply is rendered above the reply count")
	}
	assertNoRemoteLoads(t, page)
}

func TestRenderHostileBlocks(t *testing.T) {
	blocks := `[
	  {"type":"header","text":{"type":"plain_text","text":"<script>alert(1)</script>"}},
	  {"type":"section","text":{"type":"mrkdwn","text":"<javascript:alert(1)|click> &lt;img src=x&gt;"},
	   "accessory":{"type":"image","image_url":"https://tracker.example/a.png","alt_text":"chart"}},
	  {"type":"image","image_url":"https://tracker.example/b.png","alt_text":"graph","title":{"type":"plain_text","text":"Graph"}},
	  {"type":"context","elements":[{"type":"image","image_url":"http://tracker.example/c.png","alt_text":"i"},{"type":"plain_text","text":"ctx"}]},
	  {"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Go"},"url":"javascript:alert(1)"}]},
	  {"type":"divider"},
	  {"type":"video","title":{"type":"plain_text","text":"v"}}
	]`
	page := render(t, Page{Channel: "x", Messages: []Message{{Blocks: json.RawMessage(blocks)}}})
	for _, bad := range []string{"<script>", "tracker.example", `href="javascript`, "<img"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `<hr class="divider">`, "[video block]", `<span class="btn">Go</span>`, ">graph<", ">chart<"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	assertNoRemoteLoads(t, page)

	for _, broken := range []string{`{`, `{"type":"header"}`, `[{"type":"actions","elements":[{"type":"button","text":7}]}]`} {
		var buf bytes.Buffer
		if err := Render(&buf, Page{Messages: []Message{{Blocks: json.RawMessage(broken)}}}); err == nil {
			t.Errorf("blocks %s: no error", broken)
		} else if !strings.Contains(err.Error(), "message 1") {
			t.Errorf("blocks %s: error %q does not say which message", broken, err)
		}
	}
}

// The message after ana pressed Acknowledge: the status line names her
// as Slack shows a mention and gives the time as its fallback, and the
// group's buttons are there, Unacknowledge in place of Acknowledge.
func TestRenderAcknowledgedMessage(t *testing.T) {
	var m Message
	readMessages(t, "acknowledged.json", &m)
	page := render(t, Page{Channel: "llm-alerts", Messages: []Message{m}, Users: captureUsers})
	status := regexp.MustCompile(`<div class="context" data-block-id="paged\.status"><span class="context-text">👀 Acknowledged by <span class="mention">@ana</span> at \d\d:\d\d UTC</span></div>`)
	if !status.MatchString(page) {
		t.Errorf("page lacks the status line %s:\n%s", status, page)
	}
	for _, want := range []string{
		`<div class="actions" data-block-id="paged.actions"><span class="btn">Unacknowledge</span><span class="btn">🔕 Silence 1h</span><span class="btn">4h</span><span class="btn">24h</span><span class="btn">Until resolved</span></div>`,
		`<span class="edited">(edited)</span>`,
		`<div class="header">🔥 FIRING [warning] VLLMKVCacheSaturated</div>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"U0ANA", "!date", "{time}", ">👀 Acknowledge<"} {
		if strings.Contains(page, bad) {
			t.Errorf("page shows %q", bad)
		}
	}
	assertNoRemoteLoads(t, page)

	// Rendered without the workspace's users, the mention shows the id.
	if page := render(t, Page{Channel: "llm-alerts", Messages: []Message{m}}); !strings.Contains(page, `<span class="mention">@U0ANA</span>`) {
		t.Error("without users, the mention does not show the user id")
	}
}

func TestRenderFallbackText(t *testing.T) {
	page := render(t, Page{Channel: "x", Messages: []Message{{Text: "only *text*"}}})
	if !strings.Contains(page, "only <b>text</b>") {
		t.Errorf("fallback text not rendered:\n%s", page)
	}
}

func TestMrkdwn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"*bold* and _it_ and ~gone~", "<b>bold</b> and <i>it</i> and <s>gone</s>"},
		{"*bold _both_*", "<b>bold <i>both</i></b>"},
		{"a*b*c snake_case_name 2*3*4", "a*b*c snake_case_name 2*3*4"},
		{"* not bold *", "* not bold *"},
		{"*open\nclose*", "*open<br>close*"},
		{"`x > 1 && y`", `<code class="code">x &gt; 1 &amp;&amp; y</code>`},
		{"`a &gt; b`", `<code class="code">a &gt; b</code>`},
		{"```line1\n*not bold*```", `<pre class="pre">line1` + "\n" + `*not bold*</pre>`},
		{"<https://x.example/?a=1&amp;b=2|the runbook>", `<a href="https://x.example/?a=1&amp;b=2">the runbook</a>`},
		{"<https://x.example>", `<a href="https://x.example">https://x.example</a>`},
		{"<javascript:alert(1)|x>", "&lt;javascript:alert(1)|x&gt;"},
		{"<#C123|alerts> <@U1|ann> <!here>", `<span class="mention">#alerts</span> <span class="mention">@ann</span> <span class="mention">@here</span>`},
		{"a &lt;b&gt; &amp; \"c\" & d", "a &lt;b&gt; &amp; &#34;c&#34; &amp; d"},
		{"unclosed <tag", "unclosed &lt;tag"},
		{"🔥 *é*", "🔥 <b>é</b>"},
	} {
		if got := (mrkdwn{}).html(tc.in); got != tc.want {
			t.Errorf("html(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Mentions and dates as paged's status lines write them: a user is
// shown by the name the workspace knows, whatever the label says; a
// date by its fallback text, not as a mention.
func TestMrkdwnMentionsAndDates(t *testing.T) {
	md := mrkdwn{users: map[string]string{"U0ANA": "ana", "W0BOB": "bob <ops> & co"}}
	for _, tc := range []struct{ in, want string }{
		{"👀 Acknowledged by <@U0ANA> at <!date^1796522994^{time}|02:09 UTC>",
			`👀 Acknowledged by <span class="mention">@ana</span> at 02:09 UTC`},
		{"<@U0ANA|someone else>", `<span class="mention">@ana</span>`},
		{"<@W0BOB>", `<span class="mention">@bob &lt;ops&gt; &amp; co</span>`},
		{"<@U0NOBODY>", `<span class="mention">@U0NOBODY</span>`},
		{"<@U0NOBODY|carol>", `<span class="mention">@carol</span>`},
		{"🔕 Silenced by <@U0ANA> until <!date^1796526594^{date_short} {time}|03:09 UTC>",
			`🔕 Silenced by <span class="mention">@ana</span> until 03:09 UTC`},
		{"<!date^1796522994^{time}|a &lt;b&gt;>", "a &lt;b&gt;"},
		{"<!date^1796522994^{time}>", "date"},
		{"<!subteam^S0ONCALL|@oncall> <!here>", `<span class="mention">@oncall</span> <span class="mention">@here</span>`},
		{"*<@U0ANA>*", `<b><span class="mention">@ana</span></b>`},
	} {
		if got := md.html(tc.in); got != tc.want {
			t.Errorf("html(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func FuzzMrkdwn(f *testing.F) {
	for _, s := range []string{"*a* _b_ ~c~", "<https://x|y>", "```x```", "`c`", "&lt;&amp;", "<#C1|c>", "*_~*_~", "<@U1> <@U2|x>", "<!date^1^{time}|<b>>"} {
		f.Add(s)
	}
	// A user's name is the workspace's, not the message's: hostile too.
	md := mrkdwn{users: map[string]string{"U1": `<script>"x"</script>`}}
	f.Fuzz(func(t *testing.T, s string) {
		out := md.html(s)
		// Every "<" in the output opens one of the tags the renderer writes.
		for _, part := range strings.Split(out, "<")[1:] {
			ok := false
			for _, tag := range []string{"b>", "/b>", "i>", "/i>", "s>", "/s>", "br>", `code class="code">`, "/code>", `pre class="pre">`, "/pre>", `span class="mention">`, "/span>", `a href="http`, `a href="mailto:`, "/a>"} {
				if strings.HasPrefix(part, tag) {
					ok = true
					break
				}
			}
			if !ok {
				t.Fatalf("html(%q) writes a tag it should not: <%s", s, part)
			}
		}
	})
}

// TestCaptureMatchesTestdata runs the notifier against the Slack
// stand-in as the picture's generator does and checks that the messages
// it sends today are the ones in testdata (and so in docs/img). When the
// notifier's message changes, refresh both:
//
//	go run ./docs/slackpreview -testdata docs/slackpreview/testdata
//
// It runs in a synctest bubble: the notifier's timers and the capture's
// waits run on the fake clock, with the Slack stand-in in-process. The
// time of the acknowledgement is the clock's, so it is compared as a
// time, not as a value.
func TestCaptureMatchesTestdata(t *testing.T) {
	sc := DefaultScenario(testbin.RepoRoot(t))
	dir := t.TempDir()
	var c *Capture
	var acked Message
	synctest.Test(t, func(t *testing.T) {
		var err error
		if c, err = capture(t.Context(), sc, filepath.Join(dir, "tsdb")); err != nil {
			t.Fatal(err)
		}
		if acked, err = captureAcknowledged(t.Context(), sc, filepath.Join(dir, "tsdb-ack")); err != nil {
			t.Fatal(err)
		}
	})
	var firing, acknowledged Message
	var resolved []Message
	readMessages(t, "firing.json", &firing)
	readMessages(t, "resolved.json", &resolved)
	readMessages(t, "acknowledged.json", &acknowledged)
	if !strings.Contains(string(acked.Blocks), `Acknowledged by \u003c@U0ANA\u003e at \u003c!date^`) {
		t.Errorf("the acknowledged message does not name U0ANA with a date: %s", acked.Blocks)
	}
	for _, p := range []struct {
		name      string
		got, want Message
	}{
		{"firing message", c.Firing, firing},
		{"resolved message", c.Resolved, resolved[0]},
		{"thread reply", c.Reply, resolved[1]},
		{"acknowledged message", acked, acknowledged},
	} {
		if g, w := anyDate(compact(t, p.got.Blocks)), anyDate(compact(t, p.want.Blocks)); g != w || p.got.Text != p.want.Text {
			t.Errorf("%s differs from testdata (refresh the pictures: go run ./docs/slackpreview -testdata docs/slackpreview/testdata)\n got %s %s\nwant %s %s",
				p.name, p.got.Text, g, p.want.Text, w)
		}
	}
}

// slackDate is a date as the status lines write it,
// <!date^unix^{time}|HH:MM UTC>, JSON-escaped.
var slackDate = regexp.MustCompile(`\\u003c!date\^\d+\^\{time\}\|\d\d:\d\d UTC\\u003e`)

// anyDate replaces the dates of blocks by a placeholder.
func anyDate(blocks string) string { return slackDate.ReplaceAllString(blocks, "<date>") }

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
