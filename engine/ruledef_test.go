package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
	"github.com/pagedhq/paged/rules"
)

// trickyRules exercise what paged's handling of labels and annotations
// (ruledef.go) must keep as Prometheus has it: group labels, a rule label
// that overrides a sample label, $labels with __name__ and the overridden
// label's sample value, $value, $externalLabels, $externalURL, query, a
// template that fails, a templated label (left to Prometheus), repeated
// alert names, label sets that collide only after the rule's labels are
// set, and keep_firing_for (an alert kept without a sample).
const trickyRules = `groups:
  - name: tricky
    interval: 10s
    labels:
      team: llm
    rules:
      - alert: Load
        expr: load > 5
        for: 30s
        labels:
          severity: warning
          tier: overridden
        annotations:
          summary: '{{ $labels.__name__ }} on {{ $labels.instance }} (tier {{ $labels.tier }}) is {{ $value | humanize }}'
          where: '{{ $externalLabels.cluster }} {{ $externalURL }}'
          peers: '{{ with query "count(load)" }}{{ . | first | value }}{{ end }} servers report load'
          broken: '{{ .Nope.Deeper }}'
          static: 'see the runbook'
      - alert: Graded
        expr: load > 5
        labels:
          severity: '{{ if gt $value 100.0 }}critical{{ else }}warning{{ end }}'
        annotations:
          summary: 'load {{ $value }} on {{ $labels.instance }}'
      - alert: Load
        expr: load > 100
        labels:
          severity: critical
      - alert: Collide
        expr: load > 5
        labels:
          instance: same
          tier: same
        annotations:
          summary: 'never sent'
      - alert: Bare
        expr: load > 150
      - alert: Sticky
        expr: load > 5
        keep_firing_for: 1m
        labels:
          severity: info
        annotations:
          summary: '{{ $labels.__name__ }} of {{ $labels.instance }} was at {{ $value }}'
`

// TestTakenOverRulesMatchPrometheus evaluates trickyRules with paged's
// engine and with Prometheus's own rule groups (loaded by a rules Manager
// and evaluated directly, as Prometheus would) over the same data, and
// compares every rule's definition, health and error, and every alert's
// labels, state, value and annotations, with one query per rule and with
// the group's rules combined into one query (combine.go).
func TestTakenOverRulesMatchPrometheus(t *testing.T) {
	for _, combine := range []bool{false, true} {
		t.Run(fmt.Sprintf("CombineQueries=%v", combine), func(t *testing.T) {
			takenOverRulesMatchPrometheus(t, combine)
		})
	}
}

