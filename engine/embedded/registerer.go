package embedded

import (
	"log/slog"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// registerer passes registrations through to the caller's Registerer and
// remembers them, so that Close can take them all back. The TSDB registers
// with MustRegister and never unregisters; without this, a second Embedded
// on the same Registerer after the first has closed (a restart inside one
// process) would panic on duplicate metrics. MustRegister does not panic:
// a collector the Registerer refuses (a second Embedded open at the same
// time) is logged and left out.
type registerer struct {
	next   prometheus.Registerer
	logger *slog.Logger

	mu         sync.Mutex
	collectors []prometheus.Collector
}

func (r *registerer) Register(c prometheus.Collector) error {
	if err := r.next.Register(c); err != nil {
		return err
	}
	r.mu.Lock()
	r.collectors = append(r.collectors, c)
	r.mu.Unlock()
	return nil
}

func (r *registerer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			r.logger.Warn("metrics not registered", "err", err)
		}
	}
}

func (r *registerer) Unregister(c prometheus.Collector) bool {
	r.mu.Lock()
	if i := slices.Index(r.collectors, c); i >= 0 {
		r.collectors = slices.Delete(r.collectors, i, i+1)
	}
	r.mu.Unlock()
	return r.next.Unregister(c)
}

// unregisterAll takes back every collector still registered.
func (r *registerer) unregisterAll() {
	r.mu.Lock()
	cs := r.collectors
	r.collectors = nil
	r.mu.Unlock()
	for _, c := range cs {
		r.next.Unregister(c)
	}
}
