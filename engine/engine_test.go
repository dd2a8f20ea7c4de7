package engine_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
)

const queueRules = `groups:
  - name: queue
    interval: 10s
    rules:
      - alert: QueueBacklog
        expr: queue_depth > 5
        for: 1m
        labels:
          severity: warning
        annotations:
          summary: 'Queue on {{ $labels.instance }} is {{ $value }}'
          description: 'cluster {{ $externalLabels.cluster }}, see {{ $externalURL }}'
          runbook_url: 'vllm/QueueBacklog'
`

func settings() engine.RuleSettings {
	return engine.RuleSettings{ExternalLabels: labels.FromStrings("cluster", "prod")}
}

// TestLifecycle: pending, firing after for, resolved; annotations and
// external labels rendered; never stale.
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		dir := t.TempDir()
		file := writeFile(t, dir, "queue.rules.yaml", queueRules)
		rec := &recorder{}
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		e := start(t, engine.Options{
			Datasource:  ds,
			StoragePath: t.TempDir(),
			Notify:      rec.notify,
			ExternalURL: "http://paged.example:9095",
		}, []string{file}, settings())
		defer e.stop()

		time.Sleep(25 * time.Second)
		synctest.Wait()
		act := activeAlerts(e.Engine, "QueueBacklog")
		if len(act) != 1 || act[0].State != promrules.StatePending {
			t.Fatalf("after 25s: want one pending alert, got %+v", act)
		}
		if got := rec.take(); len(got) != 0 {
			t.Fatalf("pending alert was sent: %+v", got[0])
		}
		activeAt := act[0].ActiveAt

		time.Sleep(60 * time.Second)
		synctest.Wait()
		got := named(rec.take(), "QueueBacklog")
		if len(got) != 1 {
			t.Fatalf("want one firing notification, got %d", len(got))
		}
		a := got[0]
		if a.Resolved(time.Now()) || a.Stale {
			t.Fatalf("want firing, not stale: %+v", a)
		}
		if !a.StartsAt.After(activeAt) || a.StartsAt.Sub(activeAt) < time.Minute {
			t.Errorf("StartsAt %v should be at least for=1m after activeAt %v", a.StartsAt, activeAt)
		}
		wantLabels := labels.FromStrings("alertname", "QueueBacklog", "cluster", "prod", "instance", "a", "severity", "warning")
		if !labels.Equal(a.Labels, wantLabels) {
			t.Errorf("labels = %s, want %s", a.Labels, wantLabels)
		}
		if s := a.Annotations.Get("summary"); s != "Queue on a is 12" {
			t.Errorf("summary = %q", s)
		}
		if s := a.Annotations.Get("description"); s != "cluster prod, see http://paged.example:9095" {
			t.Errorf("description = %q", s)
		}
		if !strings.HasPrefix(a.GeneratorURL, "http://paged.example:9095/graph?g0.expr=queue_depth") {
			t.Errorf("generator URL = %q", a.GeneratorURL)
		}
		if a.EndsAt.Sub(time.Now()) < time.Minute {
			t.Errorf("EndsAt %v should leave room for re-sends", a.EndsAt)
		}

		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 1)
		time.Sleep(15 * time.Second)
		synctest.Wait()
		got = named(rec.take(), "QueueBacklog")
		if len(got) != 1 || !got[0].Resolved(time.Now()) {
			t.Fatalf("want one resolved notification, got %+v", got)
		}
		if got[0].StartsAt != a.StartsAt {
			t.Errorf("resolved StartsAt %v != firing StartsAt %v", got[0].StartsAt, a.StartsAt)
		}
		if v := metricValue(t, e.reg, "paged_datasource_queries_total", map[string]string{"outcome": "success"}); v < 10 {
			t.Errorf("success queries = %v", v)
		}
		if ok, why := e.Ready(); !ok {
			t.Errorf("not ready: %s", why)
		}
	})
}

