package testbin

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The helpers below read paged's HTML pages in tests (web's UI tests and
// server's tests through the daemon).

// ParseHTML parses a page, failing the test when it does not parse.
func ParseHTML(t testing.TB, s string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// FindAll returns the elements under root that match, in document order.
func FindAll(root *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
	}
	return out
}

// FindByID returns the element with the id, or an empty document node.
func FindByID(root *html.Node, id string) *html.Node {
	if n := FindAll(root, func(n *html.Node) bool { return Attr(n, "id") == id }); len(n) > 0 {
		return n[0]
	}
	return &html.Node{Type: html.DocumentNode}
}

// Attr is n's attribute key ("" when it has none).
func Attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// HasAttr reports whether n has the attribute key, even empty.
func HasAttr(n *html.Node, key string) bool {
	return slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == key })
}

// HasClass reports whether n's class attribute lists class.
func HasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(Attr(n, "class")), class)
}

// Text is the text content of n, with runs of space collapsed.
func Text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
