package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/pagedhq/paged/internal/testbin"
	promrules "github.com/prometheus/prometheus/rules"
)

func TestUIRunbookBaseURL(t *testing.T) {
	ts := newTestHandler(t, "runbook_base_url: https://wiki.example/runbooks\n")
	for ref, want := range map[string]string{
		"vllm/VLLMKVCacheSaturated":      "https://wiki.example/runbooks/vllm/VLLMKVCacheSaturated",
		"/vllm/X.md#confirm":             "https://wiki.example/runbooks/vllm/X.md#confirm",
		"https://other.example/a":        "https://other.example/a",
		"javascript:alert(document.URL)": "",
		"data:text/html,hi":              "",
		"  ":                             "",
	} {
		if got := ts.uiRunbookLink(ref); got != want {
			t.Errorf("runbook %q -> %q, want %q", ref, got, want)
		}
	}
}

const uiRules = `groups:
  - name: vllm
    interval: 1s
    rules:
      - alert: VLLMKVCacheSaturated
        expr: vector(0.97) > 0.9
        labels: {severity: critical, server: vllm, instance: "10.0.3.7:8000"}
        annotations:
          summary: "KV cache at {{ $value }} on 10.0.3.7:8000"
          description: "Requests will queue and be preempted."
          runbook_url: vllm/VLLMKVCacheSaturated
      - alert: VLLMQueueBacklog
        expr: vector(1)
        for: 1h
        labels: {severity: warning, server: vllm}
        annotations: {summary: "queue is long", runbook_url: "https://runbooks.example/queue"}
      - record: vllm:kv:ratio
        expr: vector(0.97)
`

// uiNotifier gives the test server an embedded notifier, so that
// /api/v2/silences exists.
const uiNotifier = `
storage: {path: data}
notifier:
  route: {receiver: devnull}
  receivers: [{name: devnull}]
`

func newUIServer(t *testing.T, extraConfig string, ruleFile string) *testServer {
	t.Helper()
	ts := newTestServer(t, configWith("rules/ui.rules.yaml")+uiNotifier+extraConfig, map[string]string{
		"rules/ui.rules.yaml":                   ruleFile,
		"runbooks/vllm/VLLMKVCacheSaturated.md": "# KV cache saturated\n\nScale out.\n",
		"token":                                 "tok-ui-123\n",
	}, nil)
	ts.EvalAll(time.Now())
	return ts
}

func (ts *testServer) getUI(t *testing.T, target string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Accept", "text/html")
	rec := httptest.NewRecorder()
	ts.Handler().ServeHTTP(rec, req)
	return rec, rec.Body.String()
}

func (ts *testServer) postSilence(t *testing.T, body, token string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/v2/silences", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	ts.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST /api/v2/silences = %d %s", rec.Code, rec.Body.String())
	}
	var resp struct{ SilenceID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.SilenceID == "" {
		t.Fatalf("POST /api/v2/silences answer %q: %v", rec.Body.String(), err)
	}
	return resp.SilenceID
}

