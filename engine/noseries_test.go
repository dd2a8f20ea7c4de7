package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
)

// Rules of a vLLM upgraded past 0.12: KVCacheOld reads the removed
// gpu_cache_usage_perc, KVCache the current name; Errors selects a
// finished_reason that has no series yet, which is normal.
const deadRules = `groups:
  - name: vllm
    interval: 10s
    rules:
      - alert: KVCacheOld
        expr: max(vllm:gpu_cache_usage_perc{job="vllm"}) > 0.9
        labels: {severity: warning}
      - alert: KVCache
        expr: max(vllm:kv_cache_usage_perc{job="vllm"}) > 0.9
        labels: {severity: warning}
      - alert: Errors
        expr: sum(rate(vllm:request_success_total{job="vllm", finished_reason="error"}[5m])) > 1
        labels: {severity: warning}
      - alert: Missing
        expr: absent(up{job="vllm"})
        labels: {severity: warning}
`

const fixedRules = `groups:
  - name: vllm
    interval: 10s
    rules:
      - alert: KVCacheOld
        expr: max(vllm:kv_cache_usage_perc{job="vllm"}) > 0.95
        labels: {severity: warning}
      - alert: KVCache
        expr: max(vllm:kv_cache_usage_perc{job="vllm"}) > 0.9
        labels: {severity: warning}
      - alert: Errors
        expr: sum(rate(vllm:request_success_total{job="vllm", finished_reason="error"}[5m])) > 1
        labels: {severity: warning}
      - alert: Missing
        expr: absent(up{job="vllm"})
        labels: {severity: warning}
`

// vllmSeries keeps the series of a V1 server fresh.
func vllmSeries(t *testing.T, ds *enginetest.Datasource) {
	ds.Set(t, `vllm:kv_cache_usage_perc{job="vllm",instance="a",model_name="m",engine="0"}`, time.Now(), 0.5)
	ds.Set(t, `vllm:request_success_total{job="vllm",instance="a",model_name="m",engine="0",finished_reason="stop"}`, time.Now(), 10)
	ds.Set(t, `up{job="vllm",instance="a"}`, time.Now(), 1)
}

// advance lets d pass in steps of 10s, keeping the series fresh.
func advance(t *testing.T, ds *enginetest.Datasource, d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		vllmSeries(t, ds)
		time.Sleep(min(10*time.Second, time.Until(end)))
		synctest.Wait()
	}
}

func noSeriesSettings(after time.Duration) engine.RuleSettings {
	return engine.RuleSettings{ExternalLabels: labels.FromStrings("cluster", "prod"), NoSeriesAfter: after}
}

