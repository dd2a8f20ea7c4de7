package notifier

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// fakeCollections is an idleCollector whose collections are recorded,
// with the heap's verdict set by the test.
type fakeCollections struct {
	mu  sync.Mutex
	at  []time.Time
	due bool
}

func (f *fakeCollections) install(c *idleCollector) {
	c.collect = func() {
		f.mu.Lock()
		f.at = append(f.at, time.Now())
		f.mu.Unlock()
	}
	c.heapIsDue = func(uint64) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.due
	}
}

func (f *fakeCollections) times() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.at...)
}

// TestIdleCollectorWhen drives the collector on synctest's clock: it
// collects only in the quiet after a burst (here three flushes without a
// quiet between them; the quiet is 100ms with no flush running and no
// alert received), never while a flush runs, at most once a second, only
// when the heap is due, and never after close.
func TestIdleCollectorWhen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var counted atomic.Int32
		c := newIdleCollector(func() { counted.Add(1) })
		c.burst = 3
		f := &fakeCollections{due: true}
		f.install(c)
		t0 := time.Now()
		want := func(step string, n int) {
			t.Helper()
			synctest.Wait()
			if got := len(f.times()); got != n {
				t.Fatalf("%s (%v in): %d collections, want %d", step, time.Since(t0), got, n)
			}
		}
		burst := func() {
			for range c.burst {
				c.begin()
				c.end()
			}
		}

		c.received()
		time.Sleep(time.Second)
		want("alerts received, nothing flushed", 0)
		for range 2 * c.burst {
			c.begin()
			c.end()
			time.Sleep(150 * time.Millisecond)
		}
		want("six flushes with a quiet after each", 0)

		c.begin()
		burst()
		time.Sleep(time.Second)
		want("a burst ended while a flush runs", 0)
		c.end()
		time.Sleep(99 * time.Millisecond)
		want("99ms after the last flush", 0)
		time.Sleep(time.Millisecond)
		want("100ms after the last flush", 1)
		first := f.times()[0]

		// A second burst within the second: its collection waits for it.
		burst()
		time.Sleep(500 * time.Millisecond)
		want("a second burst 100ms later", 1)
		time.Sleep(time.Second)
		want("a second burst, after the gap", 2)
		if gap := f.times()[1].Sub(first); gap != time.Second {
			t.Errorf("second collection %v after the first, want 1s", gap)
		}

		// Alerts that arrive in the quiet start it again.
		time.Sleep(2 * time.Second)
		burst()
		time.Sleep(80 * time.Millisecond)
		c.received()
		time.Sleep(80 * time.Millisecond)
		want("80ms after alerts arrived in the quiet", 2)
		time.Sleep(20 * time.Millisecond)
		want("100ms after those alerts", 3)

		// A timer that ran late, after the quiet was broken, waits for it.
		time.Sleep(2 * time.Second)
		burst()
		time.Sleep(50 * time.Millisecond)
		c.fire()
		want("a timer run 50ms into the quiet", 3)
		time.Sleep(50 * time.Millisecond)
		want("the quiet's end", 4)

		// A burst is measured from its own first activity: alerts that
		// came and went in an earlier quiet do not count.
		var allocated, asked atomic.Uint64
		c.allocs = allocated.Load
		due := c.heapIsDue
		c.heapIsDue = func(b uint64) bool { asked.Store(b); return due(b) }
		allocated.Store(1000)
		time.Sleep(2 * time.Second)
		c.received()
		time.Sleep(time.Second)
		allocated.Store(5000)
		burst()
		allocated.Store(5300)
		time.Sleep(100 * time.Millisecond)
		want("a burst after alerts alone", 5)
		if b := asked.Load(); b != 300 {
			t.Errorf("the burst was measured at %d bytes, want 300 (its own)", b)
		}

		// A heap that is not due: no collection, and that burst is over.
		f.mu.Lock()
		f.due = false
		f.mu.Unlock()
		time.Sleep(2 * time.Second)
		burst()
		time.Sleep(time.Second)
		f.mu.Lock()
		f.due = true
		f.mu.Unlock()
		c.begin()
		c.end()
		time.Sleep(5 * time.Second)
		want("a heap not due, then one flush", 5)
		burst()
		time.Sleep(100 * time.Millisecond)
		want("the next burst", 6)

		burst()
		c.begin()
		c.close()
		c.end()
		time.Sleep(5 * time.Second)
		want("closed", 6)
		if n := counted.Load(); n != 6 {
			t.Errorf("done called %d times, want 6", n)
		}
	})
}

