package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"golang.org/x/net/html"
)

func TestRewriteRunbookLink(t *testing.T) {
	for in, want := range map[string]string{
		"VLLMPreemptions.md":         "VLLMPreemptions",
		"../tgi/TGIQueueTimeHigh.md": "../tgi/TGIQueueTimeHigh",
		"X.md#confirm":               "X#confirm",
		"https://example.com/a.md":   "https://example.com/a.md",
		"#act":                       "#act",
		"README.md":                  "./",
		"notes.txt":                  "notes.txt",
	} {
		if got := rewriteRunbookLink(in, ""); got != want {
			t.Errorf("rewriteRunbookLink(%q) = %q, want %q", in, got, want)
		}
	}
	if got := rewriteRunbookLink("../tgi/T.md#a", ".html"); got != "../tgi/T.html#a" {
		t.Errorf("site link = %q", got)
	}
}

func TestRunbookPages(t *testing.T) {
	ts := newTestServer(t, configWith("rules/ui.rules.yaml")+uiNotifier+"web: {runbooks_dir: runbooks}\n", map[string]string{
		"rules/ui.rules.yaml": uiRules,
		"runbooks/vllm/VLLMKVCacheSaturated.md": "# VLLMKVCacheSaturated\n\n| metric | unit |\n|---|---|\n| `vllm:kv_cache_usage_perc` | ratio |\n\n" +
			"See [preemptions](VLLMPreemptions.md#act) and [TGI's queue](../tgi/TGIQueueTimeHigh.md).\n",
		"runbooks/vllm/VLLMPreemptions.md": "# VLLMPreemptions\n\n## Act\nScale out.\n",
		"runbooks/tgi/TGIQueueTimeHigh.md": "# TGIQueueTimeHigh\n",
	}, nil)
	ts.EvalAll(time.Now())

	browser := http.Header{"Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}}
	code, body := ts.Do(t, http.MethodGet, "/runbooks/vllm/VLLMKVCacheSaturated", browser)
	if code != 200 {
		t.Fatalf("runbook = %d %s", code, body)
	}
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// GFM tables render as tables.
	if cells := testbin.FindAll(testbin.FindByID(doc, "runbook"), func(n *html.Node) bool { return n.Data == "td" }); len(cells) != 2 || testbin.Text(cells[1]) != "ratio" {
		t.Errorf("table cells = %d, want the GFM table rendered:\n%s", len(cells), body)
	}
	// Links to other runbooks lead to their pages, which are HTML too.
	base, _ := url.Parse("http://paged.test/runbooks/vllm/VLLMKVCacheSaturated")
	var followed []string
	for _, a := range testbin.FindAll(testbin.FindByID(doc, "runbook"), func(n *html.Node) bool { return n.Data == "a" }) {
		u, err := base.Parse(testbin.Attr(a, "href"))
		if err != nil {
			t.Fatal(err)
		}
		code, page := ts.Do(t, http.MethodGet, u.RequestURI(), browser)
		if code != 200 || !strings.Contains(page, "<h1 id=") || !strings.Contains(page, "<html") {
			t.Errorf("runbook link %s -> %s = %d, want an HTML page:\n%s", testbin.Attr(a, "href"), u.Path, code, page)
		}
		followed = append(followed, u.Path+"#"+u.Fragment)
	}
	if want := "/runbooks/vllm/VLLMPreemptions#act /runbooks/tgi/TGIQueueTimeHigh#"; strings.Join(followed, " ") != want {
		t.Errorf("runbook links = %q, want %q", followed, want)
	}

	// The page lists the alert's current instances, with their links.
	inst := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "instance") })
	if len(inst) != 1 || !strings.Contains(testbin.Text(inst[0]), `instance="10.0.3.7:8000"`) || !strings.Contains(testbin.Text(inst[0]), "firing") {
		t.Fatalf("instances = %d, want the firing VLLMKVCacheSaturated:\n%s", len(inst), body)
	}
	sl := testbin.FindAll(inst[0], func(n *html.Node) bool { return testbin.HasClass(n, "silence") })
	if len(sl) != 1 || !strings.HasPrefix(testbin.Attr(sl[0], "href"), "../../#/silences/new?filter=") {
		t.Errorf("instance silence link = %v", sl)
	}
	// A runbook without a current alert says so.
	if _, page := ts.Do(t, http.MethodGet, "/runbooks/vllm/VLLMPreemptions", browser); !strings.Contains(page, "Not firing or pending now") {
		t.Errorf("quiet runbook page:\n%s", page)
	}

	// Markdown for those who ask for it, and for curl's */*, with or
	// without the suffix.
	for _, accept := range []string{"text/markdown", "*/*", "text/markdown, text/html;q=0.5", ""} {
		h := http.Header{}
		if accept != "" {
			h.Set("Accept", accept)
		}
		for _, p := range []string{"/runbooks/vllm/VLLMKVCacheSaturated", "/runbooks/vllm/VLLMKVCacheSaturated.md"} {
			code, raw := ts.Do(t, http.MethodGet, p, h)
			if code != 200 || !strings.HasPrefix(raw, "# VLLMKVCacheSaturated\n") {
				t.Errorf("%s, Accept %q = %d %.40q, want the markdown", p, accept, code, raw)
			}
		}
	}
	// The link paged puts in its messages ends in .md: a browser gets the
	// page there too, titled with the alert's name and linking its source;
	// ?raw gets the source whatever the Accept.
	code, page := ts.Do(t, http.MethodGet, "/runbooks/vllm/VLLMKVCacheSaturated.md", browser)
	if code != 200 || !strings.Contains(page, "<title>VLLMKVCacheSaturated · paged runbook</title>") || !strings.Contains(page, `<h1 id="vllmkvcachesaturated">`) {
		t.Errorf(".md link in a browser = %d, want the rendered page:\n%s", code, page)
	}
	pdoc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	rawLinks := testbin.FindAll(pdoc, func(n *html.Node) bool { return n.Data == "a" && testbin.HasClass(n, "raw") })
	if len(rawLinks) != 1 || testbin.Attr(rawLinks[0], "href") != "VLLMKVCacheSaturated.md?raw" {
		t.Fatalf("markdown source link = %v, want one to VLLMKVCacheSaturated.md?raw", rawLinks)
	}
	src, _ := base.Parse(testbin.Attr(rawLinks[0], "href"))
	if code, raw := ts.Do(t, http.MethodGet, src.RequestURI(), browser); code != 200 || !strings.HasPrefix(raw, "# VLLMKVCacheSaturated\n") {
		t.Errorf("%s in a browser = %d %.40q, want the markdown", src.RequestURI(), code, raw)
	}
	rec := ts.Record(t, http.MethodGet, "/runbooks/vllm/VLLMKVCacheSaturated.md", browser)
	if ct, vary := rec.Header().Get("Content-Type"), rec.Header().Values("Vary"); !strings.HasPrefix(ct, "text/html") || !slices.Contains(vary, "Accept") {
		t.Errorf("Content-Type %q, Vary %q: want text/html, varying on Accept", ct, vary)
	}

	if code, _ := ts.Do(t, http.MethodGet, "/runbooks/vllm/%00", browser); code < 400 || code >= 500 {
		t.Errorf("bad runbook path = %d, want 4xx", code)
	}
}
