package web

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
func (h *Handler) runbooks() fs.FS {
	if h.opts.Runbooks != nil {
		return h.opts.Runbooks
	}
	if dir := h.Config().Web.RunbooksDir; dir != "" {
		return os.DirFS(dir)
	}
	return BuiltinRunbooks()
}

// handleRunbook serves /runbooks/{server}/{Alert}: markdown files, found
// with or without the .md suffix, so that the link paged puts in every
// message (…/vllm/VLLMKVCacheSaturated.md) opens as a page. Whatever the
// suffix, a request that prefers HTML (a browser's Accept) gets the
// rendered page, and everything else (Accept: text/markdown, curl's */*,
// no Accept) the markdown source; ?raw always gets the source, and a path
// ending in .html always the page (the links `paged export
// --runbook-suffix .html` writes). A directory lists its runbooks.
func (h *Handler) handleRunbook(w http.ResponseWriter, r *http.Request) {
	fsys := h.runbooks()
	name := strings.Trim(path.Clean("/"+chi.URLParam(r, "*")), "/")
	if name == "" {
		name = "."
	}
	if !fs.ValidPath(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		http.Error(w, "invalid runbook path", http.StatusBadRequest)
		return
	}
	// The same URL answers HTML or markdown: caches must key on Accept.
	w.Header().Add("Vary", "Accept")
	_, raw := r.URL.Query()["raw"]
	wantHTML := acceptsHTML(r.Header.Get("Accept")) && !raw
	if base, ok := strings.CutSuffix(name, ".html"); ok {
		name, wantHTML = base, true
	}

	if st, err := fs.Stat(fsys, name); err == nil && st.IsDir() {
		h.runbookIndex(w, fsys, name, wantHTML)
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
	v := runbookView{Title: path.Base(strings.TrimSuffix(file, ".md")), Body: renderMarkdown(string(body)), Raw: path.Base(file) + "?raw"}
	h.addInstances(r, &v, file)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", runbookContentSecurityPolicy)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_ = runbookPage.Execute(w, v)
}

func (h *Handler) runbookIndex(w http.ResponseWriter, fsys fs.FS, dir string, wantHTML bool) {
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
	_ = runbookPage.Execute(w, runbookView{Title: "Runbooks: " + dir, Body: template.HTML(b.String())})
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
		if err := runbookPage.Execute(&b, runbookView{Title: strings.TrimSuffix(p, ".md"), Body: renderSiteMarkdown(string(body))}); err != nil {
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
		if err := runbookPage.Execute(&out, runbookView{Title: title, Body: template.HTML(b.String())}); err != nil {
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
