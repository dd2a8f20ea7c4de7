package engine_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
	"github.com/pagedhq/paged/internal/durable"
)

// copyDir copies the storage as a crash would leave it: whatever the
// files hold at this instant, without the engine closing anything.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o750)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// TestCrashImagesKeepState: the storage as two crashes in a row leave it,
// the second before the restarted engine evaluated once, still restores
// the firing alert with its activeAt and firing time.
func TestCrashImagesKeepState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		store := t.TempDir()
		e1 := start(t, engine.Options{Datasource: ds, StoragePath: store}, []string{file}, settings())
		time.Sleep(85 * time.Second)
		synctest.Wait()
		before := activeAlerts(e1.Engine, "QueueBacklog")
		if len(before) != 1 || before[0].State != promrules.StateFiring {
			t.Fatalf("before the crash: %+v", before)
		}
		crash1 := copyDir(t, store)
		e1.stop()

		e2 := start(t, engine.Options{Datasource: ds, StoragePath: crash1}, []string{file}, settings())
		crash2 := copyDir(t, crash1) // within the first interval: no evaluation yet
		e2.stop()

		e3 := start(t, engine.Options{Datasource: ds, StoragePath: crash2}, []string{file}, settings())
		defer e3.stop()
		act := activeAlerts(e3.Engine, "QueueBacklog")
		if len(act) != 1 || act[0].State != promrules.StateFiring || !act[0].ActiveAt.Equal(before[0].ActiveAt) || !act[0].FiredAt.Equal(before[0].FiredAt) {
			t.Fatalf("after two crashes: %+v, want %+v", act, before)
		}
	})
}

// TestCatchUp: the evaluations missed while paged was down are replayed
// from the datasource's history. A condition that held keeps its
// activeAt and fires when its 'for' passed during the downtime; one that
// cleared for a while resolves (and the resolution is sent) and starts
// over when it came back.
func TestCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		store := t.TempDir()
		rec := &recorder{}
		opts := engine.Options{Datasource: ds, StoragePath: store, Notify: rec.notify}
		feed := func(d time.Duration, a, b float64) {
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Second) {
				ds.Set(t, `queue_depth{instance="a"}`, time.Now(), a)
				ds.Set(t, `queue_depth{instance="b"}`, time.Now(), b)
			}
		}
		e1 := start(t, opts, []string{file}, settings())
		feed(25*time.Second, 12, 12)
		synctest.Wait()
		before := map[string]*promrules.Alert{}
		for _, a := range activeAlerts(e1.Engine, "QueueBacklog") {
			before[a.Labels.Get("instance")] = a
		}
		if len(before) != 2 || before["a"].State != promrules.StatePending {
			t.Fatalf("before the stop: %+v", before)
		}
		e1.stop()

		// Down for two minutes: a stays high, b drops for 40s.
		feed(40*time.Second, 12, 12)
		feed(40*time.Second, 12, 1)
		backAt := time.Now()
		feed(40*time.Second, 12, 12)
		rec.take()

		e2 := start(t, opts, []string{file}, settings())
		defer e2.stop()
		feed(10*time.Second, 12, 12)
		synctest.Wait()
		after := map[string]*promrules.Alert{}
		for _, a := range activeAlerts(e2.Engine, "QueueBacklog") {
			after[a.Labels.Get("instance")] = a
		}
		if a := after["a"]; a == nil || a.State != promrules.StateFiring || !a.ActiveAt.Equal(before["a"].ActiveAt) {
			t.Errorf("a held all along: %+v, want firing since %v", a, before["a"].ActiveAt)
		} else if want := before["a"].ActiveAt.Add(time.Minute); a.FiredAt.Before(want) || a.FiredAt.After(want.Add(10*time.Second)) {
			t.Errorf("a fired at %v, want for (1m) after its activeAt, during the downtime: %v", a.FiredAt, want)
		}
		if b := after["b"]; b == nil || b.State != promrules.StatePending || b.ActiveAt.Before(backAt) || b.ActiveAt.After(backAt.Add(10*time.Second)) {
			t.Errorf("b came back at %v: %+v, want pending since then", backAt, b)
		}
		firedA := false
		for _, n := range named(rec.take(), "QueueBacklog") {
			switch n.Labels.Get("instance") {
			case "a":
				firedA = firedA || !n.Resolved(time.Now())
			case "b":
				// b never fired: no notification at all.
				t.Errorf("notification for b, which never fired: %+v", n)
			}
		}
		if !firedA {
			t.Error("a fired during the downtime, but was not notified after the restart")
		}
	})
}