func TestUIOverview(t *testing.T) {
	ts := newUIServer(t, "web: {runbooks_dir: runbooks}\n", uiRules)
	// The first rule's query fails: its alert keeps firing, marked stale.
	rule := ts.Engine.RuleGroups()[0].AlertingRules()[0]
	rule.SetLastError(context.DeadlineExceeded)
	rule.SetHealth(promrules.HealthBad)
	end := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	id := ts.postSilence(t, `{"matchers":[{"name":"alertname","value":"VLLMQueueBacklog","isRegex":false,"isEqual":true},
		{"name":"server","value":"vllm|tgi","isRegex":true,"isEqual":false}],
		"startsAt":"`+time.Now().UTC().Format(time.RFC3339)+`","endsAt":"`+end+`","createdBy":"ana","comment":"deploy in progress"}`, "")

	rec, body := ts.getUI(t, "/")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("no restrictive Content-Security-Policy: %q", csp)
	}
	doc := testbin.ParseHTML(t, body)

	alerts := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "alert") })
	var names []string
	for _, a := range alerts {
		names = append(names, testbin.Attr(a, "data-alertname"))
	}
	// Firing before pending.
	if !slices.Equal(names, []string{"VLLMKVCacheSaturated", "VLLMQueueBacklog"}) {
		t.Fatalf("alert rows = %v, want the firing then the pending alert", names)
	}
	kv := testbin.Text(alerts[0])
	for _, want := range []string{"firing", "stale", "critical", "KV cache at 0.97 on 10.0.3.7:8000", "Requests will queue", "value 0.97", `instance="10.0.3.7:8000"`, `server="vllm"`} {
		if !strings.Contains(kv, want) {
			t.Errorf("firing alert row lacks %q: %q", want, kv)
		}
	}
	if sev := testbin.FindAll(alerts[0], func(n *html.Node) bool { return testbin.HasClass(n, "sev-critical") }); len(sev) != 1 || testbin.Text(sev[0]) != "critical" {
		t.Errorf("severity badge missing")
	}
	if st := testbin.FindAll(alerts[0], func(n *html.Node) bool { return testbin.HasClass(n, "stale") }); len(st) != 1 {
		t.Errorf("stale badge missing from the failing rule's alert")
	}
	backlog := testbin.Text(alerts[1])
	if !strings.Contains(backlog, "pending") || strings.Contains(backlog, "stale") {
		t.Errorf("pending alert row = %q", backlog)
	}

	// The relative runbook_url resolves to paged's own /runbooks/, and the
	// link opens the runbook; an absolute one is kept.
	page, _ := url.Parse("http://paged.test/")
	rb := testbin.FindAll(alerts[0], func(n *html.Node) bool { return testbin.HasClass(n, "runbook") })
	if len(rb) != 1 {
		t.Fatal("no runbook link on the firing alert")
	}
	link, err := page.Parse(testbin.Attr(rb[0], "href"))
	if err != nil {
		t.Fatal(err)
	}
	if link.Path != "/runbooks/vllm/VLLMKVCacheSaturated" {
		t.Errorf("runbook link %q resolves to %q", testbin.Attr(rb[0], "href"), link.Path)
	}
	if rec, rbBody := ts.getUI(t, link.RequestURI()); rec.Code != 200 || !strings.Contains(rbBody, `<h1 id="kv-cache-saturated">KV cache saturated</h1>`) {
		t.Errorf("runbook link %s = %d %q", link, rec.Code, rbBody)
	}
	if rb := testbin.FindAll(alerts[1], func(n *html.Node) bool { return testbin.HasClass(n, "runbook") }); len(rb) != 1 || testbin.Attr(rb[0], "href") != "https://runbooks.example/queue" {
		t.Errorf("absolute runbook_url not kept")
	}

	// The Silence link carries the alert's labels in Alertmanager's format.
	sl := testbin.FindAll(alerts[0], func(n *html.Node) bool { return testbin.HasClass(n, "silence") })
	if len(sl) != 1 {
		t.Fatal("no silence link")
	}
	want := "#/silences/new?filter=" + url.QueryEscape(`{alertname="VLLMKVCacheSaturated",instance="10.0.3.7:8000",server="vllm",severity="critical"}`)
	if got := testbin.Attr(sl[0], "href"); got != want {
		t.Errorf("silence link = %q\nwant %q", got, want)
	}
	// Without JavaScript, the exact amtool command.
	if !strings.Contains(body, `amtool --alertmanager.url=&#39;http://127.0.0.1:9095&#39; silence add --duration=2h`) ||
		!strings.Contains(body, `&#39;instance=&#34;10.0.3.7:8000&#34;&#39;`) {
		t.Errorf("no amtool command for the alert in the page")
	}

	// Rules: groups, rules, health and last error.
	rules := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "rule") })
	if len(rules) != 3 {
		t.Fatalf("rule rows = %d, want 3", len(rules))
	}
	if r := testbin.Text(rules[0]); !strings.Contains(r, "VLLMKVCacheSaturated") || !strings.Contains(r, "err") || !strings.Contains(r, "context deadline exceeded") {
		t.Errorf("failing rule row = %q", r)
	}
	if r := testbin.Text(rules[2]); !strings.Contains(r, "vllm:kv:ratio") || !strings.Contains(r, "recording") || !strings.Contains(r, "ok") {
		t.Errorf("recording rule row = %q", r)
	}
	if !strings.Contains(testbin.Text(doc), "rules/ui.rules.yaml") {
		t.Errorf("group file not shown")
	}

	// Active silences come from the notifier's API.
	sil := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "silence-row") })
	if len(sil) != 1 {
		t.Fatalf("silence rows = %d, want 1", len(sil))
	}
	if s := testbin.Text(sil[0]); !strings.Contains(s, id) || !strings.Contains(s, `{alertname="VLLMQueueBacklog",server!~"vllm|tgi"}`) || !strings.Contains(s, "ana") || !strings.Contains(s, "deploy in progress") || !strings.Contains(s, "active") {
		t.Errorf("silence row = %q", s)
	}

	// Links to the rest of paged, all served.
	hrefs := map[string]bool{}
	for _, a := range testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "a" }) {
		hrefs[testbin.Attr(a, "href")] = true
	}
	for _, h := range []string{"runbooks/", "metrics", "api/v1/rules", "api/v1/alerts", "#/silences", "#/silences/new"} {
		if !hrefs[h] {
			t.Errorf("no link to %s", h)
			continue
		}
		if h[0] != '#' {
			if rec, _ := ts.getUI(t, "/"+h); rec.Code != http.StatusOK {
				t.Errorf("link %s = %d", h, rec.Code)
			}
		}
	}
	// No token field when the server has no token.
	if strings.Contains(body, `id="token"`) {
		t.Errorf("token field shown without web.auth_token_file")
	}
}

