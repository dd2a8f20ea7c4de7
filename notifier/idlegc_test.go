package notifier

import (
	"fmt"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
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
	c.heapIsDue = func() bool {
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
// collects only in the quiet after a burst (here three flushes; 100ms
// with no flush running and no alert received), at most once a second,
// only when the heap is due, and never after close.
func TestIdleCollectorWhen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var counted atomic.Int32
		c := newIdleCollector(func() { counted.Add(1) })
		c.burst = 3
		f := &fakeCollections{due: true}
		f.install(c)
		t0 := time.Now()
		burst := func() {
			for range c.burst {
				c.begin()
				c.end()
			}
		}
		want := func(step string, n int) {
			t.Helper()
			synctest.Wait()
			if got := len(f.times()); got != n {
				t.Fatalf("%s (%v in): %d collections, want %d", step, time.Since(t0), got, n)
			}
		}

		c.received()
		time.Sleep(time.Second)
		want("alerts received, nothing flushed", 0)
		c.begin()
		c.end()
		time.Sleep(time.Second)
		want("one flush, less than a burst", 0)

		c.begin()
		time.Sleep(time.Second)
		want("a flush running for 1s", 0)
		c.begin()
		c.end()
		time.Sleep(time.Second)
		want("the third flush ended, the second runs", 0)
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

		// A heap that is not due: no collection, and none later until a
		// flush ends another quiet.
		f.mu.Lock()
		f.due = false
		f.mu.Unlock()
		time.Sleep(2 * time.Second)
		burst()
		time.Sleep(time.Second)
		f.mu.Lock()
		f.due = true
		f.mu.Unlock()
		time.Sleep(5 * time.Second)
		want("heap not due at the quiet", 3)
		c.begin()
		c.end()
		time.Sleep(100 * time.Millisecond)
		want("the next flush after the heap became due", 4)

		burst()
		c.begin()
		c.close()
		c.end()
		time.Sleep(5 * time.Second)
		want("closed", 4)
		if n := counted.Load(); n != 4 {
			t.Errorf("done called %d times, want 4", n)
		}
	})
}

// TestIdleCollectionAfterBurst: in a running notifier the collection
// comes once every group of a burst has been delivered, with no flush
// running, and is counted in paged_notifier_idle_gc_total.
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
	var (
		mu        sync.Mutex
		delivered []int // webhook requests at each collection
		inFlight  []int
	)
	r.idle.heapIsDue = func() bool { return true }
	r.idle.collect = func() {
		r.idle.mu.Lock()
		n := r.idle.inFlight
		r.idle.mu.Unlock()
		mu.Lock()
		delivered = append(delivered, len(sink.Requests()))
		inFlight = append(inFlight, n)
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
	waitFor(t, func() bool {
		got, _ := testbin.GatherSum(reg, "paged_notifier_idle_gc_total")
		return got == 1
	})
	mu.Lock()
	defer mu.Unlock()
	if len(delivered) != 1 || delivered[0] != groups || inFlight[0] != 0 {
		t.Errorf("collections saw %v webhook requests and %v flushes running, want [%d] and [0]", delivered, inFlight, groups)
	}
}

// TestHeapPastHalfway reads the runtime's own figures: not due right after
// a collection, due once more than half the way to the goal is
// allocated (well before the runtime's own trigger, at 70% or more), and
// never due with GOGC=off.
func TestHeapPastHalfway(t *testing.T) {
	cycles := func() uint64 {
		s := []rtmetrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
		rtmetrics.Read(s)
		return s[0].Value.Uint64()
	}
	var keep [][]byte
	ok := false
	// Another goroutine's allocation may start a cycle meanwhile; that
	// attempt then proves nothing, and the next one runs.
	for attempt := 0; attempt < 3 && !ok; attempt++ {
		keep = nil
		runtime.GC()
		if heapPastHalfway() {
			t.Fatal("due right after a collection")
		}
		n := cycles()
		for !heapPastHalfway() && cycles() == n {
			keep = append(keep, make([]byte, 64<<10))
		}
		ok = cycles() == n
	}
	if !ok {
		t.Fatal("a collection came before the heap was due, three times")
	}
	if len(keep) == 0 {
		t.Fatal("due before anything was allocated")
	}

	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for range 100 {
		keep = append(keep, make([]byte, 64<<10))
	}
	if heapPastHalfway() {
		t.Errorf("due with GOGC=off (%d MiB held)", len(keep)/16)
	}
	runtime.KeepAlive(keep)
}