// TestCatchUpResolves: an alert that was firing when paged stopped and
// whose condition cleared while it was down is sent resolved after the
// restart, with its original StartsAt.
func TestCatchUpResolves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		rec := &recorder{}
		opts := engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify}
		set := func(v float64) { ds.Set(t, `queue_depth{instance="a"}`, time.Now(), v) }
		e1 := start(t, opts, []string{file}, settings())
		for range 18 {
			set(12)
			time.Sleep(5 * time.Second)
		}
		synctest.Wait()
		fired := named(rec.take(), "QueueBacklog")
		if len(fired) != 1 {
			t.Fatalf("before the stop: %+v", fired)
		}
		e1.stop()
		for range 12 { // down a minute: the condition clears at once
			set(1)
			time.Sleep(5 * time.Second)
		}
		e2 := start(t, opts, []string{file}, settings())
		defer e2.stop()
		// Run replays the minute paged missed before any group evaluates:
		// the condition cleared while paged was down, so once the replay
		// is done (every goroutine waits on a timer, no evaluation has
		// run yet) the alert is resolved. Reading it earlier raced with
		// the replay.
		synctest.Wait()
		if act := activeAlerts(e2.Engine, "QueueBacklog"); len(act) != 0 {
			t.Fatalf("after the replay of the downtime, before the first evaluation: %+v, want none", act)
		}
		set(1)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if act := activeAlerts(e2.Engine, "QueueBacklog"); len(act) != 0 {
			t.Errorf("after the first evaluation: %+v, want none", act)
		}
		var resolved []string
		for _, n := range named(rec.take(), "QueueBacklog") {
			t.Logf("sent %+v", n)
			if n.Resolved(time.Now()) && n.StartsAt.Equal(fired[0].StartsAt) {
				resolved = append(resolved, n.EndsAt.String())
			}
		}
		if len(resolved) == 0 {
			t.Fatalf("the alert that cleared while paged was down was not sent resolved: first %+v", fired[0])
		}
	})
}

// TestCorruptAlertState: a damaged alert-state file is moved aside, the
// engine starts with what it could read, and PagedStateCorrupted fires
// until the moved file is removed.
func TestCorruptAlertState(t *testing.T) {
	for _, damage := range []string{"snapshot", "segment"} {
		t.Run(damage, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ds := enginetest.New(t)
				defer ds.Close()
				file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
				store := t.TempDir()
				ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
				e1 := start(t, engine.Options{Datasource: ds, StoragePath: store}, []string{file}, settings())
				time.Sleep(25 * time.Second)
				synctest.Wait()
				e1.stop()
				dir := filepath.Join(store, "alert-state")
				target := filepath.Join(dir, "state")
				if damage == "segment" {
					segs, _ := filepath.Glob(target + ".wal.*")
					target = segs[len(segs)-1]
				}
				b, err := os.ReadFile(target)
				if err != nil || len(b) < 10 {
					t.Fatalf("%s: %d bytes, %v", target, len(b), err)
				}
				damaged := append(b[:len(b)/2:len(b)/2], "\xff\xfe garbage"...)
				if damage == "segment" {
					// A segment cut short at its end is a write that did
					// not finish, cut off without a report: damage is a
					// record spoilt before the end.
					damaged = append([]byte(nil), b...)
					damaged[10] ^= 0xff
				}
				if err := os.WriteFile(target, damaged, 0o600); err != nil {
					t.Fatal(err)
				}

				rec := &recorder{}
				reg := prometheus.NewRegistry()
				rep := durable.NewReporter(store, nil, reg)
				e2 := start(t, engine.Options{Datasource: ds, StoragePath: store, Notify: rec.notify, Reporter: rep}, []string{file}, settings())
				defer e2.stop()
				synctest.Wait()
				rel, _ := filepath.Rel(store, target)
				moved, _ := filepath.Glob(target + durable.CorruptSuffix + "*")
				if len(moved) != 1 {
					t.Fatalf("%s not moved aside: %v", target, moved)
				}
				got := named(rec.take(), engine.StateCorruptedAlert)
				if len(got) != 1 || got[0].Labels.Get("file") != rel || got[0].Labels.Get("severity") != "critical" ||
					!strings.Contains(got[0].Annotations.Get("description"), moved[0]) || got[0].Resolved(time.Now()) {
					t.Fatalf("PagedStateCorrupted for %s: %+v", rel, got)
				}
				if b := e2.BuiltinAlerts(); len(b) != 1 || b[0].Labels.Get("alertname") != engine.StateCorruptedAlert {
					t.Errorf("BuiltinAlerts = %+v", b)
				}
				if v := metricValue(t, reg, "paged_state_corruptions_total", map[string]string{"file": rel}); v != 1 {
					t.Errorf("paged_state_corruptions_total{file=%q} = %v", rel, v)
				}
				// It pages on.
				ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
				time.Sleep(10 * time.Second)
				synctest.Wait()
				if act := activeAlerts(e2.Engine, "QueueBacklog"); len(act) != 1 {
					t.Errorf("after the corrupt state: %+v", act)
				}
				// Removing the moved file acknowledges it.
				if err := os.Remove(moved[0]); err != nil {
					t.Fatal(err)
				}
				time.Sleep(30 * time.Second)
				synctest.Wait()
				res := named(rec.take(), engine.StateCorruptedAlert)
				if len(res) == 0 || !res[len(res)-1].Resolved(time.Now()) {
					t.Errorf("PagedStateCorrupted not resolved after the file was removed: %+v", res)
				}
			})
		})
	}
}

