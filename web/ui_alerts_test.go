package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
	"golang.org/x/net/html"
)

// The filter survives the auto-refresh (a meta refresh reloads the same
// address) and is shown in the form; the list pages keep it.
func TestUIAlertsFilterAndPages(t *testing.T) {
	ts := newUIServer(t, "", uiRules)
	rec, body := ts.getUI(t, "/?severity=critical&severity=warning&limit=1")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET = %d", rec.Code)
	}
	doc := testbin.ParseHTML(t, body)
	metas := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "meta" && testbin.Attr(n, "http-equiv") == "refresh" })
	if len(metas) != 1 || testbin.Attr(metas[0], "content") != "30" {
		t.Errorf("meta refresh = %v, want one that reloads this address every 30s", metas)
	}
	checked := map[string]bool{}
	for _, in := range testbin.FindAll(testbin.FindByID(doc, "alert-filter"), func(n *html.Node) bool { return n.Data == "input" && testbin.HasAttr(n, "checked") }) {
		checked[testbin.Attr(in, "name")+"="+testbin.Attr(in, "value")] = true
	}
	if !checked["severity=critical"] || !checked["severity=warning"] || len(checked) != 2 {
		t.Errorf("checked filters = %v", checked)
	}
	rows := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "alert") })
	if len(rows) != 1 || testbin.Attr(rows[0], "data-alertname") != "VLLMKVCacheSaturated" {
		t.Fatalf("first page rows = %d", len(rows))
	}
	next := testbin.FindByID(doc, "next-page")
	href := testbin.Attr(next, "href")
	if !strings.Contains(href, "offset=1") || !strings.Contains(href, "severity=critical") || !strings.Contains(href, "limit=1") {
		t.Fatalf("next page link = %q, want the filter kept", href)
	}
	_, body = ts.getUI(t, "/"+href)
	rows = testbin.FindAll(testbin.ParseHTML(t, body), func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "alert") })
	if len(rows) != 1 || testbin.Attr(rows[0], "data-alertname") != "VLLMQueueBacklog" {
		t.Errorf("second page = %d rows", len(rows))
	}
	for _, bad := range []string{"/?limit=0", "/?limit=x", "/?offset=-1", "/?state=burning", "/?filter=" + "%7Ba%3D%7E%22(%22%7D"} {
		if rec, body := ts.getUI(t, bad); rec.Code != http.StatusBadRequest || !strings.Contains(body, `id="filter-problem"`) {
			t.Errorf("GET %s = %d, want 400 with the reason on the page", bad, rec.Code)
		}
	}
}
