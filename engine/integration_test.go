package engine_test

// Integration tests against Debian's prometheus (2.42) on a free loopback
// port, scraping an exporter whose values the test sets. Prometheus and the
// engine run on wall time, so these tests poll (with a deadline) where the
// unit tests use synctest.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

const externalURL = "http://paged.example:9095"

// integrationRules is loaded by Prometheus and by the engine alike.
const integrationRules = `groups:
  - name: integration
    interval: 1s
    rules:
      - alert: QueueBacklog
        expr: test_queue_depth > 5
        for: %s
        labels:
          severity: warning
        annotations:
          summary: 'Queue {{ $labels.server }} at {{ $value | humanize }}'
          description: 'cluster {{ $externalLabels.cluster }} {{ $externalURL }} up={{ with query "up{job=\"exporter\"}" }}{{ . | first | value }}{{ end }}'
          runbook_url: 'vllm/QueueBacklog'
`

// exporter serves test_queue_depth{server=...} with values the test sets.
type exporter struct {
	srv  *httptest.Server
	mu   sync.Mutex
	vals map[string]float64
}

func newExporter(t *testing.T) *exporter {
	x := &exporter{vals: map[string]float64{}}
	x.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		x.mu.Lock()
		defer x.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintln(w, "# TYPE test_queue_depth gauge")
		keys := make([]string, 0, len(x.vals))
		for k := range x.vals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "test_queue_depth{server=%q} %g\n", k, x.vals[k])
		}
	}))
	t.Cleanup(x.srv.Close)
	return x
}

func (x *exporter) set(server string, v float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.vals[server] = v
}

