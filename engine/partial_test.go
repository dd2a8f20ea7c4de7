package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
	"github.com/pagedhq/paged/rules"
)

const twoGroups = queueRules + `  - name: gpu
    interval: 10s
    rules:
      - alert: GPUHot
        expr: gpu_temp > 80
        labels:
          severity: critical
`

// TestPartialFailure: one rule's query is rejected by the datasource while
// the others succeed: that rule is reported stale with its error and keeps
// its alert; the datasource is not declared down.
func TestPartialFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		var rejectGPU bool
		var mu = make(chan struct{}, 1)
		mu <- struct{}{}
		wrapped := engine.DatasourceFunc(func(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
			<-mu
			reject := rejectGPU
			mu <- struct{}{}
			if reject && strings.Contains(expr, "gpu_temp") {
				return nil, errors.New("execution: query too expensive")
			}
			return ds.Query(ctx, expr, ts)
		})
		file := writeFile(t, t.TempDir(), "r.rules.yaml", twoGroups)
		rec := &recorder{}
		ds.Set(t, `gpu_temp{gpu="0"}`, time.Now(), 90)
		e := start(t, engine.Options{Datasource: wrapped, StoragePath: t.TempDir(), Notify: rec.notify}, []string{file}, settings())
		defer e.stop()
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if got := named(rec.take(), "GPUHot"); len(got) != 1 || got[0].Stale {
			t.Fatalf("want GPUHot firing, got %+v", got)
		}
		<-mu
		rejectGPU = true
		mu <- struct{}{}
		time.Sleep(60 * time.Second)
		synctest.Wait()
		got := rec.take()
		hot := named(got, "GPUHot")
		if len(hot) == 0 || !hot[0].Stale || hot[0].Resolved(time.Now()) {
			t.Errorf("want GPUHot kept firing and stale, got %+v", hot)
		}
		if len(named(got, engine.DatasourceDownAlert)) != 0 {
			t.Error("a rejected query declared the datasource down")
		}
		st := e.RuleStatus(ruleNamed(t, e.Engine, "GPUHot"))
		var de *engine.DatasourceError
		if !st.Stale || st.ConsecutiveFailures < 5 || !errors.As(st.LastError, &de) || de.Kind != engine.KindQuery ||
			!strings.Contains(st.LastError.Error(), "query too expensive") {
			t.Errorf("GPUHot status = %+v", st)
		}
		if st := e.RuleStatus(ruleNamed(t, e.Engine, "QueueBacklog")); st.Stale {
			t.Errorf("the healthy rule is stale: %+v", st)
		}
		r := ruleNamed(t, e.Engine, "GPUHot")
		if r.Health() != promrules.HealthBad {
			t.Errorf("Prometheus health of the failing rule = %v", r.Health())
		}
		if ok, why := e.Ready(); !ok {
			t.Errorf("not ready: %s", why)
		}
		if v := metricValue(t, e.reg, "paged_rules_stale", map[string]string{"rule_group": promrules.GroupKey(file, "gpu")}); v != 1 {
			t.Errorf("paged_rules_stale{gpu} = %v", v)
		}
		if v := metricValue(t, e.reg, "paged_datasource_queries_total", map[string]string{"outcome": "query"}); v < 5 {
			t.Errorf("rejected queries = %v", v)
		}
	})
}

// TestRestartWhileDatasourceDown: after a restart with the datasource
// down the engine holds the restored alerts firing: it sends them at
// start, then stale at the first failed evaluation, so that they do not
// expire at the receiver.
func TestRestartWhileDatasourceDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		store := t.TempDir()
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		rec := &recorder{}
		opts := engine.Options{Datasource: ds, StoragePath: store, Notify: rec.notify}
		e1 := start(t, opts, []string{file}, settings())
		time.Sleep(85 * time.Second)
		synctest.Wait()
		first := named(rec.take(), "QueueBacklog")
		if len(first) != 1 {
			t.Fatalf("want one firing notification, got %d", len(first))
		}
		e1.stop()

		ds.SetDown(true)
		e2 := start(t, opts, []string{file}, settings())
		defer e2.stop()
		time.Sleep(25 * time.Second)
		synctest.Wait()
		got := named(rec.take(), "QueueBacklog")
		if len(got) != 2 {
			t.Fatalf("want the previous alert sent at start and once stale, got %+v", got)
		}
		for i, a := range got {
			if a.Stale != (i == 1) || a.Resolved(time.Now()) || !a.StartsAt.Equal(first[0].StartsAt) || !labels.Equal(a.Labels, first[0].Labels) {
				t.Errorf("send %d after the restart: %+v, first %+v", i, a, first[0])
			}
		}

		// When the datasource answers again the alert comes back with its
		// original activeAt, firing at once, not 'for' after the recovery.
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		ds.SetDown(false)
		time.Sleep(25 * time.Second)
		synctest.Wait()
		act := activeAlerts(e2.Engine, "QueueBacklog")
		if len(act) != 1 || act[0].State != promrules.StateFiring {
			t.Fatalf("after recovery: %+v", act)
		}
		if want := first[0].StartsAt.Add(-time.Minute).Truncate(time.Second); act[0].ActiveAt.After(want.Add(time.Second)) {
			t.Errorf("activeAt after recovery = %v, want the original (about %v)", act[0].ActiveAt, want)
		}
		got = named(rec.take(), "QueueBacklog")
		if len(got) == 0 || got[len(got)-1].Stale || !got[len(got)-1].StartsAt.Equal(first[0].StartsAt) {
			t.Errorf("after recovery want the alert re-sent, not stale, original StartsAt: %+v", got)
		}
	})
}