// TestDatasourceDown: a failing datasource keeps the alert firing, marked
// stale; PagedDatasourceDown fires after 3 failed evaluations and resolves
// when queries succeed again.
func TestDatasourceDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		rec := &recorder{}
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify}, []string{file}, settings())
		defer e.stop()

		time.Sleep(85 * time.Second)
		synctest.Wait()
		if got := named(rec.take(), "QueueBacklog"); len(got) != 1 || got[0].Stale {
			t.Fatalf("want the alert firing before the outage, got %+v", got)
		}

		ds.SetDown(true)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		got := rec.take()
		q := named(got, "QueueBacklog")
		if len(q) != 1 || !q[0].Stale || q[0].Resolved(time.Now()) {
			t.Fatalf("first failed evaluation: want the alert re-sent stale and firing, got %+v", q)
		}
		if len(named(got, engine.DatasourceDownAlert)) != 0 {
			t.Fatal("PagedDatasourceDown fired after one failed evaluation")
		}
		st := e.RuleStatus(ruleNamed(t, e.Engine, "QueueBacklog"))
		if !st.Stale || st.ConsecutiveFailures != 1 || st.LastError == nil || !strings.Contains(st.LastError.Error(), "datasource unavailable") {
			t.Errorf("rule status = %+v", st)
		}

		time.Sleep(2*time.Minute + 5*time.Second)
		synctest.Wait()
		got = rec.take()
		for _, a := range named(got, "QueueBacklog") {
			if !a.Stale || a.Resolved(time.Now()) {
				t.Errorf("during the outage the alert must stay firing and stale: %+v", a)
			}
		}
		if n := len(named(got, "QueueBacklog")); n < 1 {
			t.Errorf("want the stale alert re-sent every resend delay, got %d sends in 2m", n)
		}
		down := named(got, engine.DatasourceDownAlert)
		if len(down) == 0 {
			t.Fatal("PagedDatasourceDown did not fire")
		}
		d := down[0]
		if d.Labels.Get("severity") != "critical" || d.Labels.Get("cluster") != "prod" || d.Resolved(time.Now()) {
			t.Errorf("PagedDatasourceDown = %+v", d)
		}
		for _, k := range []string{"summary", "description", "runbook_url"} {
			if d.Annotations.Get(k) == "" {
				t.Errorf("PagedDatasourceDown lacks annotation %s", k)
			}
		}
		if !strings.Contains(d.Annotations.Get("description"), "enginetest: datasource is down") {
			t.Errorf("description does not carry the last error: %q", d.Annotations.Get("description"))
		}
		if act := activeAlerts(e.Engine, "QueueBacklog"); len(act) != 1 || act[0].State != promrules.StateFiring {
			t.Errorf("engine state during outage: %+v", act)
		}
		if v := metricValue(t, e.reg, "paged_alerts_stale", nil); v != 1 {
			t.Errorf("paged_alerts_stale = %v", v)
		}
		if v := metricValue(t, e.reg, "paged_datasource_up", nil); v != 0 {
			t.Errorf("paged_datasource_up = %v", v)
		}
		if st := e.DatasourceStatus(); !st.Down || st.ConsecutiveFailures < 3 {
			t.Errorf("datasource status = %+v", st)
		}

		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		ds.SetDown(false)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		got = rec.take()
		down = named(got, engine.DatasourceDownAlert)
		if len(down) != 1 || !down[0].Resolved(time.Now()) {
			t.Fatalf("PagedDatasourceDown should resolve once queries succeed, got %+v", down)
		}
		if q := named(got, "QueueBacklog"); len(q) != 1 || q[0].Stale || q[0].Resolved(time.Now()) {
			t.Errorf("after recovery the alert is re-sent firing without the stale flag, got %+v", q)
		}
		if st := e.RuleStatus(ruleNamed(t, e.Engine, "QueueBacklog")); st.Stale || st.LastError != nil {
			t.Errorf("rule status after recovery = %+v", st)
		}
	})
}

