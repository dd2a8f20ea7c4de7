package notifier

import (
	"runtime"
	"slices"
	"sync"
	"time"
)

// Alertmanager's dispatcher gives every alert group a goroutine of its own
// and runs the group's flushes on it. A flush goes deep (stages, template,
// body, HTTP client) and a new goroutine's stack is small, so the first
// flush of every group grew its goroutine's stack, a copy per doubling,
// and the garbage collector then shrank it again while the group waited
// for its next flush, a copy per halving. In an alert storm, one group per
// alert, that copying took a tenth of the notifier's CPU, and the grown
// stacks of tens of thousands of idle groups were most of its memory.
//
// A stackPool runs the flushes instead on goroutines that stay between
// flushes with their stacks grown. The group's goroutine hands its flush
// over and waits for it to return: the flush does what it did, on
// another stack.

// poolFrame is how much stack a pooled goroutine keeps in use while it
// waits. The runtime shrinks a stack at a collection only when less than
// a quarter of it is in use, so a goroutine whose stack grew to hold
// this frame and a flush below it keeps that stack while it waits.
const poolFrame = 16 << 10

// stackPool runs functions on goroutines that outlive them. The goroutine
// that finished last takes the next function, so under light load the
// same few do all the work and the rest, idle longer than idle, exit. At
// most maxIdle goroutines wait at once.
type stackPool struct {
	idle    time.Duration
	maxIdle int

	mu      sync.Mutex
	waiting []*poolWorker // most recently idle last
	closed  bool
	started int // goroutines started, for tests

	handedOver func() // tests: runs between a run's hand-over and its wait
}

type poolWorker struct {
	work chan func() // buffered, 1
	// done is unbuffered: the goroutine waits for its caller to take the
	// word before it parks, so a word is never left for the next caller.
	done chan bool // whether the function returned (not runtime.Goexit)
}

func newStackPool(idle time.Duration, maxIdle int) *stackPool {
	return &stackPool{idle: idle, maxIdle: maxIdle}
}

// run calls f on one of the pool's goroutines and returns when f has
// returned; after close it calls f itself. A panic in f ends the process,
// as it would on the caller's goroutine, and run does not return.
func (p *stackPool) run(f func()) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		f()
		return
	}
	var w *poolWorker
	if n := len(p.waiting); n > 0 {
		w = p.waiting[n-1]
		p.waiting[n-1] = nil
		p.waiting = p.waiting[:n-1]
	} else {
		w = &poolWorker{work: make(chan func(), 1), done: make(chan bool)}
		p.started++
		go p.serve(w)
	}
	p.mu.Unlock()
	w.work <- f
	if p.handedOver != nil {
		p.handedOver()
	}
	if !<-w.done {
		// f called runtime.Goexit, which would have ended the caller.
		runtime.Goexit()
	}
}

// serve puts poolFrame bytes on the goroutine's stack before it takes
// work, so the stack grows once, to hold the frame and the work below
// it, and keeps that size.
func (p *stackPool) serve(w *poolWorker) {
	var frame [poolFrame]byte
	holdFrame(&frame)
	p.loop(w)
}

//go:noinline
func holdFrame(*[poolFrame]byte) {}

func (p *stackPool) loop(w *poolWorker) {
	f := <-w.work // run sends the first function as it starts the goroutine
	timer := time.NewTimer(p.idle)
	defer timer.Stop()
	for {
		call(w, f)
		f = nil
		if !p.park(w) {
			return
		}
		timer.Reset(p.idle)
		var ok bool
		select {
		case f, ok = <-w.work:
		case <-timer.C:
			if p.unpark(w) {
				return
			}
			// run took w between the timer and the lock (its function
			// is on the way), or close did (w.work is closed).
			f, ok = <-w.work
		}
		if !ok {
			return
		}
	}
}

// call runs f and tells its caller whether it returned or called
// runtime.Goexit (which the caller then calls too, and this goroutine
// ends). When f panics the caller is not told: the panic goes on and ends
// the process, and a caller told would go on meanwhile.
func call(w *poolWorker, f func()) {
	returned := false
	defer func() {
		if !returned {
			// Since Go 1.21 every panic recovers non-nil, panic(nil) too.
			if x := recover(); x != nil {
				panic(x)
			}
		}
		w.done <- returned
	}()
	f()
	returned = true
}

// park puts w on the waiting list; false when the pool is closed or has
// enough goroutines waiting, and w should exit.
func (p *stackPool) park(w *poolWorker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.waiting) >= p.maxIdle {
		return false
	}
	p.waiting = append(p.waiting, w)
	return true
}

// unpark takes w off the waiting list; false when run took it first.
func (p *stackPool) unpark(w *poolWorker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.waiting, w)
	if i < 0 {
		return false
	}
	p.waiting = slices.Delete(p.waiting, i, i+1)
	return true
}

// close ends the waiting goroutines; later runs call their function on
// the caller's goroutine.
func (p *stackPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, w := range p.waiting {
		close(w.work)
	}
	p.waiting = nil
}

// size returns how many goroutines the pool started and how many wait.
func (p *stackPool) size() (started, waiting int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started, len(p.waiting)
}
