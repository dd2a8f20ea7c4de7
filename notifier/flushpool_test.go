package notifier

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestStackPoolRun: run returns once the function has returned, and one
// goroutine serves calls made one at a time.
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
			synctest.Wait() // the goroutine parks after its caller has gone on
		}
		if started, waiting := p.size(); started != 1 || waiting != 1 {
			t.Fatalf("five calls one at a time: %d goroutines started, %d waiting; want 1 and 1", started, waiting)
		}
	})
}

// burst makes n calls at once, each blocked until all n are, calls
// blocked, then lets them all return. It runs in a synctest bubble.
func burst(p *stackPool, n int, blocked func()) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { p.run(func() { <-release }) })
	}
	synctest.Wait()
	blocked()
	close(release)
	wg.Wait()
}

// TestStackPoolConcurrent: calls in flight at once each get a goroutine
// (none waits for another's function), and at most maxIdle stay.
func TestStackPoolConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStackPool(time.Minute, 8)
		defer p.close()
		burst(p, 20, func() {
			if started, _ := p.size(); started != 20 {
				t.Errorf("20 calls blocked at once: %d goroutines started, want 20", started)
			}
		})
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
		burst(p, 50, func() {})
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

// TestStackPoolClose: close ends the waiting goroutines, and a later run
// calls its function itself.
func TestStackPoolClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStackPool(time.Hour, 16)
		burst(p, 4, func() {})
		p.close()
		ran := false
		p.run(func() { ran = true })
		if started, waiting := p.size(); !ran || started != 4 || waiting != 0 {
			t.Fatalf("run after close: ran %v, %d started, %d waiting; want true, 4, 0", ran, started, waiting)
		}
	})
}

// TestStackPoolRunWaitsForItsOwn: a caller slow to pick up the word that
// its function returned keeps its goroutine until it has, so the next
// caller cannot take that word for its own and return while its function
// still runs (which let a flush count as sent while it was being
// cancelled).
func TestStackPoolRunWaitsForItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStackPool(time.Minute, 16)
		defer p.close()
		hold := make(chan struct{})
		p.handedOver = func() {
			p.handedOver = nil
			<-hold // the first caller is descheduled after its hand-over
		}
		first := make(chan struct{})
		go func() {
			p.run(func() {})
			close(first)
		}()
		synctest.Wait() // the first function has returned; its caller is held
		release := make(chan struct{})
		returned := make(chan struct{})
		go func() {
			p.run(func() { <-release })
			close(returned)
		}()
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("the second run returned while its function was still running")
		default:
		}
		close(hold)
		<-first
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("the second run returned while its function was still running, once the first caller went on")
		default:
		}
		close(release)
		<-returned
	})
}

// TestStackPoolRunMany: many callers at once, each reading what its own
// function wrote: a caller that returned early reads a value not yet
// written (and under -race, a race).
func TestStackPoolRunMany(t *testing.T) {
	p := newStackPool(time.Minute, 8)
	defer p.close()
	p.handedOver = runtime.Gosched // widen the gap between hand-over and wait
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 2000 {
				var got int
				p.run(func() {
					if i%7 == 0 {
						runtime.Gosched()
					}
					got = g*10000 + i
				})
				if got != g*10000+i {
					t.Errorf("caller %d, call %d: run returned with %d written", g, i, got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestStackPoolGoexit: a function that calls runtime.Goexit ends its
// caller, as it would have on the caller's goroutine, instead of leaving
// it waiting.
func TestStackPoolGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStackPool(time.Minute, 16)
		defer p.close()
		after := false
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			p.run(runtime.Goexit)
			after = true
		}()
		<-ended
		if after {
			t.Fatal("the caller went on after its function called runtime.Goexit")
		}
		ran := false
		p.run(func() { ran = true })
		if !ran {
			t.Fatal("the pool did not run a function after one called runtime.Goexit")
		}
	})
}

// TestStackPoolPanic: a panic in a pooled function ends the process with
// that panic, and its caller does not go on meanwhile.
func TestStackPoolPanic(t *testing.T) {
	if os.Getenv("PAGED_POOL_PANIC") == "1" {
		p := newStackPool(time.Minute, 4)
		go func() {
			// Runs if the caller returns or ends (runtime.Goexit).
			defer fmt.Println("caller went on")
			p.run(func() { panic("stage exploded") })
		}()
		time.Sleep(5 * time.Second)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStackPoolPanic$")
	cmd.Env = append(os.Environ(), "PAGED_POOL_PANIC=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("the process ended with %v, want exit status 2 (a panic); output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "panic: stage exploded") {
		t.Errorf("the panic is not in the output:\n%s", out)
	}
	if strings.Contains(string(out), "caller went on") {
		t.Errorf("the caller went on after its function panicked:\n%s", out)
	}
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
	const workers = 128
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
	if grown := int64(after) - int64(before); grown < workers*20<<10 {
		t.Fatalf("stacks in use grew by %d KiB with %d goroutines waiting, want at least %d KiB: their stacks were shrunk", grown>>10, workers, workers*20)
	}
}