// TestStateWriteFailingAlert: PagedStateWriteFailing fires while the
// reporter has a file that cannot be written, and resolves when it is
// written again.
func TestStateWriteFailingAlert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		store := t.TempDir()
		rep := durable.NewReporter(store, nil, nil)
		rec := &recorder{}
		e := start(t, engine.Options{Datasource: ds, StoragePath: store, Notify: rec.notify, Reporter: rep}, []string{file}, settings())
		defer e.stop()
		rep.WriteFailed(filepath.Join(store, "nflog"), os.ErrPermission, time.Now())
		time.Sleep(30 * time.Second)
		synctest.Wait()
		got := named(rec.take(), engine.StateWriteFailingAlert)
		if len(got) != 1 || got[0].Labels.Get("file") != "nflog" || !strings.Contains(got[0].Annotations.Get("description"), "permission denied") {
			t.Fatalf("PagedStateWriteFailing: %+v", got)
		}
		rep.WriteRecovered(filepath.Join(store, "nflog"))
		time.Sleep(30 * time.Second)
		synctest.Wait()
		got = named(rec.take(), engine.StateWriteFailingAlert)
		if len(got) != 1 || !got[0].Resolved(time.Now()) {
			t.Fatalf("after recovery: %+v", got)
		}
	})
}

// noHistory hides the datasource's QueryRange, as the embedded mode's
// datasource has none.
type noHistory struct{ ds *enginetest.Datasource }

func (n noHistory) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	return n.ds.Query(ctx, expr, ts)
}

// TestRestartWithoutHistory: without history (embedded mode) the restored
// alerts keep their state as if their condition held while paged was
// down; the first evaluation decides.
func TestRestartWithoutHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		opts := engine.Options{Datasource: noHistory{ds}, StoragePath: t.TempDir()}
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		e1 := start(t, opts, []string{file}, settings())
		time.Sleep(25 * time.Second)
		synctest.Wait()
		before := activeAlerts(e1.Engine, "QueueBacklog")
		e1.stop()
		time.Sleep(50 * time.Second) // down past the 'for' of 1m
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		e2 := start(t, opts, []string{file}, settings())
		defer e2.stop()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		act := activeAlerts(e2.Engine, "QueueBacklog")
		if len(act) != 1 || act[0].State != promrules.StateFiring || !act[0].ActiveAt.Equal(before[0].ActiveAt) {
			t.Fatalf("after the restart: %+v, want firing since %v", act, before[0].ActiveAt)
		}
	})
}