// Labels and annotations are user data: they render as text.
func TestUIEscapesUserData(t *testing.T) {
	hostile := `groups:
  - name: evil
    interval: 1s
    rules:
      - alert: Evil
        expr: vector(1)
        labels:
          severity: '"><img src=x onerror=alert(1)>'
          payload: '<script>alert("label")</script>'
        annotations:
          summary: '<script>alert("summary")</script>'
          description: '<b onmouseover=alert(1)>x</b>'
          runbook_url: 'javascript:alert(1)'
`
	ts := newUIServer(t, "", hostile)
	_, body := ts.getUI(t, "/")
	if n := strings.Count(strings.ToLower(body), "<script"); n != 1 {
		t.Errorf("page has %d <script> tags, want only the UI's own", n)
	}
	for _, bad := range []string{`<script>alert(`, `<img src=x`, `<b onmouseover`, `javascript:alert`} {
		if strings.Contains(body, bad) {
			t.Errorf("user data rendered as markup: %q", bad)
		}
	}
	doc := testbin.ParseHTML(t, body)
	row := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "alert") })
	if len(row) != 1 {
		t.Fatalf("alert rows = %d", len(row))
	}
	got := testbin.Text(row[0])
	for _, want := range []string{`<script>alert("summary")</script>`, `payload="<script>alert("label")</script>"`, `"><img src=x onerror=alert(1)>`, `<b onmouseover=alert(1)>x</b>`} {
		if !strings.Contains(got, want) {
			t.Errorf("alert row does not show %q as text: %q", want, got)
		}
	}
	if rb := testbin.FindAll(row[0], func(n *html.Node) bool { return testbin.HasClass(n, "runbook") }); len(rb) != 0 {
		t.Errorf("javascript: runbook_url became a link")
	}
	// The image never became an element.
	if imgs := testbin.FindAll(doc, func(n *html.Node) bool { return n.Data == "img" }); len(imgs) != 0 {
		t.Errorf("page has %d <img> elements", len(imgs))
	}
}

// The page loads nothing from the network: scripts, styles and images are
// same-origin or inline; http(s) URLs appear only as links.
func TestUINoExternalResources(t *testing.T) {
	ts := newUIServer(t, "web: {auth_token_file: token}\n", uiRules)
	_, body := ts.getUI(t, "/")
	rec, js := ts.getUI(t, "/ui/app.js")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") || !strings.Contains(js, "parseFilter") {
		t.Fatalf("/ui/app.js = %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	doc := testbin.ParseHTML(t, body)
	external := regexp.MustCompile(`(?i)^\s*(https?:)?//`)
	for _, n := range testbin.FindAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		for _, a := range n.Attr {
			load := a.Key == "src" || a.Key == "srcset" || a.Key == "poster" || a.Key == "data" ||
				(n.Data == "link" && a.Key == "href") || a.Key == "style"
			if load && external.MatchString(a.Val) {
				t.Errorf("<%s %s=%q> loads from the network", n.Data, a.Key, a.Val)
			}
		}
	}
	for name, src := range map[string]string{"page": body, "app.js": js} {
		if m := regexp.MustCompile(`(?i)(url\(|@import)\s*['"]?\s*(https?:)?//`).FindString(src); m != "" {
			t.Errorf("%s loads CSS from the network: %q", name, m)
		}
	}
	if m := regexp.MustCompile(`(?i)(fetch|open)\(\s*['"](https?:)?//`).FindString(js); m != "" {
		t.Errorf("app.js calls the network: %q", m)
	}
	// With web.auth_token_file set, the silence views ask for the token,
	// and the token itself never appears.
	if !strings.Contains(body, `id="token"`) {
		t.Errorf("no token field with web.auth_token_file set")
	}
	if strings.Contains(body, "tok-ui-123") {
		t.Errorf("the page leaks the bearer token")
	}
}