// TestIdleCollectionAfterBurst: in a running notifier the collection
// comes once a burst of deliveries is over, with no flush running and the
// last webhook request at least the quiet ago, and is counted in
// paged_notifier_idle_gc_total.
func TestIdleCollectionAfterBurst(t *testing.T) {
	sink := notifiertest.NewSink(t)
	reg := prometheus.NewRegistry()
	r := start(t, fmt.Sprintf(`
route:
  receiver: hook
  group_by: [alertname, id]
  group_wait: 50ms
  group_interval: 1h
  repeat_interval: 4h
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, sink.URL()), Options{Registerer: reg})

	const groups = 200
	type collection struct {
		delivered, inFlight int
		sinceLast           time.Duration
	}
	var (
		mu   sync.Mutex
		seen []collection
	)
	var burstBytes atomic.Uint64
	r.idle.heapIsDue = func(b uint64) bool { burstBytes.Store(b); return true }
	r.idle.collect = func() {
		r.idle.mu.Lock()
		n := r.idle.inFlight
		r.idle.mu.Unlock()
		reqs := sink.Requests()
		var last time.Time
		for _, q := range reqs {
			if q.At.After(last) {
				last = q.At
			}
		}
		mu.Lock()
		seen = append(seen, collection{len(reqs), n, time.Since(last)})
		mu.Unlock()
	}
	if got, err := testbin.GatherSum(reg, "paged_notifier_idle_gc_total"); err != nil || got != 0 {
		t.Fatalf("paged_notifier_idle_gc_total before any flush = %v (%v), want 0", got, err)
	}
	var as []*rules.Alert
	for i := range groups {
		as = append(as, firing("IdleBurst", "id", fmt.Sprint(i)))
	}
	r.Notify(t.Context(), as)
	waitFor(t, func() bool { return len(sink.Requests()) == groups })
	waitFor(t, func() bool {
		got, _ := testbin.GatherSum(reg, "paged_notifier_idle_gc_total")
		return got >= 1
	})
	// 200 groups, their alerts and their flushes allocate megabytes.
	if b := burstBytes.Load(); b < 1<<20 {
		t.Errorf("the burst allocated %d bytes by the collector's count, want at least 1 MiB", b)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if s.delivered < r.idle.burst || s.inFlight != 0 || s.sinceLast < r.idle.quiet {
			t.Errorf("a collection after %d webhook requests, %d flushes running, %v after the last request; want at least %d, none, at least %v",
				s.delivered, s.inFlight, s.sinceLast, r.idle.burst, r.idle.quiet)
		}
	}
}

// TestIdleQuietFollowsAlerts: alerts posted to the API, or handed over by
// the engine, in the quiet after a burst start the quiet again, in a
// notifier running on synctest's clock.
func TestIdleQuietFollowsAlerts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := notifiertest.NewSlackHandler(testToken)
		// A group_interval longer than the test: no flush but the first.
		conf := strings.Replace(slackBotConfig(s, ""), "group_interval: 100ms", "group_interval: 1h", 1)
		n, err := New(Options{Config: mustConfig(t, conf), Transport: notifiertest.InProcess(s), ExternalURL: "http://paged.example:9095"})
		if err != nil {
			t.Fatal(err)
		}
		f := &fakeCollections{due: true}
		f.install(n.idle)
		n.idle.burst = 1
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- n.Run(ctx) }()
		api := n.APIHandler()
		post := func(name string) {
			body := fmt.Sprintf(`[{"labels":{"alertname":%q},"startsAt":%q}]`, name, time.Now().Add(-time.Hour).Format(time.RFC3339))
			w := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/api/v2/alerts", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			api.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				t.Fatalf("POST /api/v2/alerts: %d %s", w.Code, w.Body)
			}
		}
		// flushed waits until the Slack stand-in has had calls posts and
		// the flush that made the last one has ended.
		flushed := func(calls int) {
			t.Helper()
			for deadline := time.Now().Add(time.Minute); len(s.Calls()) < calls; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d Slack calls after a minute, want %d", len(s.Calls()), calls)
				}
			}
			synctest.Wait()
		}
		want := func(step string, c int) {
			t.Helper()
			synctest.Wait()
			if got := len(f.times()); got != c {
				t.Fatalf("%s: %d collections, want %d", step, got, c)
			}
		}

		post("APIFirst")
		flushed(1)
		time.Sleep(60 * time.Millisecond)
		post("APIFirst") // the same alert again, as every evaluation sends it
		time.Sleep(60 * time.Millisecond)
		want("60ms after an API post in the quiet", 0)
		time.Sleep(40 * time.Millisecond)
		want("100ms after it", 1)

		time.Sleep(2 * time.Second)
		a := firing("EngineSecond")
		n.Notify(ctx, []*rules.Alert{a})
		flushed(2)
		time.Sleep(60 * time.Millisecond)
		n.Notify(ctx, []*rules.Alert{a})
		time.Sleep(60 * time.Millisecond)
		want("60ms after the engine's hand-over in the quiet", 1)
		time.Sleep(40 * time.Millisecond)
		want("100ms after it", 2)

		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestHeapDue reads the runtime's own figures: right after a collection
// the heap is due only for a burst that fills 70 % of its headroom, and a
// heap that has grown to that point is due without one; with GOGC=off
// nothing is.
func TestHeapDue(t *testing.T) {
	sample := func(name string) uint64 {
		s := []rtmetrics.Sample{{Name: name}}
		rtmetrics.Read(s)
		return s[0].Value.Uint64()
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	headroom := sample("/gc/heap/goal:bytes") - sample("/gc/heap/live:bytes")
	if heapDue(0) || heapDue(headroom/2) {
		t.Errorf("due right after a collection for a burst of %d bytes, half the headroom", headroom/2)
	}
	if !heapDue(headroom) {
		t.Errorf("not due for a burst of the whole headroom (%d bytes)", headroom)
	}

	// Another goroutine's allocation may start a cycle meanwhile; that
	// attempt then proves nothing, and the next one runs.
	var keep [][]byte
	ok := false
	for attempt := 0; attempt < 3 && !ok; attempt++ {
		keep = nil
		runtime.GC()
		n := sample("/gc/cycles/total:gc-cycles")
		for i := 0; !heapDue(0) && sample("/gc/cycles/total:gc-cycles") == n; i++ {
			if i == 1<<17 {
				t.Fatal("not due after 1 GiB allocated and held")
			}
			// Small steps: the runtime may start a cycle from 45/64 of
			// the headroom on, just past the 70 % heapDue looks for.
			keep = append(keep, make([]byte, 8<<10))
		}
		ok = sample("/gc/cycles/total:gc-cycles") == n
	}
	if !ok {
		t.Fatal("a collection came before the heap was due, three times")
	}
	if len(keep) == 0 {
		t.Fatal("due before anything was allocated")
	}

	debug.SetGCPercent(-1)
	if heapDue(1 << 40) {
		t.Error("due with GOGC=off for a burst of 1 TiB")
	}
	runtime.KeepAlive(keep)
}