// TestRuleNoSeries: the rule on a removed metric raises PagedRuleNoSeries
// after no_series_after, with the catalogue's hint; a selector whose only
// missing part is a value label does not; a reload that fixes the rule
// resolves it.
func TestRuleNoSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		dir := t.TempDir()
		file := writeFile(t, dir, "vllm.rules.yaml", deadRules)
		rec := &recorder{}
		vllmSeries(t, ds)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, EvaluationInterval: 10 * time.Second,
			DatasourceName: "http://prom:9090"}, []string{file}, noSeriesSettings(time.Minute))
		defer e.stop()

		advance(t, ds, 55*time.Second)
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 0 {
			t.Fatalf("fired before no_series_after: %+v", got[0].Labels)
		}
		advance(t, ds, 20*time.Second)
		got := named(rec.take(), engine.RuleNoSeriesAlert)
		if len(got) != 1 {
			t.Fatalf("want one PagedRuleNoSeries after 75s, got %d: %v", len(got), got)
		}
		a := got[0]
		want := labels.FromStrings("alertname", "PagedRuleNoSeries", "cluster", "prod", "group", "vllm", "rule", "KVCacheOld",
			"selector", `vllm:gpu_cache_usage_perc{job="vllm"}`, "severity", "warning")
		if !labels.Equal(a.Labels, want) {
			t.Errorf("labels %s, want %s", a.Labels, want)
		}
		desc := a.Annotations.Get("description")
		for _, s := range []string{
			`no series for vllm:gpu_cache_usage_perc{job="vllm"} at every check since`,
			"(every 10s, on http://prom:9090)",
			"Rule KVCacheOld of group vllm (" + file + ")",
			"vllm:gpu_cache_usage_perc was removed from vLLM in 0.12 (removed by PR #29330, merged 2025-11-24): use vllm:kv_cache_usage_perc",
		} {
			if !strings.Contains(desc, s) {
				t.Errorf("description lacks %q:\n%s", s, desc)
			}
		}
		if a.Annotations.Get("runbook_url") != "paged/PagedRuleNoSeries" || !strings.Contains(a.Annotations.Get("summary"), "no series for 1m") {
			t.Errorf("annotations %s", a.Annotations)
		}
		if a.Resolved(time.Now()) {
			t.Error("sent resolved")
		}
		if b := named(e.BuiltinAlerts(), engine.RuleNoSeriesAlert); len(b) != 1 {
			t.Errorf("BuiltinAlerts lists %d PagedRuleNoSeries, want 1", len(b))
		}

		// The rule is fixed; a reload resolves its alert without waiting
		// for a check.
		writeFile(t, dir, "vllm.rules.yaml", fixedRules)
		if err := e.ApplyRules([]string{file}, noSeriesSettings(time.Minute)); err != nil {
			t.Fatal(err)
		}
		advance(t, ds, 10*time.Second)
		got = named(rec.take(), engine.RuleNoSeriesAlert)
		if len(got) != 1 || !got[0].Resolved(time.Now()) || got[0].Labels.Get("rule") != "KVCacheOld" {
			t.Fatalf("want KVCacheOld's PagedRuleNoSeries resolved after the reload, got %+v", got)
		}
		advance(t, ds, 3*time.Minute)
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 0 {
			t.Errorf("fixed rules raised PagedRuleNoSeries: %v", got[0].Labels)
		}
		checks := metricValue(t, e.reg, "paged_rule_no_series_checks_total", map[string]string{"outcome": "success"})
		queries := metricValue(t, e.reg, "paged_rule_no_series_queries_total", map[string]string{"outcome": "success"})
		if checks < 20 || queries != checks {
			t.Errorf("%v checks in %v queries: want one query per check (three selectors)", checks, queries)
		}
		if v := metricValue(t, e.reg, "paged_rule_no_series_selectors", nil); v != 2 {
			t.Errorf("paged_rule_no_series_selectors = %v, want 2 (kv_cache_usage_perc and request_success_total; absent() is not checked)", v)
		}
	})
}

// TestRuleNoSeriesSeriesReturn: a selector that gets a series resolves
// its alert at the next check.
func TestRuleNoSeriesSeriesReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "vllm.rules.yaml", deadRules)
		rec := &recorder{}
		vllmSeries(t, ds)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, EvaluationInterval: 10 * time.Second},
			[]string{file}, noSeriesSettings(time.Minute))
		defer e.stop()
		advance(t, ds, 80*time.Second)
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 1 {
			t.Fatalf("want it firing, got %d", len(got))
		}
		ds.Set(t, `vllm:gpu_cache_usage_perc{job="vllm",instance="b",model_name="m"}`, time.Now(), 0.2)
		advance(t, ds, 25*time.Second)
		got := named(rec.take(), engine.RuleNoSeriesAlert)
		if len(got) != 1 || !got[0].Resolved(time.Now()) {
			t.Fatalf("want it resolved once the metric is back, got %+v", got)
		}
	})
}

