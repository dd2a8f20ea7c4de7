package notifiertest

import (
	"sync"
	"testing"
	"time"
)

// httpCalls is what the HTTP stand-ins of a receiver's API (PagerDuty,
// Opsgenie, Teams) keep of the requests they are sent: how many, the
// statuses queued to answer the next ones, and a channel closed at each,
// for Wait. mu also guards the stand-in's own record.
type httpCalls struct {
	mu       sync.Mutex
	script   []int
	attempts int
	changed  chan struct{}
}

func newHTTPCalls() httpCalls { return httpCalls{changed: make(chan struct{})} }

// Script queues statuses to answer the next requests with, before any is
// processed.
func (c *httpCalls) Script(status ...int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.script = append(c.script, status...)
}

// Attempts is the number of requests received, failed ones included.
func (c *httpCalls) Attempts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts
}

// received counts a request and wakes the waiters; it returns the status
// Script queued for the request, if any. The caller holds c.mu.
func (c *httpCalls) received() (status int, scripted bool) {
	c.attempts++
	close(c.changed)
	c.changed = make(chan struct{})
	if len(c.script) == 0 {
		return 0, false
	}
	status, c.script = c.script[0], c.script[1:]
	return status, true
}

// waitFor waits until cond holds, checking it again each time the channel
// *changed (read under mu) is closed, and fails the test after timeout (a
// bail-out, not a timing assertion). The channel is read before cond is
// checked: a change between the two then closes the channel waited on
// rather than going unseen until the timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, mu *sync.Mutex, changed *chan struct{}, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		mu.Lock()
		ch := *changed
		mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("%s stand-in: condition not reached", what)
		}
	}
}