func TestConsoleSink(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sink := engine.ConsoleSink(&buf, func() time.Time { return now })
	sink(context.Background(), []*rules.Alert{
		{Labels: labels.FromStrings("alertname", "KVCacheFull", "severity", "critical"), Annotations: labels.FromStrings("summary", "KV cache at 99%"),
			StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Minute)},
		{Labels: labels.FromStrings("alertname", "QueueBacklog"), StartsAt: now.Add(-time.Hour), EndsAt: now.Add(-time.Second)},
		{Labels: labels.FromStrings("alertname", "TTFTHigh"), StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour), Stale: true},
	})
	want := `FIRING KVCacheFull{severity="critical"} since=2026-11-29T11:59:00Z summary="KV cache at 99%"
RESOLVED QueueBacklog{} since=2026-11-29T11:00:00Z
FIRING TTFTHigh{} stale since=2026-11-29T11:00:00Z
`
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestHostileState: damaged alert state does not stop the engine.
func TestHostileState(t *testing.T) {
	store := t.TempDir()
	if err := os.MkdirAll(filepath.Join(store, "alert-state"), 0o750); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(store, "alert-state"), "state", "\x07\x00\x00\x00garbage")
	writeFile(t, filepath.Join(store, "alert-state"), "state.wal.00000001", "\xff\xff\xff\xff")
	e, err := engine.New(engine.Options{Datasource: engine.DatasourceFunc(nil), StoragePath: store})
	if err != nil {
		t.Fatalf("damaged alert state stopped the engine: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The storage path is a file: a clear error, no panic.
	file := writeFile(t, t.TempDir(), "not-a-dir", "x")
	if _, err := engine.New(engine.Options{Datasource: engine.DatasourceFunc(nil), StoragePath: file}); err == nil || !strings.Contains(err.Error(), "storage path") {
		t.Errorf("storage path is a file: %v", err)
	}
}

// TestPrometheusRuleCRD: the engine loads a PrometheusRule manifest through
// paged's loader and evaluates it.
func TestPrometheusRuleCRD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		crd := `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: vllm
spec:
  groups:
    - name: crd
      rules:
        - alert: KVCacheFull
          expr: vllm:kv_cache_usage_perc > 0.95
          labels: {severity: critical}
          annotations: {summary: 'cache {{ $value | humanizePercentage }}'}
`
		file := writeFile(t, t.TempDir(), "vllm.yaml", crd)
		ds.Set(t, `vllm:kv_cache_usage_perc{model_name="llama"}`, time.Now(), 0.99)
		rec := &recorder{}
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, EvaluationInterval: 15 * time.Second}, []string{file}, engine.RuleSettings{})
		defer e.stop()
		time.Sleep(20 * time.Second)
		synctest.Wait()
		got := named(rec.take(), "KVCacheFull")
		if len(got) != 1 || got[0].Annotations.Get("summary") != "cache 99%" {
			t.Fatalf("got %+v", got)
		}
		if g := e.RuleGroups(); len(g) != 1 || g[0].Interval() != 15*time.Second {
			t.Errorf("group interval should default to Options.EvaluationInterval")
		}
	})
}

// TestDatasourceDownAcrossRestart: PagedDatasourceDown fired before a
// restart is notified again after it while the datasource stays down: not
// at once (the receiver still holds it), but by the next resend, with its
// first StartsAt.
func TestDatasourceDownAcrossRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		dir := t.TempDir()
		file := writeFile(t, dir, "queue.rules.yaml", queueRules)
		state := t.TempDir()
		ds.SetDown(true)
		rec := &recorder{}
		e1 := start(t, engine.Options{Datasource: ds, StoragePath: state, Notify: rec.notify}, []string{file}, settings())
		time.Sleep(45 * time.Second)
		synctest.Wait()
		first := named(rec.take(), engine.DatasourceDownAlert)
		if len(first) == 0 {
			t.Fatal("PagedDatasourceDown did not fire before the restart")
		}
		e1.stop()

		e2 := start(t, engine.Options{Datasource: ds, StoragePath: state, Notify: rec.notify}, []string{file}, settings())
		defer e2.stop()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		again := named(rec.take(), engine.DatasourceDownAlert)
		if len(again) == 0 {
			t.Fatal("PagedDatasourceDown was not notified again within 2 minutes after the restart")
		}
		if again[0].Resolved(time.Now()) || !again[0].StartsAt.Equal(first[0].StartsAt) {
			t.Errorf("after the restart: %+v, first StartsAt %v", again[0], first[0].StartsAt)
		}
	})
}