// TestRuleNoSeriesDatasourceDown: checks that get no answer move no
// clock: an outage longer than no_series_after makes no rule dead, and a
// selector found empty once before the outage fires only after a check
// that got an answer.
func TestRuleNoSeriesDatasourceDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "vllm.rules.yaml", fixedRules)
		rec := &recorder{}
		vllmSeries(t, ds)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, EvaluationInterval: 10 * time.Second},
			[]string{file}, noSeriesSettings(time.Minute))
		defer e.stop()
		advance(t, ds, 30*time.Second)

		// Down for 5 minutes: the series go stale meanwhile, as if
		// Prometheus had lost them too.
		ds.SetDown(true)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 0 {
			t.Fatalf("an outage made a rule dead: %v", got[0].Labels)
		}
		if v := metricValue(t, e.reg, "paged_rule_no_series_checks_total", map[string]string{"outcome": "failure"}); v < 25 {
			t.Errorf("failed checks = %v, want one every 10s of the outage", v)
		}
		// Back, but the series are gone: the clock starts now, not when
		// the outage began.
		ds.SetDown(false)
		time.Sleep(50 * time.Second)
		synctest.Wait()
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 0 {
			t.Fatalf("fired %v after the outage, before no_series_after of answered checks: %v", 50*time.Second, got[0].Labels)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 3 {
			t.Fatalf("want the three rules firing after a minute of answered checks without series, got %d", len(got))
		}
	})
}

// TestRuleNoSeriesReloadKeepsClocks: a reload that keeps a selector keeps
// its clock; one that changes no_series_after applies it to the clocks.
func TestRuleNoSeriesReloadKeepsClocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		dir := t.TempDir()
		file := writeFile(t, dir, "vllm.rules.yaml", deadRules)
		rec := &recorder{}
		vllmSeries(t, ds)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, EvaluationInterval: 10 * time.Second},
			[]string{file}, noSeriesSettings(time.Minute))
		defer e.stop()
		advance(t, ds, 40*time.Second)
		// Another rule changes; KVCacheOld's selector stays.
		writeFile(t, dir, "vllm.rules.yaml", strings.Replace(deadRules, "> 0.9\n        labels: {severity: warning}\n      - alert: Errors", "> 0.8\n        labels: {severity: warning}\n      - alert: Errors", 1))
		if err := e.ApplyRules([]string{file}, noSeriesSettings(time.Minute)); err != nil {
			t.Fatal(err)
		}
		advance(t, ds, 35*time.Second)
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 1 {
			t.Fatalf("want KVCacheOld firing 75s after the start despite the reload at 40s, got %d", len(got))
		}
		// A longer no_series_after un-fires it.
		if err := e.ApplyRules([]string{file}, noSeriesSettings(time.Hour)); err != nil {
			t.Fatal(err)
		}
		advance(t, ds, 10*time.Second)
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 1 || !got[0].Resolved(time.Now()) {
			t.Fatalf("want it resolved under no_series_after 1h, got %+v", got)
		}
	})
}

// TestRuleNoSeriesOff: no_series_after 0 sends no query and raises
// nothing.
func TestRuleNoSeriesOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "vllm.rules.yaml", deadRules)
		rec := &recorder{}
		vllmSeries(t, ds)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, EvaluationInterval: 10 * time.Second},
			[]string{file}, noSeriesSettings(0))
		defer e.stop()
		advance(t, ds, 5*time.Minute)
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 0 {
			t.Fatalf("PagedRuleNoSeries with the check off: %v", got[0].Labels)
		}
		if v := metricValue(t, e.reg, "paged_rule_no_series_checks_total", map[string]string{"outcome": "success"}); v != 0 {
			t.Errorf("%v checks with the check off", v)
		}
		// Turned on by a reload: it starts at once.
		if err := e.ApplyRules([]string{file}, noSeriesSettings(time.Minute)); err != nil {
			t.Fatal(err)
		}
		advance(t, ds, 75*time.Second)
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 1 {
			t.Fatalf("want it firing a minute after the check was turned on, got %d", len(got))
		}
	})
}