// TestRestartKeepsActiveAt: a restart in the middle of 'for' keeps the
// alert's activeAt (Prometheus alone would move it by the downtime, and
// would show it only after its second evaluation), and the alert fires at
// activeAt + for.
func TestRestartKeepsActiveAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		store := t.TempDir()
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		opts := engine.Options{Datasource: ds, StoragePath: store}

		e1 := start(t, opts, []string{file}, settings())
		time.Sleep(25 * time.Second)
		synctest.Wait()
		act := activeAlerts(e1.Engine, "QueueBacklog")
		if len(act) != 1 || act[0].State != promrules.StatePending {
			t.Fatalf("want pending before restart, got %+v", act)
		}
		activeAt := act[0].ActiveAt
		e1.stop()

		time.Sleep(10 * time.Second) // paged is down
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		rec := &recorder{}
		opts.Notify = rec.notify
		e2 := start(t, opts, []string{file}, settings())
		defer e2.stop()
		// Before any evaluation of the new run: pending, same activeAt.
		act = activeAlerts(e2.Engine, "QueueBacklog")
		if len(act) != 1 || act[0].State != promrules.StatePending || !act[0].ActiveAt.Equal(activeAt) {
			t.Fatalf("right after the restart: %+v, want pending since %v", act, activeAt)
		}
		for range 6 {
			time.Sleep(10 * time.Second)
			ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
			synctest.Wait()
			act = activeAlerts(e2.Engine, "QueueBacklog")
			if len(act) != 1 || !act[0].ActiveAt.Equal(activeAt) {
				t.Fatalf("activeAt after restart = %+v, want %v", act, activeAt)
			}
			// for is 1m, the group evaluates every 10s.
			since := time.Since(activeAt)
			if st := act[0].State; (st == promrules.StateFiring && since < time.Minute) || (st == promrules.StatePending && since >= time.Minute+10*time.Second) {
				t.Fatalf("%v after activeAt: state %v", since, st)
			}
		}
		if act[0].State != promrules.StateFiring {
			t.Errorf("not firing %v after activeAt", time.Since(activeAt))
		}
		if got := named(rec.take(), "QueueBacklog"); len(got) != 1 || got[0].Stale {
			t.Errorf("want one firing notification, got %+v", got)
		}
	})
}

// TestRestartDoesNotRenotify: an alert sent just before a restart is
// firing at once after it, with its firing time; the restarted engine
// sends it once at start (a receiver that restarted too holds nothing),
// with its original StartsAt, and then not again until the resend delay.
func TestRestartDoesNotRenotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		store := t.TempDir()
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		rec := &recorder{}
		opts := engine.Options{Datasource: ds, StoragePath: store, Notify: rec.notify, ResendDelay: 2 * time.Minute}

		e1 := start(t, opts, []string{file}, settings())
		time.Sleep(85 * time.Second)
		synctest.Wait()
		first := named(rec.take(), "QueueBacklog")
		if len(first) != 1 {
			t.Fatalf("want the alert to fire once before restart, got %d", len(first))
		}
		before := activeAlerts(e1.Engine, "QueueBacklog")
		e1.stop()

		time.Sleep(5 * time.Second)
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		e2 := start(t, opts, []string{file}, settings())
		defer e2.stop()
		act := activeAlerts(e2.Engine, "QueueBacklog")
		if len(act) != 1 || act[0].State != promrules.StateFiring || !act[0].ActiveAt.Equal(before[0].ActiveAt) || !act[0].FiredAt.Equal(before[0].FiredAt) {
			t.Fatalf("right after the restart: %+v, want firing as before: %+v", act, before)
		}
		synctest.Wait()
		sent := named(rec.take(), "QueueBacklog")
		if len(sent) != 1 || !sent[0].StartsAt.Equal(first[0].StartsAt) || sent[0].Resolved(time.Now()) {
			t.Fatalf("at start: sent %+v, want the restored alert once with StartsAt %v", sent, first[0].StartsAt)
		}
		time.Sleep(60 * time.Second)
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		synctest.Wait()
		if got := named(rec.take(), "QueueBacklog"); len(got) != 0 {
			t.Fatalf("restart re-sent the firing alert %d more times within the resend delay", len(got))
		}
		if act := activeAlerts(e2.Engine, "QueueBacklog"); len(act) != 1 || act[0].State != promrules.StateFiring {
			t.Fatalf("the restarted engine should hold the alert firing: %+v", act)
		}
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		time.Sleep(100 * time.Second)
		synctest.Wait()
		got := named(rec.take(), "QueueBacklog")
		if len(got) == 0 {
			t.Fatal("the alert was never re-sent after the resend delay")
		}
		if !got[0].StartsAt.Equal(first[0].StartsAt) {
			t.Errorf("re-sent StartsAt %v, want the original %v", got[0].StartsAt, first[0].StartsAt)
		}
	})
}

