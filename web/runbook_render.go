package web

import (
	"bytes"
	"html/template"
	"net/url"
	"path"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Runbooks are CommonMark with GitHub's tables, task lists and
// strikethrough, rendered by goldmark. Raw HTML in a runbook is dropped
// and dangerous link schemes (javascript:, data:) are not linked: a
// runbook is data, not code (goldmark's defaults, kept).

// newRunbookMarkdown returns the renderer; linkSuffix replaces the .md of
// relative links between runbooks: "" for paged's /runbooks/ (which serves
// the page without a suffix), ".html" for a published static site.
func newRunbookMarkdown(linkSuffix string) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(
			parser.WithAutoHeadingID(),
			parser.WithASTTransformers(util.Prioritized(runbookLinks{suffix: linkSuffix}, 100)),
		),
	)
}

var (
	pagedRunbookMarkdown = newRunbookMarkdown("")
	siteRunbookMarkdown  = newRunbookMarkdown(".html")
)

// renderMarkdown renders a runbook for paged's /runbooks/ pages.
func renderMarkdown(src string) template.HTML { return renderWith(pagedRunbookMarkdown, src) }

// renderSiteMarkdown renders a runbook for a static site of .html pages.
func renderSiteMarkdown(src string) template.HTML { return renderWith(siteRunbookMarkdown, src) }

func renderWith(md goldmark.Markdown, src string) template.HTML {
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	return template.HTML(b.String()) // goldmark escapes text and drops raw HTML
}

// runbookLinks rewrites relative links to other runbooks, written as
// files (VLLMPreemptions.md, ../tgi/TGIQueueTimeHigh.md#act), to the page
// that renders them, so that a reader clicking them stays on HTML.
type runbookLinks struct{ suffix string }

func (t runbookLinks) Transform(doc *ast.Document, _ gmtext.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering {
			l.Destination = []byte(rewriteRunbookLink(string(l.Destination), t.suffix))
		}
		return ast.WalkContinue, nil
	})
}

func rewriteRunbookLink(dest, suffix string) string {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasSuffix(u.Path, ".md") {
		return dest
	}
	u.Path = strings.TrimSuffix(u.Path, ".md") + suffix
	if path.Base(u.Path) == "README"+suffix || path.Base(u.Path) == "index"+suffix {
		u.Path = path.Dir(u.Path) + "/"
	}
	return u.String()
}
