package testbin

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// CheckRunbookLink opens a runbook link paged emitted as its users do:
// with a browser's Accept it must answer text/html, and in headless
// Chromium the page's title must start with the alert's name and the
// runbook's headings must be rendered (no markdown "## " in the visible
// text outside code); with Accept: text/markdown it must answer source, the runbook's
// markdown.
func CheckRunbookLink(t testing.TB, link, alert, source string) {
	t.Helper()
	get := func(accept string) (string, string) {
		req, err := http.NewRequest(http.MethodGet, link, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", link, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s (Accept %s): %s", link, accept, resp.Status)
		}
		return resp.Header.Get("Content-Type"), string(b)
	}
	if ct, _ := get("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("GET %s as a browser: Content-Type %q, want text/html", link, ct)
	}
	ct, body := get("text/markdown")
	if !strings.HasPrefix(ct, "text/markdown") || body != source {
		t.Errorf("GET %s with Accept: text/markdown: %q, %d bytes; want text/markdown, the runbook's %d bytes", link, ct, len(body), len(source))
	}

	doc, err := html.Parse(strings.NewReader(ChromiumDOM(t, link)))
	if err != nil {
		t.Fatal(err)
	}
	var title, visible strings.Builder
	headings := 0
	var walk func(n *html.Node, inTitle, hidden bool)
	walk = func(n *html.Node, inTitle, hidden bool) {
		switch {
		case n.Type == html.ElementNode && n.Data == "title":
			inTitle = true
		case n.Type == html.ElementNode && (n.Data == "style" || n.Data == "script" || n.Data == "head" || n.Data == "pre" || n.Data == "code"):
			hidden = true // code blocks may hold shell or PromQL comments
		case n.Type == html.ElementNode && (n.Data == "h1" || n.Data == "h2" || n.Data == "h3"):
			headings++
		case n.Type == html.TextNode && inTitle:
			title.WriteString(n.Data)
		case n.Type == html.TextNode && !hidden:
			visible.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inTitle, hidden)
		}
	}
	walk(doc, false, false)
	if !strings.HasPrefix(title.String(), alert) {
		t.Errorf("Chromium shows %s titled %q, want the alert's name %s", link, title.String(), alert)
	}
	if headings < 2 {
		t.Errorf("Chromium shows %d headings in %s, want the runbook's headings rendered", headings, link)
	}
	for _, line := range strings.Split(visible.String(), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "# ") {
			t.Errorf("Chromium shows markdown source in %s: %q", link, l)
			break
		}
	}
}
