//go:build reliability

package reliability

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// page is one reading of a /metrics page: the samples of each metric.
type page map[string][]float64

// readPage reads url's /metrics (the text format of Prometheus's and
// VictoriaMetrics' libraries alike).
func readPage(base string) (page, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", base, resp.Status)
	}
	p := page{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		rest := line[len(name):]
		if i := strings.LastIndex(rest, "}"); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			p[name] = append(p[name], v)
		}
	}
	return p, sc.Err()
}

func (p page) sum(name string) float64 {
	s := 0.0
	for _, v := range p[name] {
		s += v
	}
	return s
}

func (p page) max(name string) float64 {
	m := math.Inf(-1)
	for _, v := range p[name] {
		m = math.Max(m, v)
	}
	return m
}

func (p page) has(name string) bool { return len(p[name]) > 0 }

// reading is a page and when it was read.
type reading struct {
	at time.Time
	p  page
}

// procWriteBytes is the pseudo-metric a sampler adds to each page: the
// bytes the process has caused to be written to storage (write_bytes of
// /proc/<pid>/io).
const procWriteBytes = "proc_io_write_bytes"

// writeBytes reads write_bytes of /proc/<pid>/io.
func writeBytes(pid int) (float64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// sampler reads a process's /metrics at a fixed interval until stopped.
type sampler struct {
	base  string
	pid   int // for procWriteBytes; 0: none
	every time.Duration

	mu       sync.Mutex
	readings []reading
	failed   int
	stopc    chan struct{}
	done     chan struct{}
}

func startSampler(base string, pid int, every time.Duration) *sampler {
	s := &sampler{base: base, pid: pid, every: every, stopc: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *sampler) run() {
	defer close(s.done)
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	for {
		at := time.Now()
		p, err := readPage(s.base)
		if err == nil && s.pid > 0 {
			if v, ok := writeBytes(s.pid); ok {
				p[procWriteBytes] = []float64{v}
			}
		}
		s.mu.Lock()
		if err != nil {
			s.failed++
		} else {
			s.readings = append(s.readings, reading{at, p})
		}
		s.mu.Unlock()
		select {
		case <-s.stopc:
			return
		case <-tick.C:
		}
	}
}

// stop ends the sampling and returns the readings.
func (s *sampler) stop() []reading {
	close(s.stopc)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readings
}

// thirds splits readings into the first, middle and last third of their
// time span.
func thirds(rs []reading) (first, middle, last []reading) {
	if len(rs) == 0 {
		return nil, nil, nil
	}
	t0, span := rs[0].at, rs[len(rs)-1].at.Sub(rs[0].at)
	for _, r := range rs {
		switch el := r.at.Sub(t0); {
		case el < span/3:
			first = append(first, r)
		case el < 2*span/3:
			middle = append(middle, r)
		default:
			last = append(last, r)
		}
	}
	return first, middle, last
}

// mean is the mean of f over readings.
func mean(rs []reading, f func(page) float64) float64 {
	if len(rs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, r := range rs {
		s += f(r.p)
	}
	return s / float64(len(rs))
}

// maxOf is the maximum of f over readings.
func maxOf(rs []reading, f func(page) float64) float64 {
	m := math.Inf(-1)
	for _, r := range rs {
		m = math.Max(m, f(r.p))
	}
	return m
}

// rate is the growth per second of a counter (summed over its samples)
// between the first and the last of readings.
func rate(rs []reading, name string) float64 {
	if len(rs) < 2 {
		return math.NaN()
	}
	a, b := rs[0], rs[len(rs)-1]
	return (b.p.sum(name) - a.p.sum(name)) / b.at.Sub(a.at).Seconds()
}

func mib(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }
