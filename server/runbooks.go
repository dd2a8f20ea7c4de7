package server

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/pagedhq/paged/packs"
)

// BuiltinRunbooks returns the runbooks built into paged, one
// <server>/<Alert>.md per alert of the built-in packs and of paged's own
// alerts (examples/runbooks).
func BuiltinRunbooks() fs.FS { return packs.Runbooks() }

// runbooks returns the runbook tree to serve: Options.Runbooks,
// web.runbooks_dir, or the built-in runbooks.
func (s *Server) runbooks() fs.FS {
	if s.opts.Runbooks != nil {
		return s.opts.Runbooks
	}
	if dir := s.Config().Web.RunbooksDir; dir != "" {
		return os.DirFS(dir)
	}
	return BuiltinRunbooks()
}

// handleRunbook serves /runbooks/{server}/{Alert}: markdown files, found
// with or without the .md suffix. Browsers (Accept: text/html) get HTML;
// everything else, and any path ending in .md, gets the markdown text.
// A path ending in .html gets HTML (the links `paged export
// --runbook-suffix .html` writes). A directory lists its runbooks.
func (s *Server) handleRunbook(w http.ResponseWriter, r *http.Request) {
	fsys := s.runbooks()
	name := strings.Trim(path.Clean("/"+chi.URLParam(r, "*")), "/")
	if name == "" {
		name = "."
	}
	if !fs.ValidPath(name) {
		http.Error(w, "invalid runbook path", http.StatusBadRequest)
		return
	}
	wantHTML := strings.Contains(r.Header.Get("Accept"), "text/html") && !strings.HasSuffix(name, ".md")
	if base, ok := strings.CutSuffix(name, ".html"); ok {
		name, wantHTML = base, true
	}

	if st, err := fs.Stat(fsys, name); err == nil && st.IsDir() {
		s.runbookIndex(w, fsys, name, wantHTML)
		return
	}
	file := name
	if !strings.HasSuffix(file, ".md") {
		file += ".md"
	}
	body, err := fs.ReadFile(fsys, file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			http.Error(w, fmt.Sprintf("runbook %s not found", name), http.StatusNotFound)
			return
		}
		http.Error(w, "cannot read runbook", http.StatusInternalServerError)
		return
	}
	if !wantHTML {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = w.Write(body)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = runbookPage.Execute(w, struct {
		Title string
		Body  template.HTML
	}{strings.TrimSuffix(file, ".md"), renderMarkdown(string(body))})
}

func (s *Server) runbookIndex(w http.ResponseWriter, fsys fs.FS, dir string, wantHTML bool) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		http.Error(w, "cannot list runbooks", http.StatusInternalServerError)
		return
	}
	var links []string
	for _, e := range entries {
		switch {
		case e.IsDir():
			links = append(links, e.Name()+"/")
		case strings.HasSuffix(e.Name(), ".md"):
			links = append(links, strings.TrimSuffix(e.Name(), ".md"))
		}
	}
	slices.Sort(links)
	if !wantHTML {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, l := range links {
			fmt.Fprintln(w, l)
		}
		return
	}
	var b strings.Builder
	b.WriteString("<ul>\n")
	base := "/runbooks/"
	if dir != "." {
		base += dir + "/"
	}
	for _, l := range links {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", template.HTMLEscapeString(base+l), template.HTMLEscapeString(l))
	}
	b.WriteString("</ul>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = runbookPage.Execute(w, struct {
		Title string
		Body  template.HTML
	}{"Runbooks: " + dir, template.HTML(b.String())})
}