func TestUIWithoutNotifier(t *testing.T) {
	ts := newTestServer(t, configWith("rules/ui.rules.yaml"), map[string]string{"rules/ui.rules.yaml": uiRules}, nil)
	ts.EvalAll(time.Now())
	rec, body := ts.getUI(t, "/")
	if rec.Code != 200 || !strings.Contains(body, "Silences need a <code>notifier:</code> block") || !strings.Contains(body, "VLLMKVCacheSaturated") {
		t.Errorf("GET / without notifier = %d, page lacks the alert or the note\n%s", rec.Code, ts.Logs.String())
	}
}

// apilessNotifier is a Notifier without a silence API, as paged demo's
// wrapper is when the configuration has no notifier block.
type apilessNotifier struct{}

func (apilessNotifier) APIHandler() http.Handler { return http.NotFoundHandler() }

func TestUINotifierWithoutSilenceAPI(t *testing.T) {
	s := newWebServer(t, configWith("rules/ui.rules.yaml"), map[string]string{"rules/ui.rules.yaml": uiRules}, noEnv, Options{Notifier: apilessNotifier{}})
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, "Silences need a <code>notifier:</code> block") || strings.Contains(body, "page not found") {
		t.Errorf("GET / with a notifier without silence API = %d:\n%s", rec.Code, body)
	}
}

// The Slack "Silence" button's link opens the form with the matchers filled in.
func TestUISilenceFormInChromium(t *testing.T) {
	ts := newUIServer(t, "web: {auth_token_file: token}\n", uiRules)
	srv := httptest.NewServer(ts.Handler())
	defer srv.Close()
	dom := testbin.ChromiumDOM(t, srv.URL+"/#/silences/new?filter=%7Balertname%3D%22VLLMKVCacheSaturated%22%2Cinstance%3D%2210.0.3.7%3A8000%22%7D")
	doc := testbin.ParseHTML(t, dom)

	byID := func(id string) *html.Node {
		n := testbin.FindAll(doc, func(n *html.Node) bool { return testbin.Attr(n, "id") == id })
		if len(n) != 1 {
			t.Fatalf("no element #%s in the DOM:\n%s", id, dom)
		}
		return n[0]
	}
	if !testbin.HasAttr(byID("view-overview"), "hidden") || testbin.HasAttr(byID("view-silence-new"), "hidden") {
		t.Errorf("the form route did not switch views")
	}
	if testbin.HasAttr(byID("silence-auth"), "hidden") {
		t.Errorf("token field hidden on the form although web.auth_token_file is set")
	}
	rows := testbin.FindAll(byID("matcher-rows"), func(n *html.Node) bool { return n.Data == "tr" && testbin.HasClass(n, "matcher") })
	var got [][3]string
	for _, r := range rows {
		var row [3]string
		for _, in := range testbin.FindAll(r, func(n *html.Node) bool { return n.Data == "input" || n.Data == "select" }) {
			switch {
			case testbin.HasClass(in, "m-name"):
				row[0] = testbin.Attr(in, "value")
			case testbin.HasClass(in, "m-op"):
				for _, o := range testbin.FindAll(in, func(n *html.Node) bool { return n.Data == "option" && testbin.HasAttr(n, "selected") }) {
					row[1] = testbin.Attr(o, "value")
				}
			case testbin.HasClass(in, "m-value"):
				row[2] = testbin.Attr(in, "value")
			}
		}
		got = append(got, row)
	}
	want := [][3]string{{"alertname", "=", "VLLMKVCacheSaturated"}, {"instance", "=", "10.0.3.7:8000"}}
	if !slices.Equal(got, want) {
		t.Errorf("matcher rows = %q, want %q", got, want)
	}
	if v := testbin.Attr(testbin.FindAll(byID("silence-form"), func(n *html.Node) bool { return testbin.Attr(n, "id") == "duration" })[0], "value"); v != "2h" {
		t.Errorf("default duration = %q", v)
	}
	if cmd := testbin.Text(byID("silence-amtool")); !strings.Contains(cmd, `'alertname="VLLMKVCacheSaturated"' 'instance="10.0.3.7:8000"'`) {
		t.Errorf("amtool command = %q", cmd)
	}
	if e := testbin.Text(byID("filter-error")); e != "" {
		t.Errorf("filter error shown: %q", e)
	}
}