func takenOverRulesMatchPrometheus(t *testing.T, combine bool) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		now := time.Now()
		ds.Set(t, `load{instance="a",tier="gold"}`, now, 12)
		ds.Set(t, `load{instance="b",tier="silver"}`, now, 7)
		ds.Set(t, `load{instance="c"}`, now, 200)
		file := writeFile(t, t.TempDir(), "tricky.rules.yaml", trickyRules)
		const extURL = "http://paged.example:9095"
		rec := &recorder{}
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, ExternalURL: extURL, CombineQueries: combine}, []string{file}, settings())
		defer e.stop()

		// Prometheus: the same file, groups evaluated every 10s.
		db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		u, _ := url.Parse(extURL)
		mgr := promrules.NewManager(&promrules.ManagerOptions{
			QueryFunc:    ds.Query,
			NotifyFunc:   func(context.Context, string, ...*promrules.Alert) {},
			Context:      context.Background(),
			AppendableV2: db,
			Queryable:    db,
			ExternalURL:  u,
			Logger:       slog.New(slog.DiscardHandler),
			Registerer:   prometheus.NewRegistry(),
			Parser:       parser.NewParser(parser.Options{}),
		})
		groups, errs := mgr.LoadGroups(10*time.Second, settings().ExternalLabels, extURL, nil, false, file)
		if errs != nil {
			t.Fatal(errs)
		}
		ref := groups[promrules.GroupKey(file, "tricky")]
		for i := range 7 {
			ref.Eval(context.Background(), now.Add(time.Duration(i)*10*time.Second))
		}

		time.Sleep(70 * time.Second)
		synctest.Wait()
		g := e.RuleGroups()[0]
		ours := g.Rules()
		refRules := ref.Rules()
		if len(ours) != len(refRules) {
			t.Fatalf("paged has %d rules, Prometheus %d", len(ours), len(refRules))
		}
		compareAll := func(phase string) {
			t.Helper()
			for i, r := range refRules {
				rr := r.(*promrules.AlertingRule)
				or := ours[i].(*promrules.AlertingRule)
				name := fmt.Sprintf("%s: rule %d (%s)", phase, i, rr.Name())
				lbls, ann := e.RuleDefinition(g, or)
				if !labels.Equal(lbls, rr.Labels()) || !labels.Equal(ann, rr.Annotations()) {
					t.Errorf("%s: definition labels %s annotations %s, Prometheus %s %s", name, lbls, ann, rr.Labels(), rr.Annotations())
				}
				if or.Health() != rr.Health() || fmt.Sprint(or.LastError()) != fmt.Sprint(rr.LastError()) {
					t.Errorf("%s: health %s (%v), Prometheus %s (%v)", name, or.Health(), or.LastError(), rr.Health(), rr.LastError())
				}
				got := e.ActiveAlerts(context.Background(), g, or)
				want := rr.ActiveAlerts()
				sortAlerts(got)
				sortAlerts(want)
				if len(got) != len(want) {
					t.Errorf("%s: %d alerts, Prometheus %d", name, len(got), len(want))
					continue
				}
				for j := range want {
					if !labels.Equal(got[j].Labels, want[j].Labels) || got[j].State != want[j].State || got[j].Value != want[j].Value {
						t.Errorf("%s: alert %s %s %v, Prometheus %s %s %v", name, got[j].Labels, got[j].State, got[j].Value, want[j].Labels, want[j].State, want[j].Value)
					}
					if !labels.Equal(got[j].Annotations, want[j].Annotations) {
						t.Errorf("%s: annotations of %s:\n paged      %s\n Prometheus %s", name, got[j].Labels, got[j].Annotations, want[j].Annotations)
					}
				}
			}
		}
		compareAll("all firing")

		// The notifications carry the same annotations.
		sent := map[string]labels.Labels{}
		for _, a := range rec.take() {
			sent[labels.NewBuilder(a.Labels).Del("cluster").Labels().String()] = a.Annotations
		}
		checked := 0
		for _, r := range refRules {
			for _, a := range r.(*promrules.AlertingRule).ActiveAlerts() {
				if a.State != promrules.StateFiring {
					continue
				}
				ann, ok := sent[a.Labels.String()]
				if !ok {
					t.Errorf("firing alert %s was not sent", a.Labels)
					continue
				}
				checked++
				if !labels.Equal(ann, a.Annotations) {
					t.Errorf("sent annotations of %s:\n paged      %s\n Prometheus %s", a.Labels, ann, a.Annotations)
				}
			}
		}
		// Load: a, b, c; Graded: a, b, c; Load (critical): c; Bare: c;
		// Sticky: a, b, c.
		if checked != 11 {
			t.Errorf("compared %d firing alerts, want 11", checked)
		}
		if !strings.Contains(fmt.Sprint(ruleNamed(t, e.Engine, "Collide").LastError()), "vector contains metrics with the same labelset after applying alert labels") {
			t.Errorf("Collide: last error %v", ruleNamed(t, e.Engine, "Collide").LastError())
		}

		// b drops below every threshold and a rises: b's alerts resolve,
		// but Sticky keeps b firing for a minute with the annotations of
		// its last sample; a's annotations follow the new value.
		later := time.Now()
		ds.Set(t, `load{instance="a",tier="gold"}`, later, 13)
		ds.Set(t, `load{instance="b",tier="silver"}`, later, 1)
		for i := range 3 {
			ref.Eval(context.Background(), later.Add(time.Duration(i)*10*time.Second))
		}
		time.Sleep(25 * time.Second)
		synctest.Wait()
		compareAll("b dropped")
		var sticky *promrules.Alert
		for _, a := range activeAlerts(e.Engine, "Sticky") {
			if a.Labels.Get("instance") == "b" {
				sticky = a
			}
		}
		if sticky == nil || sticky.State != promrules.StateFiring || sticky.KeepFiringSince.IsZero() ||
			sticky.Annotations.Get("summary") != "load of b was at 7" {
			t.Errorf("Sticky for b after its sample went: %+v", sticky)
		}
	})
}

func sortAlerts(as []*promrules.Alert) {
	slices.SortFunc(as, func(a, b *promrules.Alert) int { return labels.Compare(a.Labels, b.Labels) })
}

