package backtest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

// recorder keeps the alerts the live engine sends.
type recorder struct {
	mu  sync.Mutex
	got []rules.Alert
}

func (r *recorder) notify(_ context.Context, alerts []*rules.Alert) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range alerts {
		r.got = append(r.got, *a)
	}
}

// span is one firing period, from either side.
type span struct {
	rule, labels string
	start, end   time.Time
	open         bool
}

func (s span) String() string {
	end := s.end.Format("15:04:05")
	if s.open {
		end = "open"
	}
	return fmt.Sprintf("%s%s %s..%s", s.rule, s.labels, s.start.Format("15:04:05"), end)
}

// liveSpans turns the notifications into firing periods: one per alert
// label set and StartsAt; the last notification of a period carries its
// end (the resolution), unless it is still valid at the end of the run.
func liveSpans(got []rules.Alert, end time.Time) []span {
	type key struct {
		lbls  string
		start time.Time
	}
	last := map[key]rules.Alert{}
	var order []key
	for _, a := range got {
		k := key{a.Labels.String(), a.StartsAt}
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = a
	}
	var out []span
	for _, k := range order {
		a := last[k]
		b := labels.NewBuilder(a.Labels)
		b.Del(labels.AlertName)
		s := span{rule: a.Labels.Get(labels.AlertName), labels: b.Labels().String(), start: a.StartsAt, end: a.EndsAt}
		if a.EndsAt.After(end) {
			s.end, s.open = end, true
		}
		out = append(out, s)
	}
	sortSpans(out)
	return out
}

func backtestSpans(rep *backtest.Report) []span {
	var out []span
	for _, r := range rep.Rules {
		for _, iv := range r.Firing {
			b := labels.NewBuilder(labels.FromMap(iv.Labels))
			b.Del(labels.AlertName)
			out = append(out, span{rule: r.Name, labels: b.Labels().String(), start: iv.Start, end: iv.End, open: iv.Open})
		}
	}
	sortSpans(out)
	return out
}

func sortSpans(s []span) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].rule != s[j].rule {
			return s[i].rule < s[j].rule
		}
		if s[i].labels != s[j].labels {
			return s[i].labels < s[j].labels
		}
		return s[i].start.Before(s[j].start)
	})
}

func within(a, b time.Time, d time.Duration) bool {
	diff := a.Sub(b)
	return diff <= d && diff >= -d
}

// TestAgreesWithLiveEngine records 50 minutes of a simulated vLLM server
// going through two KV-cache saturations, runs the live engine over that
// data (synctest drives its clock through the 50 minutes), backtests the
// same rules over the same range, and requires the same firing periods
// within one evaluation interval: the vLLM pack and two fast rules, one
// with keep_firing_for.
func TestAgreesWithLiveEngine(t *testing.T) {
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm", "vllm.rules.yaml")
	synctest.Test(t, func(t *testing.T) {
		const interval = 30 * time.Second
		start := time.Now()
		runFor := 50 * time.Minute
		db := record(t, t.TempDir(), start, runFor, 5*time.Second, kvTimeline)
		defer db.Close()
		files := []string{pack, writeFile(t, t.TempDir(), "fast.rules.yaml", fastRules)}
		eng := newPromQL()

		rec := &recorder{}
		e, err := engine.New(engine.Options{
			Datasource:         engine.NewQueryable(eng, db),
			StoragePath:        t.TempDir(),
			Notify:             rec.notify,
			EvaluationInterval: interval,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ApplyRules(files, engine.RuleSettings{EvaluationInterval: interval}); err != nil {
			e.Close()
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		time.Sleep(runFor)
		synctest.Wait()
		end := time.Now()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("engine: %v", err)
		}
		live := liveSpans(rec.got, end)

		rep, err := backtest.Run(context.Background(), backtest.Options{
			Source:             backtest.NewQueryable(eng, db),
			RuleFiles:          files,
			From:               start,
			To:                 end,
			EvaluationInterval: interval,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Rules {
			if r.Error != "" || r.EvalErrors > 0 {
				t.Errorf("%s: error %q, %d failed evaluations", r.Name, r.Error, r.EvalErrors)
			}
		}
		bt := backtestSpans(rep)

		// The scenario must have made things fire, or the comparison
		// proves nothing.
		count := map[string]int{}
		for _, s := range bt {
			count[s.rule]++
		}
		if count["VLLMKVCacheSaturated"] != 1 || count["KVCacheHigh"] != 2 || count["QueueWaiting"] < 1 {
			t.Errorf("backtest fired %v; want VLLMKVCacheSaturated once, KVCacheHigh twice, QueueWaiting at least once", count)
		}

		if len(live) != len(bt) {
			t.Fatalf("live engine fired %d periods, backtest %d\nlive:     %v\nbacktest: %v", len(live), len(bt), live, bt)
		}
		for i := range live {
			l, b := live[i], bt[i]
			tol := interval
			if strings.HasPrefix(l.rule, "KVCacheHigh") || l.rule == "QueueWaiting" {
				tol = 15 * time.Second // the fast group's interval
			}
			if l.rule != b.rule || l.labels != b.labels || !within(l.start, b.start, tol) || !within(l.end, b.end, tol) || l.open != b.open {
				t.Errorf("period %d: live %v, backtest %v (tolerance %s)", i, l, b, tol)
			}
		}
		t.Logf("%d firing periods agree:\nlive:     %v\nbacktest: %v", len(bt), live, bt)

		// keep_firing_for: the short saturation ends at 38m30s; the alert
		// stays firing for 45s after its condition stops. The group's
		// evaluation phase comes from a hash of its file path (a temporary
		// directory here), so the end may fall anywhere in the following
		// interval: at most two intervals after 39m15s, never before it.
		for _, s := range bt {
			if s.rule == "KVCacheHigh" && s.start.After(start.Add(35*time.Minute)) {
				if d := s.end.Sub(start); d < 39*time.Minute+15*time.Second || d > 39*time.Minute+45*time.Second {
					t.Errorf("KVCacheHigh short episode ended %s after start; want 39m15s plus at most two intervals", d)
				}
			}
		}
	})
}