// The JSON the form posts is built by pagedUI.buildSilence; a tiny page
// calls it with the real app.js, and the body it returns is accepted by
// paged's silence API.
func TestUISilenceBodyInChromium(t *testing.T) {
	ts := newUIServer(t, "web: {auth_token_file: token}\n", uiRules)
	start := time.Now().UTC().Truncate(time.Second)
	filter := `{alertname="VLLMKVCacheSaturated", instance=~"10\\.0\\.3\\..*",model!="llama \"3\"",job!~'tgi|sglang'}`
	filterJS, _ := json.Marshal(filter)
	harness := `<!doctype html><html><body><pre id="out"></pre>
<script src="/ui/app.js"></script>
<script>

var ui = window.pagedUI, res = {errors: []};
try {
  res.body = ui.buildSilence(ui.parseFilter(` + string(filterJS) + `),
    {duration: "1h30m", createdBy: " oncall ", comment: "scaling out", startsAt: new Date("` + start.Format(time.RFC3339) + `")});
} catch (e) { res.error = e.message; }
[["{a=\"b\"", "2h", "x", "y"], ["{a=\"b\"}", "2x", "x", "y"], ["{a=\"b\"}", "2h", "x", ""], ["{}", "2h", "x", "y"], ["{a:\"b\"}", "2h", "x", "y"]].forEach(function (c) {
  try { ui.buildSilence(ui.parseFilter(c[0]), {duration: c[1], createdBy: c[2], comment: c[3]}); res.errors.push("accepted"); }
  catch (e) { res.errors.push(e.message); }
});
document.getElementById("out").textContent = JSON.stringify(res);
</script></body></html>`
	mux := http.NewServeMux()
	mux.Handle("/", ts.Handler())
	mux.HandleFunc("/harness", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(harness))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	doc := testbin.ParseHTML(t, testbin.ChromiumDOM(t, srv.URL+"/harness"))
	out := testbin.FindAll(doc, func(n *html.Node) bool { return testbin.Attr(n, "id") == "out" })
	if len(out) != 1 || testbin.Text(out[0]) == "" {
		t.Fatal("harness wrote no result")
	}
	var res struct {
		Body   json.RawMessage
		Error  string
		Errors []string
	}
	if err := json.Unmarshal([]byte(testbin.Text(out[0])), &res); err != nil {
		t.Fatalf("harness result %q: %v", testbin.Text(out[0]), err)
	}
	if res.Error != "" {
		t.Fatalf("buildSilence failed: %s", res.Error)
	}
	type matcher struct {
		Name    string `json:"name"`
		Value   string `json:"value"`
		IsRegex bool   `json:"isRegex"`
		IsEqual bool   `json:"isEqual"`
	}
	var body struct {
		Matchers  []matcher `json:"matchers"`
		StartsAt  string    `json:"startsAt"`
		EndsAt    string    `json:"endsAt"`
		CreatedBy string    `json:"createdBy"`
		Comment   string    `json:"comment"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil {
		t.Fatal(err)
	}
	wantM := []matcher{
		{"alertname", "VLLMKVCacheSaturated", false, true},
		{"instance", `10\.0\.3\..*`, true, true},
		{"model", `llama "3"`, false, false},
		{"job", "tgi|sglang", true, false},
	}
	if !slices.Equal(body.Matchers, wantM) {
		t.Errorf("matchers = %+v\nwant %+v", body.Matchers, wantM)
	}
	ms := ".000Z"
	if body.StartsAt != start.Format("2006-01-02T15:04:05")+ms || body.EndsAt != start.Add(90*time.Minute).Format("2006-01-02T15:04:05")+ms {
		t.Errorf("startsAt/endsAt = %s/%s, want %s + 1h30m", body.StartsAt, body.EndsAt, start)
	}
	if body.CreatedBy != "oncall" || body.Comment != "scaling out" {
		t.Errorf("createdBy/comment = %q/%q", body.CreatedBy, body.Comment)
	}
	wantErr := []string{"expected , or } at character 7", `invalid duration "2x"`, "say why", "add at least one matcher", "expected =, !=, =~ or !~"}
	if len(res.Errors) != len(wantErr) {
		t.Fatalf("errors = %q", res.Errors)
	}
	for i, w := range wantErr {
		if !strings.Contains(res.Errors[i], w) {
			t.Errorf("bad input %d: error %q, want it to say %q", i, res.Errors[i], w)
		}
	}

	// The API accepts exactly that body (with the token), and the overview
	// lists the silence.
	id := ts.postSilence(t, string(res.Body), "tok-ui-123")
	_, page := ts.getUI(t, "/")
	if !strings.Contains(page, id) || !strings.Contains(page, html.EscapeString(`instance=~"10\\.0\\.3\\..*"`)) {
		t.Errorf("overview does not list silence %s", id)
	}
}

// Without JavaScript the page shows, for each alert, the amtool command
// that silences it; run against paged by Debian's amtool, it creates that
// silence.
func TestUIAmtoolCommand(t *testing.T) {
	amtool := testbin.Require(t, "amtool")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := newUIServer(t, "global: {external_url: 'http://"+ln.Addr().String()+"'}\n", uiRules)
	srv := httptest.NewUnstartedServer(ts.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	_, body := ts.getUI(t, "/")
	doc, err := html.ParseWithOptions(strings.NewReader(body), html.ParseOptionEnableScripting(false))
	if err != nil {
		t.Fatal(err)
	}
	rows := testbin.FindAll(doc, func(n *html.Node) bool {
		return n.Data == "tr" && testbin.Attr(n, "data-alertname") == "VLLMKVCacheSaturated"
	})
	if len(rows) != 1 {
		t.Fatal("no row for the firing alert")
	}
	pre := testbin.FindAll(rows[0], func(n *html.Node) bool { return n.Data == "pre" && n.Parent.Data == "noscript" })
	if len(pre) != 1 {
		t.Fatal("no amtool command in a <noscript> of the alert's row")
	}
	command := strings.TrimSpace(pre[0].FirstChild.Data)
	if !strings.HasPrefix(command, "amtool ") {
		t.Fatalf("command = %q", command)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", amtool+strings.TrimPrefix(command, "amtool"))
	cmd.Env = []string{"USER=night-shift", "HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // amtool 0.25 warns that paged reports no Alertmanager version
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", command, err, out, stderr.String())
	}
	id := strings.TrimSpace(string(out))

	var silences []struct {
		ID        string
		CreatedBy string
		Status    struct{ State string }
		Matchers  []struct {
			Name, Value      string
			IsRegex, IsEqual bool
		}
	}
	code, list := ts.Do(t, http.MethodGet, "/api/v2/silences", http.Header{"Accept": {"application/json"}})
	if code != http.StatusOK {
		t.Fatalf("GET /api/v2/silences = %d %s", code, list)
	}
	if err := json.Unmarshal([]byte(list), &silences); err != nil {
		t.Fatalf("silences %q: %v", list, err)
	}
	if len(silences) != 1 || silences[0].ID != id || silences[0].CreatedBy != "night-shift" || silences[0].Status.State != "active" {
		t.Fatalf("silences after amtool (id %q) = %+v", id, silences)
	}
	var got []string
	for _, m := range silences[0].Matchers {
		if m.IsRegex || !m.IsEqual {
			t.Errorf("matcher %+v is not an equality", m)
		}
		got = append(got, m.Name+"="+m.Value)
	}
	slices.Sort(got)
	want := []string{"alertname=VLLMKVCacheSaturated", "instance=10.0.3.7:8000", "server=vllm", "severity=critical"}
	if !slices.Equal(got, want) {
		t.Errorf("amtool silence matchers = %v, want %v", got, want)
	}
}