// TestRuleNoSeriesQueries: 150 rules with distinct selectors are counted
// in two queries per check, never more than one per selector.
func TestRuleNoSeriesQueries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		var b strings.Builder
		b.WriteString("groups:\n  - name: many\n    interval: 1h\n    rules:\n")
		for i := range 150 {
			fmt.Fprintf(&b, "      - alert: R%03d\n        expr: vllm:num_requests_waiting{instance=\"i%d\"} > 10\n", i, i)
		}
		file := writeFile(t, t.TempDir(), "many.rules.yaml", b.String())
		for i := range 150 {
			if i%2 == 0 {
				ds.Set(t, fmt.Sprintf(`vllm:num_requests_waiting{instance="i%d"}`, i), time.Now(), 1)
			}
		}
		rec := &recorder{}
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, EvaluationInterval: 10 * time.Second},
			[]string{file}, noSeriesSettings(time.Minute))
		defer e.stop()
		time.Sleep(65 * time.Second)
		synctest.Wait()
		checks := metricValue(t, e.reg, "paged_rule_no_series_checks_total", map[string]string{"outcome": "success"})
		queries := metricValue(t, e.reg, "paged_rule_no_series_queries_total", map[string]string{"outcome": "success"})
		if checks != 7 || queries != 2*checks {
			t.Errorf("%v checks, %v queries: want 7 checks (at 0, 10s ... 60s) of 2 queries (100 selectors to a query)", checks, queries)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := named(rec.take(), engine.RuleNoSeriesAlert); len(got) != 75 {
			t.Errorf("want the 75 rules without series firing, got %d", len(got))
		}
	})
}

// TestCountSeries: counts by selector from a combined query, errors
// per selector when one is rejected.
func TestCountSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		ds.Set(t, `a{x="1"}`, time.Now(), 1)
		ds.Set(t, `a{x="2"}`, time.Now(), 1)
		ds.Set(t, `b`, time.Now(), 1)
		before := ds.Queries()
		got := engine.CountSeries(t.Context(), ds, []string{`a`, `b`, `c`, `a{x="2"}`}, time.Now())
		if n := ds.Queries() - before; n != 1 {
			t.Errorf("%d queries, want 1", n)
		}
		want := []int{2, 1, 0, 1}
		for i, w := range want {
			if got[i].Err != nil || got[i].Series != w {
				t.Errorf("[%d] = %+v, want %d series", i, got[i], w)
			}
		}
		ds.SetDown(true)
		got = engine.CountSeries(t.Context(), ds, []string{`a`, `b`}, time.Now())
		for i := range got {
			if got[i].Err == nil {
				t.Errorf("[%d] no error while the datasource is down", i)
			}
		}
	})
}

// TestRuleNoSeriesDescription: the description says what was counted for
// a selector whose value labels were dropped and whose buckets are
// counted through _count.
func TestRuleNoSeriesDescription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "tpot.rules.yaml", `groups:
  - name: latency
    interval: 10s
    rules:
      - alert: SlowTokens
        expr: sum(rate(vllm:time_per_output_token_seconds_bucket{job="vllm", le="1"}[5m])) < 0.9
`)
		rec := &recorder{}
		vllmSeries(t, ds)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, EvaluationInterval: 10 * time.Second},
			[]string{file}, noSeriesSettings(time.Minute))
		defer e.stop()
		advance(t, ds, 75*time.Second)
		got := named(rec.take(), engine.RuleNoSeriesAlert)
		if len(got) != 1 {
			t.Fatalf("want one PagedRuleNoSeries, got %d", len(got))
		}
		if s := got[0].Labels.Get("selector"); s != `vllm:time_per_output_token_seconds_bucket{job="vllm",le="1"}` {
			t.Errorf("selector label %s", s)
		}
		desc := got[0].Annotations.Get("description")
		for _, want := range []string{
			`no series for vllm:time_per_output_token_seconds_count{job="vllm"} at every check since`,
			`which stands for the rule's selector vllm:time_per_output_token_seconds_bucket{job="vllm",le="1"} without its matchers on le (they only pick among the metric's series), counted through the histogram's _count series (the same targets as its buckets): the metric itself is not there.`,
			"use vllm:inter_token_latency_seconds_bucket.",
		} {
			if !strings.Contains(desc, want) {
				t.Errorf("description lacks %q:\n%s", want, desc)
			}
		}
	})
}