// templateExpansions reads Prometheus's count of template expansions, a
// process-wide counter.
func templateExpansions(t *testing.T) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "prometheus_template_text_expansions_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestAnnotationsExpandedWhenSent: a pending alert costs no template
// expansion, and a firing one costs one per templated annotation (two of
// queueRules' three: runbook_url is plain text) each time it is sent with
// a new value, not at every evaluation.
func TestAnnotationsExpandedWhenSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		rec := &recorder{}
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		before := templateExpansions(t)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify}, []string{file}, settings())
		defer e.stop()

		time.Sleep(55 * time.Second) // pending: five evaluations
		synctest.Wait()
		if act := activeAlerts(e.Engine, "QueueBacklog"); len(act) != 1 || act[0].State != promrules.StatePending {
			t.Fatalf("want one pending alert, got %v", act)
		}
		// activeAlerts expanded the two templates once, for the check.
		if n := templateExpansions(t) - before; n != 2 {
			t.Fatalf("%v expansions while pending, want 2 (the check's own)", n)
		}

		// Firing for 5 minutes, a new value at every evaluation: sent
		// every minute (the resend delay), 30 evaluations.
		before = templateExpansions(t)
		for i := range 30 {
			ds.Set(t, `queue_depth{instance="a"}`, time.Now(), float64(13+i))
			time.Sleep(10 * time.Second)
		}
		synctest.Wait()
		sends := len(named(rec.take(), "QueueBacklog"))
		n := templateExpansions(t) - before
		if sends < 4 || sends > 7 {
			t.Fatalf("%d notifications in 5 minutes, want about 5", sends)
		}
		if n != float64(2*sends) {
			t.Errorf("%v expansions for %d notifications of 2 templates, want %d", n, sends, 2*sends)
		}

		// A value that does not change is expanded at most once (not at
		// all if the last loop's value was already sent).
		before = templateExpansions(t)
		for range 18 {
			time.Sleep(10 * time.Second)
		}
		synctest.Wait()
		sends = len(named(rec.take(), "QueueBacklog"))
		if n := templateExpansions(t) - before; sends < 2 || n > 2 {
			t.Errorf("%v expansions for %d notifications of an unchanged sample, want at most 2", n, sends)
		}
	})
}

const gradedRules = `groups:
  - name: kv
    interval: 10s
    rules:
      - alert: KVCacheFull
        expr: kv_usage > 0.9
        for: 30s
        labels:
          severity: warning
        annotations:
          summary: 'KV cache of {{ $labels.instance }} at {{ $value }}'
      - alert: KVCacheFull
        expr: kv_usage > 0.95
        for: 30s
        labels:
          severity: critical
        annotations:
          summary: 'KV cache of {{ $labels.instance }} at {{ $value }}, critical'
`

// TestReloadTakenOverRules: paged takes labels and annotations away from
// Prometheus, so Prometheus keeps a group whose only change is in them.
// A reload must still apply such changes, and keep the state of rules
// that stay.
func TestReloadTakenOverRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		dir := t.TempDir()
		file := writeFile(t, dir, "kv.rules.yaml", gradedRules)
		ds.Set(t, `kv_usage{instance="a"}`, time.Now(), 0.99)
		rec := &recorder{}
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify}, []string{file}, settings())
		defer e.stop()
		time.Sleep(45 * time.Second)
		synctest.Wait()
		firing := func() map[string]*promrules.Alert {
			out := map[string]*promrules.Alert{}
			for _, a := range activeAlerts(e.Engine, "KVCacheFull") {
				out[a.Labels.Get("severity")] = a
			}
			return out
		}
		before := firing()
		if len(before) != 2 || before["critical"].State != promrules.StateFiring || before["warning"].State != promrules.StateFiring {
			t.Fatalf("want a warning and a critical alert firing, got %v", before)
		}
		rec.take()

		// 1. Only an annotation changes: the group is the same object, the
		// alerts keep their state, the next notification has the new text.
		g0 := e.RuleGroups()[0]
		writeFile(t, dir, "kv.rules.yaml", strings.Replace(gradedRules, ", critical'", ", page now'", 1))
		if err := e.ApplyRules([]string{file}, settings()); err != nil {
			t.Fatal(err)
		}
		if e.RuleGroups()[0] != g0 {
			t.Error("a change of annotations only replaced the group")
		}
		time.Sleep(70 * time.Second) // past the resend delay
		synctest.Wait()
		after := firing()
		if !after["critical"].ActiveAt.Equal(before["critical"].ActiveAt) {
			t.Errorf("activeAt changed on reload: %v, was %v", after["critical"].ActiveAt, before["critical"].ActiveAt)
		}
		if s := after["critical"].Annotations.Get("summary"); s != "KV cache of a at 0.99, page now" {
			t.Errorf("API summary after reload = %q", s)
		}
		var crit []string
		for _, a := range named(rec.take(), "KVCacheFull") {
			if a.Labels.Get("severity") == "critical" {
				crit = append(crit, a.Annotations.Get("summary"))
				if a.Resolved(time.Now()) {
					t.Errorf("the critical alert resolved on an annotation change: %v", a)
				}
			}
		}
		if len(crit) == 0 || crit[len(crit)-1] != "KV cache of a at 0.99, page now" {
			t.Errorf("critical notifications after reload: %q", crit)
		}

		// 2. Only a label changes: the alert is another alert now. The old
		// one resolves, the new one starts over.
		writeFile(t, dir, "kv.rules.yaml", strings.Replace(gradedRules, "severity: warning", "severity: ticket", 1))
		if err := e.ApplyRules([]string{file}, settings()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second)
		synctest.Wait()
		now := firing()
		if now["ticket"] == nil || now["ticket"].State != promrules.StatePending {
			t.Errorf("want the relabelled alert pending, got %v", now)
		}
		if now["warning"] != nil {
			t.Errorf("the alert with the old label is still active: %v", now["warning"])
		}
		resolved := false
		for _, a := range named(rec.take(), "KVCacheFull") {
			if a.Labels.Get("severity") == "warning" && a.Resolved(time.Now()) {
				resolved = true
			}
		}
		if !resolved {
			t.Error("the alert with the old label was not sent resolved")
		}
		if lbls, _ := e.RuleDefinition(e.RuleGroups()[0], e.RuleGroups()[0].Rules()[0]); lbls.Get("severity") != "ticket" {
			t.Errorf("rule labels after reload: %s", lbls)
		}

		// 3. The first of two rules of the same name goes: the remaining
		// critical alert keeps firing with its activeAt, and is never sent
		// resolved.
		writeFile(t, dir, "kv.rules.yaml", "groups:\n  - name: kv\n    interval: 10s\n    rules:\n"+gradedRules[strings.LastIndex(gradedRules, "      - alert: KVCacheFull"):])
		if err := e.ApplyRules([]string{file}, settings()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		now = firing()
		if len(now) != 1 || now["critical"] == nil || now["critical"].State != promrules.StateFiring {
			t.Fatalf("want only the critical alert, firing: %v", now)
		}
		// ALERTS_FOR_STATE keeps activeAt in seconds.
		if d := before["critical"].ActiveAt.Sub(now["critical"].ActiveAt); d < 0 || d >= time.Second {
			t.Errorf("critical activeAt %v after removing its sibling, was %v", now["critical"].ActiveAt, before["critical"].ActiveAt)
		}
		for _, a := range named(rec.take(), "KVCacheFull") {
			if a.Labels.Get("severity") == "critical" && a.Resolved(time.Now()) {
				t.Errorf("the critical alert was sent resolved: %v", a)
			}
		}
	})
}

