package engine_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
)

// TestOutageLongerThanLookback: the datasource goes away for longer than
// its lookback delta and comes back with no sample newer than the
// outage, as a Prometheus that was down itself does until it scrapes
// again. The alert must not resolve at any evaluation in between; with
// the first fresh sample it goes on firing, not stale. A second run:
// a target that does not come back resolves, but not before freshHoldMax
// after the datasource answered again; and a third: a fresh sample below
// the threshold resolves at once.
func TestOutageLongerThanLookback(t *testing.T) {
	for _, tc := range []struct {
		name string
		back func(t *testing.T, ds *enginetest.Datasource) // after the datasource answers again
		// resolveAfter is when the alert must resolve, counted from the
		// datasource answering again; 0: it must not.
		earliest, latest time.Duration
	}{
		{name: "scraped again, still high", back: func(t *testing.T, ds *enginetest.Datasource) {
			time.Sleep(40 * time.Second) // the first scrape after the restart
			ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
			for range 20 {
				time.Sleep(10 * time.Second)
				ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
			}
		}},
		{name: "target gone", earliest: 5 * time.Minute, latest: 5*time.Minute + 20*time.Second, back: func(t *testing.T, ds *enginetest.Datasource) {
			time.Sleep(6 * time.Minute)
		}},
		{name: "scraped again, low", earliest: 40 * time.Second, latest: 60 * time.Second, back: func(t *testing.T, ds *enginetest.Datasource) {
			time.Sleep(40 * time.Second)
			ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 1)
			time.Sleep(time.Minute)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ds := enginetest.New(t)
				defer ds.Close()
				file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
				rec := &recorder{}
				stop := make(chan struct{})
				scrape := func() {
					for {
						ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
						select {
						case <-stop:
							return
						case <-time.After(10 * time.Second):
						}
					}
				}
				go scrape()
				e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify}, []string{file}, settings())
				defer e.stop()
				time.Sleep(85 * time.Second)
				synctest.Wait()
				if act := activeAlerts(e.Engine, "QueueBacklog"); len(act) != 1 || act[0].State != promrules.StateFiring {
					t.Fatalf("want the alert firing before the outage, got %+v", act)
				}
				rec.take()

				// The datasource goes away and scrapes nothing: 6 minutes,
				// longer than the 5m lookback.
				close(stop)
				ds.SetDown(true)
				time.Sleep(6 * time.Minute)
				synctest.Wait()
				sent := named(rec.take(), "QueueBacklog")
				for _, a := range sent {
					if !a.Stale {
						t.Errorf("during the outage the alert is re-sent stale, got %+v", a)
					}
				}
				if len(sent) == 0 || sent[len(sent)-1].Resolved(time.Now()) {
					t.Errorf("during the outage the alert is re-sent firing, got %+v", sent)
				}
				ds.SetDown(false)
				backAt := time.Now()

				// Watch every evaluation while the test's scenario runs.
				done := make(chan struct{})
				var resolvedAt time.Duration
				go func() {
					defer close(done)
					for time.Since(backAt) < 7*time.Minute {
						time.Sleep(5 * time.Second)
						synctest.Wait()
						act := activeAlerts(e.Engine, "QueueBacklog")
						for _, a := range rec.take() {
							if a.Labels.Get("alertname") == "QueueBacklog" && a.Resolved(time.Now()) && resolvedAt == 0 {
								resolvedAt = time.Since(backAt)
							}
						}
						if resolvedAt == 0 && (len(act) != 1 || act[0].State != promrules.StateFiring) {
							t.Errorf("%v after the datasource answered again: the alert is %+v with no resolved notification", time.Since(backAt), act)
							return
						}
					}
				}()
				tc.back(t, ds)
				<-done

				switch {
				case tc.latest == 0 && resolvedAt != 0:
					t.Errorf("falsely resolved %v after the datasource answered again", resolvedAt)
				case tc.latest != 0 && (resolvedAt < tc.earliest || resolvedAt > tc.latest):
					t.Errorf("resolved %v after the datasource answered again, want within [%v, %v]", resolvedAt, tc.earliest, tc.latest)
				}
				if tc.latest == 0 {
					st := e.RuleStatus(ruleNamed(t, e.Engine, "QueueBacklog"))
					if st.Stale || st.LastError != nil {
						t.Errorf("with fresh samples the rule is healthy again, got %+v", st)
					}
				}
			})
		})
	}
}

// TestOutageHoldExplains: while the rule is held, its status says why.
func TestOutageHoldExplains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir()}, []string{file}, settings())
		defer e.stop()
		time.Sleep(85 * time.Second)
		ds.SetDown(true)
		time.Sleep(6 * time.Minute)
		ds.SetDown(false)
		time.Sleep(25 * time.Second)
		synctest.Wait()
		st := e.RuleStatus(ruleNamed(t, e.Engine, "QueueBacklog"))
		if !st.Stale || st.LastError == nil || !strings.Contains(st.LastError.Error(), "no recent samples of queue_depth") {
			t.Errorf("rule status while held = %+v", st)
		}
		if ds := e.DatasourceStatus(); ds.Down {
			t.Errorf("the datasource answers: it is not down while a rule is held, got %+v", ds)
		}
	})
}