// TestAnnounceAfterCrash: an alert that resolved just before a crash is
// sent resolved again at start (the notifier that crashed with paged may
// not have delivered the resolution), and a firing one firing; an alert
// never sent is not.
func TestAnnounceAfterCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		store := t.TempDir()
		rec := &recorder{}
		e1 := start(t, engine.Options{Datasource: ds, StoragePath: store, Notify: rec.notify}, []string{file}, settings())
		for range 9 {
			ds.Set(t, `queue_depth{instance="gone"}`, time.Now(), 12)
			ds.Set(t, `queue_depth{instance="stays"}`, time.Now(), 12)
			time.Sleep(10 * time.Second)
		}
		ds.Set(t, `queue_depth{instance="late"}`, time.Now(), 12) // pending only
		ds.Clear(t, `queue_depth{instance="gone"}`, time.Now())
		ds.Set(t, `queue_depth{instance="stays"}`, time.Now(), 12)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		sent := map[string]bool{}
		for _, a := range named(rec.take(), "QueueBacklog") {
			sent[a.Labels.Get("instance")+map[bool]string{true: " resolved", false: " firing"}[a.Resolved(time.Now())]] = true
		}
		if !sent["gone firing"] || !sent["gone resolved"] || !sent["stays firing"] {
			t.Fatalf("before the crash: %v", sent)
		}
		crash := copyDir(t, store)
		e1.stop()

		rec2 := &recorder{}
		e2 := start(t, engine.Options{Datasource: ds, StoragePath: crash, Notify: rec2.notify}, []string{file}, settings())
		defer e2.stop()
		synctest.Wait() // Run has started; no evaluation yet
		got := map[string]bool{}
		for _, a := range named(rec2.take(), "QueueBacklog") {
			got[a.Labels.Get("instance")+map[bool]string{true: " resolved", false: " firing"}[a.Resolved(time.Now())]] = true
		}
		want := map[string]bool{"gone resolved": true, "stays firing": true}
		if len(got) != len(want) || !got["gone resolved"] || !got["stays firing"] {
			t.Errorf("sent at start: %v, want %v", got, want)
		}
	})
}

// TestAnnounceStaleAfterCrashInOutage: a firing alert is never sent fresh
// by a restart during an outage (the notifier would edit the group's
// message to drop its outage line): its stale re-sends left it due, so it
// is not announced, and the first evaluation sends it stale. With the
// datasource up it is announced, fresh.
func TestAnnounceStaleAfterCrashInOutage(t *testing.T) {
	for _, down := range []bool{true, false} {
		t.Run(map[bool]string{true: "down", false: "up"}[down], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ds := enginetest.New(t)
				defer ds.Close()
				file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
				store := t.TempDir()
				rec := &recorder{}
				e1 := start(t, engine.Options{Datasource: ds, StoragePath: store, Notify: rec.notify}, []string{file}, settings())
				for range 9 {
					ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
					time.Sleep(10 * time.Second)
				}
				ds.SetDown(down)
				time.Sleep(40 * time.Second)
				synctest.Wait()
				if got := e1.DatasourceStatus().Down; got != down {
					t.Fatalf("datasource down = %v before the crash, want %v", got, down)
				}
				crash := copyDir(t, store)
				e1.stop()

				rec2 := &recorder{}
				e2 := start(t, engine.Options{Datasource: ds, StoragePath: crash, Notify: rec2.notify}, []string{file}, settings())
				defer e2.stop()
				synctest.Wait() // Run has started; no evaluation yet
				got := named(rec2.take(), "QueueBacklog")
				if down {
					if len(got) != 0 {
						t.Fatalf("restored alerts sent at start during the outage: %+v", got)
					}
					time.Sleep(10 * time.Second)
					synctest.Wait()
					got = named(rec2.take(), "QueueBacklog")
				}
				for _, a := range got {
					if a.Stale != down {
						t.Errorf("sent with Stale %v, want %v: %+v", a.Stale, down, a)
					}
				}
				if len(got) != 1 || got[0].Resolved(time.Now()) {
					t.Fatalf("restored alert: %+v, want one firing", got)
				}
			})
		})
	}
}