// TestTakenOverRulesConcurrentReads evaluates fast, reloads with changing
// labels and annotations, and reads rules and alerts from other goroutines
// at the same time: run with -race, it checks the sample stores, plans and
// caches are safe to share; every alert read has its summary.
func TestTakenOverRulesConcurrentReads(t *testing.T) {
	ds := enginetest.New(t)
	now := time.Now()
	for i := range 20 {
		ds.Set(t, fmt.Sprintf(`load{instance="i%d"}`, i), now, float64(10+i))
	}
	dir := t.TempDir()
	text := func(n int) string {
		return fmt.Sprintf(`groups:
  - name: fast
    interval: 20ms
    rules:
      - alert: Load
        expr: load > 5
        labels: {severity: warning, gen: "g%d"}
        annotations: {summary: 'load {{ $value }} on {{ $labels.instance }} (%d)'}
      - alert: Load
        expr: load > 15
        labels: {severity: critical}
        annotations: {summary: 'high load {{ $value }}'}
`, n%2, n)
	}
	file := writeFile(t, dir, "fast.rules.yaml", text(0))
	e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), ResendDelay: 50 * time.Millisecond, Notify: func(_ context.Context, as []*rules.Alert) {
		for _, a := range as {
			if a.Annotations.Get("summary") == "" {
				t.Errorf("sent without summary: %s", a.Labels)
			}
		}
	}}, []string{file}, settings())
	defer e.stop()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, g := range e.RuleGroups() {
					for _, r := range g.Rules() {
						e.RuleDefinition(g, r)
						if ar, ok := r.(*promrules.AlertingRule); ok {
							for _, a := range e.ActiveAlerts(context.Background(), g, ar) {
								if a.Annotations.Get("summary") == "" {
									t.Errorf("read without summary: %s", a.Labels)
								}
							}
						}
					}
				}
			}
		})
	}
	for n := 1; n <= 20; n++ {
		time.Sleep(50 * time.Millisecond)
		writeFile(t, dir, "fast.rules.yaml", text(n))
		if err := e.ApplyRules([]string{file}, settings()); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if n := len(activeAlerts(e.Engine, "Load")); n < 20 {
		t.Errorf("%d Load alerts active at the end, want at least 20", n)
	}
}
