package notifier

import (
	"context"
	"runtime"
	rtmetrics "runtime/metrics"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/provider/mem"
)

// An alert storm reaches the notifier in bursts: every evaluation posts
// its firing alerts again, new groups flush together after group_wait,
// and then nothing happens until the next evaluation. Go's collector
// starts a cycle as the heap nears its goal (70 % of the way or later),
// and in a storm that moment falls in a burst: its marking, and the
// assists it asks of allocating goroutines, delay that burst's
// notifications. With tens of thousands of groups one collection costs
// as much CPU as a burst's flushes (bench/notifier).
//
// An idleCollector runs that collection in the quiet after a burst
// instead, when another burst that allocates as much as this one would
// take the heap to the runtime's earliest trigger: the next burst then
// starts with the whole headroom and usually ends before the goal. The quiet is quiet long with no flush running and no
// alert received; a burst is at least burst flushes with no such quiet
// between them. A notifier that flushes a group now and then (a few
// groups every group_interval) never has a burst and leaves its
// collections to the runtime; in embedded mode, where most of the heap is
// the engine's, a burst moves at most one collection forward. A flush
// that stays in the pipeline (retrying a receiver that is down, or an HA
// peer waiting its turn) keeps the quiet from coming, and the runtime
// collects as it would without this.
type idleCollector struct {
	quiet time.Duration // no flush running and no alert received for this long
	gap   time.Duration // at least this long between two collections
	burst int           // flushes without a quiet between them that make a burst

	collect   func()                  // runtime.GC
	heapIsDue func(burst uint64) bool // whether a burst allocating as much would reach the trigger
	allocs    func() uint64           // bytes allocated so far
	done      func()                  // counts a collection

	mu         sync.Mutex
	inFlight   int
	flushed    int       // flushes ended since the last quiet
	active     time.Time // the last flush's start or end, or alerts received
	open       bool      // a burst (or a few flushes) since the last quiet
	start      uint64    // allocs when it began
	timer      *time.Timer
	last       time.Time // the last collection
	collecting bool
	closed     bool
}

func newIdleCollector(done func()) *idleCollector {
	c := &idleCollector{quiet: 100 * time.Millisecond, gap: time.Second, burst: 100,
		collect: runtime.GC, heapIsDue: heapDue, allocs: heapAllocs, done: done}
	c.timer = time.AfterFunc(time.Hour, c.fire)
	c.timer.Stop()
	return c
}

// begin marks a flush started.
func (c *idleCollector) begin() {
	c.mu.Lock()
	c.inFlight++
	c.mark()
	c.timer.Stop()
	c.mu.Unlock()
}

// end marks a flush finished; the last one running starts the quiet.
func (c *idleCollector) end() {
	c.mu.Lock()
	c.inFlight--
	c.flushed++
	c.active = time.Now()
	if c.inFlight == 0 && !c.closed {
		c.timer.Reset(c.quiet)
	}
	c.mu.Unlock()
}

// received marks alerts received: their groups may flush soon, so the
// quiet starts again. Alerts that no flush follows end in a quiet too,
// which closes their window: a later burst is measured from its own start.
func (c *idleCollector) received() {
	c.mu.Lock()
	c.mark()
	if c.inFlight == 0 && !c.closed {
		c.timer.Reset(c.quiet)
	}
	c.mu.Unlock()
}

// mark records activity; the first since a quiet opens a burst. Its
// caller holds c.mu.
func (c *idleCollector) mark() {
	c.active = time.Now()
	if !c.open {
		c.open, c.start = true, c.allocs()
	}
}

func (c *idleCollector) fire() {
	c.mu.Lock()
	if c.closed || c.collecting || c.inFlight > 0 {
		c.mu.Unlock()
		return
	}
	// A timer that fired as a flush began or alerts arrived, and ran
	// after them, finds the quiet broken: it waits for the rest of it.
	if rest := c.quiet - time.Since(c.active); rest > 0 {
		c.timer.Reset(rest)
		c.mu.Unlock()
		return
	}
	if c.flushed < c.burst {
		c.flushed, c.open = 0, false // a few flushes, not a burst
		c.mu.Unlock()
		return
	}
	if wait := c.gap - time.Since(c.last); wait > 0 {
		c.timer.Reset(wait)
		c.mu.Unlock()
		return
	}
	c.collecting = true
	allocated := c.allocs() - c.start
	c.flushed, c.open = 0, false
	c.mu.Unlock()
	due := c.heapIsDue(allocated)
	if due {
		c.collect()
	}
	c.mu.Lock()
	c.collecting = false
	if due {
		c.last = time.Now()
	}
	c.mu.Unlock()
	if due {
		c.done()
	}
}

// close stops the collector; begin, end and received still work.
func (c *idleCollector) close() {
	c.mu.Lock()
	c.closed = true
	c.timer.Stop()
	c.mu.Unlock()
}

// heapDue reports whether allocating burst more bytes would take the
// heap to the runtime's earliest trigger: 70 % of the way from the live
// heap of the last collection to the goal of the next (the pacer never
// starts a cycle before that). The heap counts the objects allocated and
// not yet freed. With GOGC=off and no memory limit the goal is out of
// reach, and it never would.
func heapDue(burst uint64) bool {
	s := []rtmetrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	rtmetrics.Read(s)
	for _, x := range s {
		if x.Value.Kind() != rtmetrics.KindUint64 {
			return false
		}
	}
	live, goal, heap := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
	if goal <= live {
		return false
	}
	grown := uint64(0)
	if heap > live {
		grown = heap - live
	}
	return grown+burst >= (goal-live)/10*7
}

// heapAllocs is the bytes allocated since the process started.
func heapAllocs() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// receivedAlerts is the alert store as the API and Notify write to it:
// every Put tells the idle collector that alerts arrived.
type receivedAlerts struct {
	*mem.Alerts
	idle *idleCollector
}

// Put implements provider.Alerts. Routing a large batch can take a
// while (Put waits for the dispatcher to take each alert), so the quiet
// starts again when it is done, too.
func (a receivedAlerts) Put(ctx context.Context, alerts ...*alert.Alert) error {
	a.idle.received()
	defer a.idle.received()
	return a.Alerts.Put(ctx, alerts...)
}
