package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/rules"
)

// TestHistoryOfAnAlert: the history holds an alert's pending, firing,
// stale, fresh and resolved events with its labels (external ones
// included) and value, and the datasource's outage, each written before
// the evaluation's notifications went out.
func TestHistoryOfAnAlert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		store, err := history.Open(history.Options{Path: filepath.Join(t.TempDir(), history.FileName), BatchInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		events := func() []history.Event {
			t.Helper()
			p, err := store.Query(context.Background(), history.Query{})
			if err != nil {
				t.Fatal(err)
			}
			return p.Events
		}
		// The notification of a firing alert finds its firing event
		// already written.
		var atNotify []string
		notify := func(_ context.Context, alerts []*rules.Alert) {
			for _, a := range alerts {
				if a.Labels.Get("alertname") != "QueueBacklog" || a.Stale {
					continue
				}
				var last string
				for _, e := range events() {
					if e.Alertname == "QueueBacklog" {
						last = e.Type
					}
				}
				atNotify = append(atNotify, last)
			}
		}
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: notify, History: store}, []string{file}, settings())
		defer e.stop()

		time.Sleep(85 * time.Second) // pending, then firing after for: 1m
		synctest.Wait()
		ds.SetDown(true)
		time.Sleep(40 * time.Second) // stale at once, the datasource down after 3 evaluations
		synctest.Wait()
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		ds.SetDown(false)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 1)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		e.stop()

		var got []string
		for _, ev := range events() {
			got = append(got, ev.Type+":"+ev.Alertname+ev.Outcome)
		}
		want := "pending:QueueBacklog firing:QueueBacklog stale:QueueBacklog datasource:down fresh:QueueBacklog datasource:up resolved:QueueBacklog"
		if strings.Join(got, " ") != want {
			t.Fatalf("history:\n got %s\nwant %s", strings.Join(got, " "), want)
		}
		evs := events()
		firing := evs[1]
		wantFP := history.Fingerprint(map[string]string{"alertname": "QueueBacklog", "cluster": "prod", "instance": "a", "severity": "warning"})
		if firing.Fingerprint != wantFP || firing.Labels["cluster"] != "prod" || firing.Labels["instance"] != "a" {
			t.Errorf("firing event = %+v", firing)
		}
		var d struct {
			Value    float64 `json:"value"`
			ActiveAt string  `json:"active_at"`
			Group    string  `json:"group"`
		}
		if err := json.Unmarshal(firing.Details, &d); err != nil || d.Value != 12 || d.Group != "queue" || d.ActiveAt == "" {
			t.Errorf("firing details = %s (%v)", firing.Details, err)
		}
		if !firing.Time.After(evs[0].Time) || firing.Time.Sub(evs[0].Time) < time.Minute {
			t.Errorf("pending at %v, firing at %v: want for: 1m between", evs[0].Time, firing.Time)
		}
		if !strings.Contains(string(evs[2].Details), "datasource") {
			t.Errorf("stale event carries no error: %s", evs[2].Details)
		}
		if len(atNotify) < 2 || atNotify[0] != history.TypeFiring || atNotify[len(atNotify)-1] != history.TypeResolved {
			t.Errorf("latest event when each notification went out: %v, want firing first and resolved last", atNotify)
		}
	})
}
