package engine_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/prometheus/promql"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
	"github.com/pagedhq/paged/internal/testbin"
)

// evalClock records the time of every evaluation of one rule's query.
type evalClock struct {
	*enginetest.Datasource
	expr string
	mu   sync.Mutex
	at   []time.Time
}

func (c *evalClock) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	if expr == c.expr {
		c.mu.Lock()
		c.at = append(c.at, ts)
		c.mu.Unlock()
	}
	return c.Datasource.Query(ctx, expr, ts)
}

func (c *evalClock) times() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.at...)
}

// scraper appends a sample every interval at phase (from the bubble's
// start), stamped with the scrape's start and visible land later, as a
// scrape that takes that long; jitter moves each scrape by up to that
// much at random. It returns the scrape start times.
type scraper struct {
	mu     sync.Mutex
	starts []time.Time
	phase  time.Duration
}

func (s *scraper) run(t *testing.T, ds *enginetest.Datasource, epoch time.Time, interval, land, jitter time.Duration, value func() float64, stop <-chan struct{}) {
	for k := 0; ; k++ {
		s.mu.Lock()
		at := epoch.Add(s.phase + time.Duration(k)*interval)
		s.mu.Unlock()
		if jitter > 0 {
			at = at.Add(time.Duration(rand.Int64N(int64(jitter))))
		}
		if d := time.Until(at); d > 0 {
			select {
			case <-stop:
				return
			case <-time.After(d):
			}
		} else if d < -interval {
			continue
		}
		select {
		case <-stop:
			return
		case <-time.After(land):
		}
		ds.Set(t, `queue_depth{instance="a"}`, at, value())
		s.mu.Lock()
		s.starts = append(s.starts, at)
		s.mu.Unlock()
	}
}

// lastStart is the newest scrape that started at or before ts.
func (s *scraper) lastStart(ts time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last time.Time
	for _, st := range s.starts {
		if !st.After(ts) {
			last = st
		}
	}
	return last
}

// checkGaps fails when two evaluations are closer than the interval, or
// further apart than two.
func checkGaps(t *testing.T, at []time.Time, interval time.Duration) {
	t.Helper()
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < interval || gap >= 2*interval {
			t.Errorf("evaluations %d and %d are %v apart (interval %v)", i-1, i, gap, interval)
		}
	}
}

// TestAlignToScrapes: a target scraped every 10s at a fixed phase, each
// scrape landing 40ms after it starts (or 300ms, longer than the first
// margin). The group, evaluated every 10s at the manager's own phase,
// moves to just after the scrape within a few evaluations, and from then
// on evaluates the fresh scrape each time. Evaluations are never closer
// than the interval, and the alert fires only once its 1m for has
// passed between real evaluations.
func TestAlignToScrapes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		land      time.Duration
		maxAge    time.Duration // evaluation after the newest scrape start, once aligned
		maxMargin time.Duration
	}{
		{name: "fast scrape", land: 40 * time.Millisecond, maxAge: 150 * time.Millisecond, maxMargin: 100 * time.Millisecond},
		{name: "slow scrape", land: 300 * time.Millisecond, maxAge: 450 * time.Millisecond, maxMargin: 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				epoch := time.Now()
				ds := enginetest.New(t)
				defer ds.Close()
				clock := &evalClock{Datasource: ds, expr: "queue_depth > 5"}
				file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
				stop := make(chan struct{})
				sc := &scraper{phase: 3300 * time.Millisecond}
				go sc.run(t, ds, epoch, 10*time.Second, tc.land, 0, func() float64 { return 12 }, stop)
				e := start(t, engine.Options{Datasource: clock, StoragePath: t.TempDir(), AlignToScrapes: true}, []string{file}, settings())
				defer e.stop()
				time.Sleep(3 * time.Minute)
				synctest.Wait()
				close(stop)

				at := clock.times()
				if len(at) < 15 {
					t.Fatalf("%d evaluations in 3m at 10s", len(at))
				}
				checkGaps(t, at, 10*time.Second)
				// Aligned after at most 10 evaluations: from then on, every
				// evaluation reads the scrape that has just landed.
				for i, ts := range at[10:] {
					age := ts.Sub(sc.lastStart(ts))
					if age < tc.land || age > tc.maxAge {
						t.Errorf("evaluation %d at %v: %v after the newest scrape started (it lands after %v), want at most %v",
							i+10, ts.Sub(epoch), age, tc.land, tc.maxAge)
					}
				}
				g := e.RuleGroups()[0]
				st := e.Alignment(g)
				if !st.Aligned || st.Margin > tc.maxMargin || st.Margin < tc.land {
					t.Errorf("alignment %+v", st)
				}
				act := activeAlerts(e.Engine, "QueueBacklog")
				if len(act) != 1 || act[0].State != promrules.StateFiring {
					t.Fatalf("alert %+v", act)
				}
				if d := act[0].FiredAt.Sub(act[0].ActiveAt); d < time.Minute {
					t.Errorf("fired %v after it became active; its for is 1m", d)
				}
			})
		})
	}
}

// TestAlignToScrapesUnstable: scrapes at a random moment of each
// interval give no phase to align to: the group keeps its schedule.
func TestAlignToScrapesUnstable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		epoch := time.Now()
		ds := enginetest.New(t)
		defer ds.Close()
		clock := &evalClock{Datasource: ds, expr: "queue_depth > 5"}
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		stop := make(chan struct{})
		sc := &scraper{}
		go sc.run(t, ds, epoch, 10*time.Second, 20*time.Millisecond, 9*time.Second, func() float64 { return 12 }, stop)
		e := start(t, engine.Options{Datasource: clock, StoragePath: t.TempDir(), AlignToScrapes: true}, []string{file}, settings())
		defer e.stop()
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		close(stop)
		at := clock.times()
		checkGaps(t, at, 10*time.Second)
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap != 10*time.Second {
				t.Errorf("evaluations %d and %d are %v apart: the schedule moved on an unstable phase", i-1, i, gap)
			}
		}
	})
}

