//go:build reliability

package reliability

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// episodeBase is added to an episode's id to make the value its instance's
// load takes while the episode lasts: the rule's summary ("load on inst-a
// is 107") then names the episode, so every notification can be traced to
// the episode it is about, however late it arrives.
const episodeBase = 100

// episode is one period in which an instance's load was high.
type episode struct {
	id         int
	instance   string
	start, end time.Time // end is zero while it lasts
}

// scheduler drives instances high and low on cycles with different
// phases, and keeps the episodes.
type scheduler struct {
	x         *exporter
	instances []string
	high, low time.Duration

	mu       sync.Mutex
	episodes []*episode
	open     map[string]*episode
	stop     chan struct{}
	done     chan struct{}
}

func newScheduler(x *exporter, n int, high, low time.Duration) *scheduler {
	s := &scheduler{x: x, high: high, low: low, open: map[string]*episode{}, stop: make(chan struct{}), done: make(chan struct{})}
	for i := range n {
		s.instances = append(s.instances, fmt.Sprintf("inst-%c", 'a'+i))
		x.set(fmt.Sprintf(`load{pod=%q}`, s.instances[i]), 0)
	}
	return s
}

// start begins the cycles once Prometheus has scraped every instance: the
// first episode of a freshly started Prometheus would otherwise fire
// seconds late, and be cut short.
func (s *scheduler) start(t *testing.T, prom *prometheus) {
	t.Helper()
	waitFor(t, 30*time.Second, "Prometheus to have every instance", func() bool {
		return prom.query("count(load)") >= float64(len(s.instances))
	})
	go s.run()
}

func (s *scheduler) run() {
	defer close(s.done)
	t0 := time.Now()
	cycle := s.high + s.low
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			for _, in := range s.instances {
				s.setHigh(in, false)
			}
			return
		case <-tick.C:
		}
		el := time.Since(t0)
		for i, in := range s.instances {
			phase := time.Duration(i) * cycle / time.Duration(len(s.instances))
			s.setHigh(in, (el+cycle-phase)%cycle < s.high && el >= phase)
		}
	}
}

func (s *scheduler) setHigh(in string, high bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.open[in]
	switch {
	case high && e == nil:
		e = &episode{id: len(s.episodes), instance: in, start: time.Now()}
		s.open[in] = e
		s.episodes = append(s.episodes, e)
		s.x.set(fmt.Sprintf(`load{pod=%q}`, in), float64(episodeBase+e.id))
	case !high && e != nil:
		e.end = time.Now()
		delete(s.open, in)
		s.x.set(fmt.Sprintf(`load{pod=%q}`, in), 0)
	}
}

// finish ends every episode and stops the cycles.
func (s *scheduler) finish() {
	close(s.stop)
	<-s.done
}

// highSince reports whether in has been high, without a break, since t.
func (s *scheduler) highSince(in string, t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.open[in]
	return e != nil && !e.start.After(t)
}

// openCount returns the number of episodes open now.
func (s *scheduler) openCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

func (s *scheduler) all() []episode {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]episode, len(s.episodes))
	for i, e := range s.episodes {
		out[i] = *e
	}
	return out
}

// summaryRE finds the rule's summary in a notification.
var summaryRE = regexp.MustCompile(`load on ([A-Za-z0-9_-]+) is ([0-9]+)`)

// episodeOf reads the instance and the episode id from text holding the
// rule's summary; id is -1 when the text names no episode.
func episodeOf(text string) (instance string, id int) {
	m := summaryRE.FindStringSubmatch(text)
	if m == nil {
		return "", -1
	}
	v, err := strconv.Atoi(m[2])
	if err != nil || v < episodeBase {
		return m[1], -1
	}
	return m[1], v - episodeBase
}