// TestApplyRulesFirstLoadFails: when the first load fails there are no
// previous rules to keep, and the error says so, with every problem at its
// file:line:col.
func TestApplyRulesFirstLoadFails(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.rules.yaml", "groups:\n  - name: broken\n    rules:\n      - alert: Broken\n        expr: rate(x[5m]\n      - alert: Template\n        expr: up == 0\n        annotations:\n          summary: \"{{ .Foo \"\n")
	e, err := engine.New(engine.Options{Datasource: enginetest.New(t), StoragePath: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = e.ApplyRules([]string{bad}, settings())
	var le *engine.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("ApplyRules = %v, want a LoadError", err)
	}
	if le.Kept || !strings.HasPrefix(err.Error(), "no rules loaded: ") || strings.Contains(err.Error(), "kept") {
		t.Errorf("first load: %v, want \"no rules loaded\"", err)
	}
	var got []string
	for _, p := range le.Problems() {
		got = append(got, strings.TrimPrefix(p.Error(), dir+string(filepath.Separator)))
	}
	want := []string{
		"bad.rules.yaml:5:19: error [promql/syntax] could not parse expression: unclosed left parenthesis",
		`bad.rules.yaml:9:21: error [alerts/template] annotation "summary": template does not parse: unclosed action`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ready, _ := e.Ready(); ready {
		t.Error("ready with no rules loaded")
	}

	good := writeFile(t, dir, "good.rules.yaml", "groups:\n  - name: ok\n    rules:\n      - alert: Ok\n        expr: vector(1) > 2\n")
	if err := e.ApplyRules([]string{good}, settings()); err != nil {
		t.Fatal(err)
	}
	err = e.ApplyRules([]string{bad}, settings())
	if !errors.As(err, &le) || !le.Kept || !strings.HasPrefix(err.Error(), "previous rules kept: ") {
		t.Errorf("a later load: %v, want \"previous rules kept\"", err)
	}
}

// TestApplyRulesKeepsOldOnError: a broken file leaves the running rules
// and their state alone, and the error names the file and line.
func TestApplyRulesKeepsOldOnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		dir := t.TempDir()
		file := writeFile(t, dir, "queue.rules.yaml", queueRules)
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir()}, []string{file}, settings())
		defer e.stop()
		time.Sleep(25 * time.Second)
		synctest.Wait()
		before := activeAlerts(e.Engine, "QueueBacklog")
		if len(before) != 1 {
			t.Fatalf("want a pending alert, got %+v", before)
		}

		bad := writeFile(t, dir, "bad.rules.yaml", "groups:\n  - name: broken\n    rules:\n      - alert: Broken\n        expr: rate(x[5m]\n")
		err := e.ApplyRules([]string{file, bad}, settings())
		if err == nil {
			t.Fatal("ApplyRules accepted a broken file")
		}
		if !strings.Contains(err.Error(), "bad.rules.yaml") || !strings.Contains(err.Error(), "previous rules kept") {
			t.Errorf("error should name the file and say the old rules stay: %v", err)
		}
		err = e.ApplyRules([]string{filepath.Join(dir, "missing-*.yaml")}, settings())
		if err == nil || !strings.Contains(err.Error(), "matches no file") {
			t.Errorf("a glob matching nothing: %v", err)
		}
		groups := e.RuleGroups()
		if len(groups) != 1 || groups[0].Name() != "queue" {
			t.Fatalf("groups after failed apply: %d", len(groups))
		}

		// A good reload that adds a group keeps the unchanged group's state.
		other := writeFile(t, dir, "other.rules.yaml", "groups:\n  - name: other\n    rules:\n      - alert: Other\n        expr: vector(1) > 2\n")
		if err := e.ApplyRules([]string{file, other}, settings()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		after := activeAlerts(e.Engine, "QueueBacklog")
		if len(after) != 1 || !after[0].ActiveAt.Equal(before[0].ActiveAt) {
			t.Errorf("reload lost the unchanged group's state: before %+v after %+v", before, after)
		}
		if len(e.RuleGroups()) != 2 {
			t.Errorf("want 2 groups after reload, got %d", len(e.RuleGroups()))
		}
	})
}
