package notifier

import (
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestStackPoolRun: run returns once the function has returned, on
// another goroutine, and one goroutine serves calls made one at a time.
func TestStackPoolRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStackPool(time.Minute, 16)
		defer p.close()
		x := 0
		for i := range 5 {
			p.run(func() {
				time.Sleep(time.Second) // run must wait this out
				x = i + 1
			})
			if x != i+1 {
				t.Fatalf("run %d returned before its function did (x = %d)", i, x)
			}
		}
		if started, waiting := p.size(); started != 1 || waiting != 1 {
			t.Fatalf("five calls one at a time: %d goroutines started, %d waiting; want 1 and 1", started, waiting)
		}
	})
}

// TestStackPoolConcurrent: calls in flight at once each get a goroutine
// (none waits for another's function), and at most maxIdle stay.
func TestStackPoolConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStackPool(time.Minute, 8)
		defer p.close()
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() { p.run(func() { <-release }) })
		}
		synctest.Wait()
		if started, _ := p.size(); started != 20 {
			t.Fatalf("20 calls blocked at once: %d goroutines started, want 20", started)
		}
		close(release)
		wg.Wait()
		synctest.Wait()
		if _, waiting := p.size(); waiting != 8 {
			t.Fatalf("%d goroutines waiting after the burst, want maxIdle 8", waiting)
		}
	})
}

// TestStackPoolShrinksAfterBurst: after a burst, a light steady load is
// served by the goroutine that finished last, so the others idle out.
// Handing work to the longest idle instead would keep all of them busy
// enough to stay.
func TestStackPoolShrinksAfterBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 200 * time.Millisecond
		p := newStackPool(idle, 100)
		defer p.close()
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() { p.run(func() { <-release }) })
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		// One call every 2 ms: 50 goroutines taking turns would each
		// run every 100 ms, inside idle.
		for range 500 {
			p.run(func() {})
			time.Sleep(2 * time.Millisecond)
		}
		if started, waiting := p.size(); started != 50 || waiting != 1 {
			t.Fatalf("after the burst and 1 s of light load: %d started, %d waiting; want 50 and 1", started, waiting)
		}
		time.Sleep(idle + time.Millisecond)
		synctest.Wait()
		if _, waiting := p.size(); waiting != 0 {
			t.Fatalf("%d goroutines waiting after idle with no work, want 0", waiting)
		}
	})
}

// TestStackPoolClose: close ends the waiting goroutines (synctest.Test
// fails if any is left), and a later run calls its function itself.
func TestStackPoolClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStackPool(time.Hour, 16)
		var wg sync.WaitGroup
		release := make(chan struct{})
		for range 4 {
			wg.Go(func() { p.run(func() { <-release }) })
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		p.close()
		ran := false
		p.run(func() { ran = true })
		if started, waiting := p.size(); !ran || started != 4 || waiting != 0 {
			t.Fatalf("run after close: ran %v, %d started, %d waiting; want true, 4, 0", ran, started, waiting)
		}
	})
}

// deep uses about n KiB of stack.
//
//go:noinline
func deep(n int) byte {
	var b [1024]byte
	b[n%1024] = byte(n)
	if n <= 1 {
		return b[0]
	}
	return deep(n-1) + b[n%1024]
}

// TestStackPoolKeepsStacks: the point of the pool. Goroutines that ran a
// deep function keep their grown stacks through garbage collections
// while they wait; a goroutine that waits on a shallow stack has it
// halved at every collection.
func TestStackPoolKeepsStacks(t *testing.T) {
	const workers = 64
	stackInuse := func() uint64 {
		for range 4 {
			runtime.GC() // each collection halves a stack at most once
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.StackInuse
	}
	before := stackInuse()
	p := newStackPool(time.Hour, workers)
	defer p.close()
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { p.run(func() { deep(12); <-release }) })
	}
	for {
		if started, _ := p.size(); started == workers {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	after := stackInuse()
	// Each waiting goroutine holds the frame and the 12 KiB the function
	// needed: a 32 KiB stack. Shrunk, they would hold 2-4 KiB each.
	if grown := int64(after) - int64(before); grown < workers*24<<10 {
		t.Fatalf("stacks in use grew by %d KiB with %d goroutines waiting, want at least %d KiB: their stacks were shrunk", grown>>10, workers, workers*24)
	}
}