var runbookPage = template.Must(template.New("runbook").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}} · paged</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}
pre{background:#f4f4f4;padding:.75rem;overflow:auto}code{background:#f4f4f4;padding:0 .2rem}</style>
</head><body>
{{.Body}}
</body></html>
`))

// renderMarkdown renders the markdown our runbooks use: headings,
// paragraphs, bullet and numbered lists, fenced code, inline code, bold and
// links. Everything is escaped first; only the tags it emits are HTML.
func renderMarkdown(src string) template.HTML {
	var out bytes.Buffer
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para []string
	list := ""
	flushPara := func() {
		if len(para) > 0 {
			out.WriteString("<p>" + inlineMarkdown(strings.Join(para, " ")) + "</p>\n")
			para = nil
		}
	}
	closeList := func() {
		if list != "" {
			out.WriteString("</" + list + ">\n")
			list = ""
		}
	}
	openList := func(tag string) {
		if list != tag {
			closeList()
			out.WriteString("<" + tag + ">\n")
			list = tag
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			flushPara()
			closeList()
			out.WriteString("<pre><code>")
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				out.WriteString(template.HTMLEscapeString(lines[i]) + "\n")
			}
			out.WriteString("</code></pre>\n")
		case trimmed == "":
			flushPara()
			closeList()
		case strings.HasPrefix(trimmed, "#"):
			flushPara()
			closeList()
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			if level > 6 {
				level = 6
			}
			fmt.Fprintf(&out, "<h%d>%s</h%d>\n", level, inlineMarkdown(strings.TrimSpace(trimmed[level:])), level)
		case strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* "):
			flushPara()
			openList("ul")
			out.WriteString("<li>" + inlineMarkdown(trimmed[2:]) + "</li>\n")
		case orderedItem(trimmed) > 0:
			flushPara()
			openList("ol")
			out.WriteString("<li>" + inlineMarkdown(strings.TrimSpace(trimmed[orderedItem(trimmed):])) + "</li>\n")
		default:
			if list != "" && (strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "\t")) {
				// continuation of a list item: append to the open item
				b := out.Bytes()
				if bytes.HasSuffix(b, []byte("</li>\n")) {
					out.Truncate(len(b) - len("</li>\n"))
					out.WriteString(" " + inlineMarkdown(trimmed) + "</li>\n")
					continue
				}
			}
			closeList()
			para = append(para, trimmed)
		}
	}
	flushPara()
	closeList()
	return template.HTML(out.String())
}

// orderedItem returns the length of a "12. " prefix, or 0.
func orderedItem(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(s) || s[i] != '.' || s[i+1] != ' ' {
		return 0
	}
	return i + 2
}

// inlineMarkdown escapes s and renders `code`, **bold** and [text](url).
func inlineMarkdown(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		switch {
		case s[0] == '`':
			if end := strings.IndexByte(s[1:], '`'); end >= 0 {
				b.WriteString("<code>" + template.HTMLEscapeString(s[1:1+end]) + "</code>")
				s = s[end+2:]
				continue
			}
		case strings.HasPrefix(s, "**"):
			if end := strings.Index(s[2:], "**"); end >= 0 {
				b.WriteString("<strong>" + inlineMarkdown(s[2:2+end]) + "</strong>")
				s = s[end+4:]
				continue
			}
		case s[0] == '[':
			if mid := strings.Index(s, "]("); mid > 0 {
				if end := strings.IndexByte(s[mid:], ')'); end > 0 {
					text, href := s[1:mid], s[mid+2:mid+end]
					if safeHref(href) {
						fmt.Fprintf(&b, "<a href=\"%s\">%s</a>", template.HTMLEscapeString(href), inlineMarkdown(text))
						s = s[mid+end+1:]
						continue
					}
				}
			}
		}
		b.WriteString(template.HTMLEscapeString(s[:1]))
		s = s[1:]
	}
	return b.String()
}

// safeHref allows http(s), relative and anchor links, never javascript:.
func safeHref(h string) bool {
	l := strings.ToLower(h)
	if strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "/") || strings.HasPrefix(l, "#") {
		return true
	}
	return !strings.Contains(l, ":")
}

// WriteRunbookSite writes the runbooks named by paths (slash paths in src,
// <server>/<Alert>.md) into dir as static HTML pages to publish: each as
// <server>/<Alert>.html, rendered as paged's /runbooks/ renders it, beside
// its markdown source, with an index.html per folder. It returns the pages
// written.
func WriteRunbookSite(dir string, src fs.FS, paths []string) ([]string, error) {
	byDir := map[string][]string{}
	var written []string
	for _, p := range paths {
		if !fs.ValidPath(p) || !strings.HasSuffix(p, ".md") {
			return written, fmt.Errorf("runbook %q: want a path such as vllm/VLLMKVCacheSaturated.md", p)
		}
		body, err := fs.ReadFile(src, p)
		if err != nil {
			return written, fmt.Errorf("runbook %s: %w", p, err)
		}
		page := strings.TrimSuffix(p, ".md") + ".html"
		var b bytes.Buffer
		if err := runbookPage.Execute(&b, struct {
			Title string
			Body  template.HTML
		}{strings.TrimSuffix(p, ".md"), renderMarkdown(string(body))}); err != nil {
			return written, err
		}
		for name, content := range map[string][]byte{page: b.Bytes(), p: body} {
			if err := writeSiteFile(dir, name, content); err != nil {
				return written, err
			}
		}
		written = append(written, page)
		d := path.Dir(p)
		byDir[d] = append(byDir[d], path.Base(page))
		if d != "." {
			byDir["."] = append(byDir["."], d+"/")
		}
	}
	for d, entries := range byDir {
		slices.Sort(entries)
		entries = slices.Compact(entries)
		var b strings.Builder
		b.WriteString("<ul>\n")
		for _, e := range entries {
			target := e
			if strings.HasSuffix(e, "/") {
				target = e + "index.html"
			}
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", template.HTMLEscapeString(target), template.HTMLEscapeString(strings.TrimSuffix(e, ".html")))
		}
		b.WriteString("</ul>\n")
		title := "Runbooks"
		if d != "." {
			title += ": " + d
		}
		var out bytes.Buffer
		if err := runbookPage.Execute(&out, struct {
			Title string
			Body  template.HTML
		}{title, template.HTML(b.String())}); err != nil {
			return written, err
		}
		if err := writeSiteFile(dir, path.Join(d, "index.html"), out.Bytes()); err != nil {
			return written, err
		}
	}
	slices.Sort(written)
	return written, nil
}

func writeSiteFile(dir, name string, content []byte) error {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, content, 0o644)
}
