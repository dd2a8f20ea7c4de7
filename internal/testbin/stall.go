package testbin

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RSS is a process's resident set size in bytes, from /proc/<pid>/status.
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// Stall is a wave of slow clients: N connections to Addr that each send
// Head (a request line and headers, formatted with the declared body
// length Declared), then Payload (the part of the body that arrives), and
// stop sending.
type Stall struct {
	Addr     string
	Head     string // a format with one %d: the declared length
	Declared int
	Payload  string
	N        int
	Wait     time.Duration // how long to wait for the server to close each connection
}

// StallOutcome is what a wave did to the server, process pid.
type StallOutcome struct {
	PeakRSS   int64          // its highest RSS while the wave lasted (0 when unreadable)
	LastClose time.Duration  // when it closed the last connection it closed, from the wave's start
	Statuses  map[string]int // answers by status code ("none": no answer)
	Open      int            // connections it had not closed after Wait
}

// Run opens the wave's connections and samples pid's RSS every 20 ms
// until the server has closed every connection or Wait has passed, then
// closes what is left. A server that answers before the body is sent
// closes the connection under the write: that is part of the outcome, not
// an error; a connection that cannot be opened is.
func (s Stall) Run(pid int) (StallOutcome, error) {
	out := StallOutcome{Statuses: map[string]int{}}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		conns []net.Conn
	)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	start := time.Now()
	for range s.N {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			return out, err
		}
		conns = append(conns, c)
		wg.Go(func() {
			_ = c.SetDeadline(start.Add(s.Wait))
			_, _ = io.WriteString(c, fmt.Sprintf(s.Head, s.Declared))
			_, _ = io.WriteString(c, s.Payload)
			status := "none"
			br := bufio.NewReader(c)
			if line, err := br.ReadString('\n'); err == nil {
				if f := strings.Fields(line); len(f) > 1 {
					status = f[1]
				}
			}
			// Read until the server closes the connection.
			_, err := io.Copy(io.Discard, br)
			var ne net.Error
			timedOut := errors.As(err, &ne) && ne.Timeout()
			mu.Lock()
			defer mu.Unlock()
			out.Statuses[status]++
			if timedOut {
				out.Open++
			} else {
				out.LastClose = max(out.LastClose, time.Since(start))
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if rss, err := RSS(pid); err == nil {
			out.PeakRSS = max(out.PeakRSS, rss)
		}
		select {
		case <-done:
			return out, nil
		case <-tick.C:
		}
	}
}