// TestAlignToScrapesMovesEarlier: once aligned, the target's scrapes move
// 6s earlier (a restarted Prometheus with another phase). The group
// follows, skipping one tick to do it: never two evaluations closer than
// the interval, one gap between one and two intervals.
func TestAlignToScrapesMovesEarlier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		epoch := time.Now()
		ds := enginetest.New(t)
		defer ds.Close()
		clock := &evalClock{Datasource: ds, expr: "queue_depth > 5"}
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		stop := make(chan struct{})
		sc := &scraper{phase: 8 * time.Second}
		go sc.run(t, ds, epoch, 10*time.Second, 40*time.Millisecond, 0, func() float64 { return 12 }, stop)
		e := start(t, engine.Options{Datasource: clock, StoragePath: t.TempDir(), AlignToScrapes: true}, []string{file}, settings())
		defer e.stop()
		time.Sleep(2 * time.Minute)
		sc.mu.Lock()
		sc.phase = 2 * time.Second
		sc.mu.Unlock()
		moved := time.Now()
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		close(stop)
		at := clock.times()
		checkGaps(t, at, 10*time.Second)
		long := 0
		for i := 1; i < len(at); i++ {
			if at[i].Sub(at[i-1]) > 10*time.Second+50*time.Millisecond {
				long++
			}
		}
		if long == 0 || long > 3 {
			t.Errorf("%d gaps longer than the interval while moving to the new phase", long)
		}
		for _, ts := range at {
			if ts.Before(moved.Add(2 * time.Minute)) {
				continue
			}
			// The move widened the margin once (an aligned evaluation
			// found old data): 200ms.
			if age := ts.Sub(sc.lastStart(ts)); age > 250*time.Millisecond {
				t.Errorf("evaluation at %v: %v after the newest scrape, after the move", ts.Sub(epoch), age)
			}
		}
	})
}

// slowQueries answers the rule's query and the alignment query only after
// took, as a datasource under load does.
type slowQueries struct {
	*evalClock
	took time.Duration
}

func (s *slowQueries) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	if expr == s.expr || strings.HasPrefix(expr, "max(timestamp(") {
		select {
		case <-time.After(s.took):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.evalClock.Query(ctx, expr, ts)
}

// TestAlignToScrapesSlowDatasource: the target is scraped 1.5s before
// the group's own slot, so the aligned group evaluates 8.5s after its
// slot, and every query takes 6s. An aligned iteration then starts late
// in its interval; the alignment query runs alongside the evaluation, not
// after it, so the iteration still ends before the slot after next and
// the group never skips an evaluation (8.5s + 6s + 6s would).
func TestAlignToScrapesSlowDatasource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 10 * time.Second
		ds := enginetest.New(t)
		defer ds.Close()
		clock := &evalClock{Datasource: ds, expr: "queue_depth > 5"}
		slow := &slowQueries{evalClock: clock, took: 6 * time.Second}
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		e := start(t, engine.Options{Datasource: slow, StoragePath: t.TempDir(), AlignToScrapes: true}, []string{file}, settings())
		defer e.stop()
		g := e.RuleGroups()[0]
		slot := g.EvalTimestamp(time.Now().UnixNano())
		stop := make(chan struct{})
		sc := &scraper{phase: interval - 1500*time.Millisecond}
		go sc.run(t, ds, slot, interval, 40*time.Millisecond, 0, func() float64 { return 12 }, stop)
		time.Sleep(4 * time.Minute)
		synctest.Wait()
		close(stop)

		st := e.Alignment(g)
		if !st.Aligned || st.Delay < 8*time.Second {
			t.Fatalf("alignment %+v: want aligned at about 8.5s after the group's slot", st)
		}
		at := clock.times()
		if len(at) < 20 {
			t.Fatalf("%d evaluations in 4m at 10s", len(at))
		}
		checkGaps(t, at, interval)
		if n := metricValue(t, e.reg, "prometheus_rule_group_iterations_missed_total", nil); n != 0 {
			t.Errorf("%v iterations missed", n)
		}
		for i, ts := range at[10:] {
			if age := ts.Sub(sc.lastStart(ts)); age > 200*time.Millisecond {
				t.Errorf("evaluation %d: %v after the newest scrape started", i+10, age)
			}
		}
	})
}

// TestOverrunIsLogged: a query that takes longer than the interval makes
// the group skip slots; each overrun is logged with where its time went.
func TestOverrunIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		clock := &evalClock{Datasource: ds, expr: "queue_depth > 5"}
		slow := &slowQueries{evalClock: clock, took: 21 * time.Second}
		var log testbin.SyncBuffer
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		e := start(t, engine.Options{Datasource: slow, StoragePath: t.TempDir(),
			Logger: slog.New(slog.NewTextHandler(&log, nil))}, []string{file}, settings())
		time.Sleep(2 * time.Minute)
		e.stop()
		synctest.Wait()
		out := log.String()
		if !strings.Contains(out, "group evaluation ran past its next slot") || !strings.Contains(out, "evaluation=21s") {
			t.Fatalf("no overrun warning with the evaluation's 21s:\n%s", out)
		}
		if n := metricValue(t, e.reg, "prometheus_rule_group_iterations_missed_total", nil); n == 0 {
			t.Error("no iteration counted missed")
		}
	})
}