// startPrometheus starts Debian's prometheus scraping x every second and,
// when ruleFile is set, evaluating it every second.
func startPrometheus(t *testing.T, x *exporter, ruleFile string) (*testbin.Process, func() *testbin.Process) {
	t.Helper()
	bin := testbin.Require(t, "prometheus")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
  external_labels: {cluster: prod}
scrape_configs:
  - job_name: exporter
    static_configs: [{targets: [%q]}]
`, x.srv.Listener.Addr().String())
	if ruleFile != "" {
		cfg += fmt.Sprintf("rule_files: [%q]\n", ruleFile)
	}
	p := testbin.StartPrometheus(t, cfg, "--web.external-url="+externalURL)
	restart := func() *testbin.Process {
		return testbin.Start(t, bin, p.Dir, p.Addr, "/-/ready",
			"--config.file="+filepath.Join(p.Dir, "prometheus.yml"),
			"--storage.tsdb.path="+filepath.Join(p.Dir, "data"),
			"--web.listen-address="+p.Addr,
			"--web.enable-lifecycle",
			"--log.level=warn",
			"--web.external-url="+externalURL)
	}
	return p, restart
}

// waitFor polls cond until it holds; external processes run on wall time.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func remote(t *testing.T, p *testbin.Process) *engine.Remote {
	t.Helper()
	r, err := engine.NewRemote(engine.RemoteOptions{URL: p.URL, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func integrationFile(t *testing.T, forDur string) string {
	return writeFile(t, t.TempDir(), "integration.rules.yaml", fmt.Sprintf(integrationRules, forDur))
}

func hasState(e *engine.Engine, st promrules.AlertState) bool {
	for _, a := range activeAlerts(e, "QueueBacklog") {
		if a.State == st {
			return true
		}
	}
	return false
}

// TestIntegrationLifecycle: pending, firing after for, annotations
// rendered (including the query template function against the real
// Prometheus), a broken reload keeps the rules, resolved.
func TestIntegrationLifecycle(t *testing.T) {
	t.Parallel()
	x := newExporter(t)
	x.set("a", 10)
	p, _ := startPrometheus(t, x, "")
	file := integrationFile(t, "3s")
	rec := &recorder{}
	e := start(t, engine.Options{Datasource: remote(t, p), StoragePath: t.TempDir(), Notify: rec.notify,
		ExternalURL: externalURL, ResendDelay: time.Minute}, []string{file}, settings())

	waitFor(t, 20*time.Second, "pending", func() bool { return hasState(e.Engine, promrules.StatePending) })
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("a pending alert was sent: %+v", got[0])
	}
	var firing []*rules.Alert
	waitFor(t, 20*time.Second, "firing notification", func() bool {
		firing = append(firing, named(rec.take(), "QueueBacklog")...)
		return len(firing) > 0
	})
	a := firing[0]
	if a.Resolved(time.Now()) || a.Stale {
		t.Fatalf("want firing: %+v", a)
	}
	act := activeAlerts(e.Engine, "QueueBacklog")
	if len(act) != 1 || a.StartsAt.Sub(act[0].ActiveAt) < 3*time.Second {
		t.Errorf("fired before for=3s: activeAt %v startsAt %v", act[0].ActiveAt, a.StartsAt)
	}
	if got := a.Annotations.Get("summary"); got != "Queue a at 10" {
		t.Errorf("summary = %q", got)
	}
	if got := a.Annotations.Get("description"); got != "cluster prod "+externalURL+" up=1" {
		t.Errorf("description = %q", got)
	}
	if a.Labels.Get("job") != "exporter" || a.Labels.Get("cluster") != "prod" || a.Labels.Get("server") != "a" {
		t.Errorf("labels = %s", a.Labels)
	}
	if ok, why := e.Ready(); !ok {
		t.Errorf("not ready: %s", why)
	}

	bad := writeFile(t, t.TempDir(), "bad.rules.yaml", "groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum(\n")
	if err := e.ApplyRules([]string{file, bad}, settings()); err == nil || !strings.Contains(err.Error(), "bad.rules.yaml") {
		t.Fatalf("broken reload: %v", err)
	}
	if !hasState(e.Engine, promrules.StateFiring) || len(e.RuleGroups()) != 1 {
		t.Fatal("a broken reload disturbed the running rules")
	}

	x.set("a", 1)
	waitFor(t, 20*time.Second, "resolved notification", func() bool {
		for _, a := range named(rec.take(), "QueueBacklog") {
			if a.Resolved(time.Now()) {
				return true
			}
		}
		return false
	})
}

// TestIntegrationRestartKeepsActiveAt: stopping paged in the middle of
// 'for' and starting it again keeps activeAt, so the alert fires 'for'
// after the original activeAt, not after the restart.
func TestIntegrationRestartKeepsActiveAt(t *testing.T) {
	t.Parallel()
	x := newExporter(t)
	x.set("a", 10)
	p, _ := startPrometheus(t, x, "")
	file := integrationFile(t, "20s")
	store := t.TempDir()
	opts := engine.Options{Datasource: remote(t, p), StoragePath: store, ExternalURL: externalURL}

	e1 := start(t, opts, []string{file}, settings())
	var activeAt time.Time
	waitFor(t, 20*time.Second, "pending", func() bool {
		act := activeAlerts(e1.Engine, "QueueBacklog")
		if len(act) == 1 {
			activeAt = act[0].ActiveAt
		}
		return len(act) == 1
	})
	// The evaluation that made it pending wrote it before the next began.
	ar := ruleNamed(t, e1.Engine, "QueueBacklog").(*promrules.AlertingRule)
	waitFor(t, 20*time.Second, "the next evaluation", func() bool { return ar.GetEvaluationTimestamp().After(activeAt) })
	e1.stop()
	time.Sleep(2 * time.Second) // paged is down; Prometheus keeps scraping
	restartedAt := time.Now()

	e2 := start(t, opts, []string{file}, settings())
	want := activeAt
	// At once, before the first evaluation of the new run.
	if act := activeAlerts(e2.Engine, "QueueBacklog"); len(act) != 1 || !act[0].ActiveAt.Equal(want) || act[0].State != promrules.StatePending {
		t.Fatalf("right after the restart: %+v, want pending since %v", act, want)
	}
	waitFor(t, 30*time.Second, "firing", func() bool { return hasState(e2.Engine, promrules.StateFiring) })
	act := activeAlerts(e2.Engine, "QueueBacklog")
	if !act[0].ActiveAt.Equal(want) {
		t.Errorf("activeAt = %v, want %v", act[0].ActiveAt, want)
	}
	if !act[0].FiredAt.Before(restartedAt.Add(20 * time.Second)) {
		t.Errorf("fired at %v: waited a full 'for' from the restart at %v instead of from activeAt %v", act[0].FiredAt, restartedAt, activeAt)
	}
}

// TestIntegrationDatasourceDown: stopping Prometheus keeps the alert
// firing (stale) and fires PagedDatasourceDown; starting Prometheus again
// on the same port and data resolves it.
func TestIntegrationDatasourceDown(t *testing.T) {
	t.Parallel()
	x := newExporter(t)
	x.set("a", 10)
	p, restart := startPrometheus(t, x, "")
	file := integrationFile(t, "0s")
	rec := &recorder{}
	e := start(t, engine.Options{Datasource: remote(t, p), StoragePath: t.TempDir(), Notify: rec.notify,
		ExternalURL: externalURL, ResendDelay: 2 * time.Second}, []string{file}, settings())

	waitFor(t, 20*time.Second, "firing", func() bool { return len(named(rec.take(), "QueueBacklog")) > 0 })
	p.Stop()

	var during []*rules.Alert
	waitFor(t, 30*time.Second, "PagedDatasourceDown", func() bool {
		during = append(during, rec.take()...)
		return len(named(during, engine.DatasourceDownAlert)) > 0
	})
	for _, a := range named(during, "QueueBacklog") {
		if a.Resolved(time.Now()) {
			t.Errorf("the alert resolved while the datasource was down: %+v", a)
		}
	}
	if n := len(named(during, "QueueBacklog")); n == 0 || !named(during, "QueueBacklog")[n-1].Stale {
		t.Errorf("want the alert re-sent stale during the outage, got %d sends", n)
	}
	d := named(during, engine.DatasourceDownAlert)[0]
	if d.Labels.Get("severity") != "critical" || !strings.Contains(d.Annotations.Get("description"), "connection refused") {
		t.Errorf("PagedDatasourceDown = %s %s", d.Labels, d.Annotations)
	}
	if !hasState(e.Engine, promrules.StateFiring) {
		t.Error("the engine dropped the alert during the outage")
	}
	if st := e.RuleStatus(ruleNamed(t, e.Engine, "QueueBacklog")); !st.Stale || st.ConsecutiveFailures < 3 {
		t.Errorf("rule status = %+v", st)
	}

	restart()
	var after []*rules.Alert
	waitFor(t, 30*time.Second, "PagedDatasourceDown resolved", func() bool {
		after = append(after, rec.take()...)
		for _, a := range named(after, engine.DatasourceDownAlert) {
			if a.Resolved(time.Now()) {
				return true
			}
		}
		return false
	})
	waitFor(t, 10*time.Second, "the alert re-sent without the stale flag", func() bool {
		after = append(after, rec.take()...)
		q := named(after, "QueueBacklog")
		return len(q) > 0 && !q[len(q)-1].Stale && !q[len(q)-1].Resolved(time.Now())
	})
}

// promAlert is one alert of Prometheus's /api/v1/alerts.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
}

func promAlerts(t *testing.T, p *testbin.Process) []promAlert {
	t.Helper()
	resp, err := http.Get(p.URL + "/api/v1/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Data.Alerts
}

// TestIntegrationDifferential loads the same rule file into Prometheus and
// into the engine, over the same series, and compares the firing alerts:
// same label sets, same annotations, activeAt within one evaluation
// interval (plus one scrape interval: the engine may query a slot before
// Prometheus ingested the sample that its own rule evaluation sees).
func TestIntegrationDifferential(t *testing.T) {
	t.Parallel()
	x := newExporter(t)
	file := integrationFile(t, "2s")
	x.set("a", 10)
	x.set("b", 1)
	p, _ := startPrometheus(t, x, file)
	e := start(t, engine.Options{Datasource: remote(t, p), StoragePath: t.TempDir(), ExternalURL: externalURL}, []string{file}, settings())
	waitFor(t, 20*time.Second, "both up", func() bool { ok, _ := e.Ready(); return ok })
	x.set("b", 42.5)
	x.set("c", 7)

	key := func(m map[string]string) string { return labels.FromMap(m).String() }
	var prom []promAlert
	var ours []*promrules.Alert
	waitFor(t, 30*time.Second, "three firing alerts on both sides", func() bool {
		prom = promAlerts(t, p)
		ours = activeAlerts(e.Engine, "QueueBacklog")
		firing := func() (n, m int) {
			for _, a := range prom {
				if a.State == "firing" {
					n++
				}
			}
			for _, a := range ours {
				if a.State == promrules.StateFiring {
					m++
				}
			}
			return
		}
		n, m := firing()
		return n == 3 && m == 3
	})
	byKey := map[string]promAlert{}
	for _, a := range prom {
		byKey[key(a.Labels)] = a
	}
	var keys []string
	for _, a := range ours {
		k := a.Labels.String()
		keys = append(keys, k)
		pa, ok := byKey[k]
		if !ok {
			t.Errorf("engine alert %s not in Prometheus's alerts %v", k, prom)
			continue
		}
		if ann := a.Annotations.Map(); !mapsEqual(ann, pa.Annotations) {
			t.Errorf("annotations of %s differ:\n engine     %v\n prometheus %v", k, ann, pa.Annotations)
		}
		d := a.ActiveAt.Sub(pa.ActiveAt).Abs()
		if d > 2*time.Second {
			t.Errorf("activeAt of %s: engine %v, prometheus %v (%v apart)", k, a.ActiveAt, pa.ActiveAt, d)
		}
		t.Logf("%s activeAt engine-prometheus = %v", k, a.ActiveAt.Sub(pa.ActiveAt))
	}
	slices.Sort(keys)
	if len(keys) != 3 || !strings.Contains(keys[0], `server="a"`) || !strings.Contains(keys[1], `server="b"`) || !strings.Contains(keys[2], `server="c"`) {
		t.Errorf("engine alerts = %v", keys)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// combinedIntegrationRules share one query per evaluation in paged.
const combinedIntegrationRules = `groups:
  - name: combined
    interval: 1s
    rules:
      - alert: DepthHigh
        expr: test_queue_depth > 5
        labels:
          severity: warning
        annotations:
          summary: '{{ $labels.__name__ }} of {{ $labels.server }} at {{ $value }}'
      - alert: DepthSum
        expr: sum by (server) (test_queue_depth) > 1
        annotations:
          summary: '{{ $labels.server }} sums to {{ $value }}'
      - alert: DepthAbsent
        expr: absent(test_queue_depth{server="zz"})
      - alert: DepthShare
        expr: test_queue_depth / on() group_left max(test_queue_depth) > 0.5
        labels:
          server: overridden
          share: "yes"
      - alert: DepthNever
        expr: test_queue_depth > 1e9
`

// TestIntegrationCombinedQueries loads the same rules into Prometheus and
// into the engine with combined queries: the same alerts fire, with the
// same labels and annotations, and paged sends about one query per group
// evaluation instead of one per rule.
func TestIntegrationCombinedQueries(t *testing.T) {
	t.Parallel()
	x := newExporter(t)
	file := writeFile(t, t.TempDir(), "combined.rules.yaml", combinedIntegrationRules)
	x.set("a", 10)
	x.set("b", 2)
	x.set("c", 8)
	p, _ := startPrometheus(t, x, file)
	e := start(t, engine.Options{Datasource: remote(t, p), StoragePath: t.TempDir(), ExternalURL: externalURL, CombineQueries: true}, []string{file}, settings())
	waitFor(t, 20*time.Second, "ready", func() bool { ok, _ := e.Ready(); return ok })

	// DepthHigh: a, c; DepthSum: a, b, c; DepthAbsent. DepthShare
	// matches a and c, which collide once its labels are set: an error.
	var prom []promAlert
	var ours []string
	want := func() []string {
		var out []string
		for _, a := range prom {
			out = append(out, labels.FromMap(a.Labels).String()+" "+labels.FromMap(a.Annotations).String())
		}
		slices.Sort(out)
		return out
	}
	defer func() {
		if t.Failed() {
			t.Logf("paged:\n%s\nprometheus:\n%s", strings.Join(ours, "\n"), strings.Join(want(), "\n"))
		}
	}()
	waitFor(t, 30*time.Second, "the same firing alerts on both sides", func() bool {
		prom = promAlerts(t, p)
		ours = nil
		for _, g := range e.RuleGroups() {
			for _, r := range g.Rules() {
				for _, a := range e.ActiveAlerts(context.Background(), g, r.(*promrules.AlertingRule)) {
					ours = append(ours, a.Labels.String()+" "+a.Annotations.String())
				}
			}
		}
		slices.Sort(ours)
		return len(prom) >= 6 && slices.Equal(ours, want())
	})
	t.Logf("alerts: %q", ours)
	for _, r := range e.RuleGroups()[0].Rules() {
		if r.Name() == "DepthShare" && !strings.Contains(fmt.Sprint(r.LastError()), "same labelset after applying alert labels") {
			t.Errorf("DepthShare: last error %v", r.LastError())
		}
	}

	// One query per evaluation: the five rules share it.
	it0 := metricValue(t, e.reg, "prometheus_rule_group_iterations_total", nil)
	q0 := metricValue(t, e.reg, "paged_datasource_queries_total", map[string]string{"outcome": "success"})
	time.Sleep(5 * time.Second)
	it1 := metricValue(t, e.reg, "prometheus_rule_group_iterations_total", nil)
	q1 := metricValue(t, e.reg, "paged_datasource_queries_total", map[string]string{"outcome": "success"})
	if it1-it0 < 3 || q1-q0 > it1-it0+1 {
		t.Errorf("%v queries in %v group evaluations of five rules; want one each", q1-q0, it1-it0)
	}
}
