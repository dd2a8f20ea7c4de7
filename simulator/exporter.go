package simulator

// exporter is one server's metric layout: its families in exposition order,
// how they are written, and how a simulated step moves them.
type exporter interface {
	families() []*family
	exposition() exposition
	record(s *step)
}

// familyList collects families in declaration (= exposition) order.
type familyList struct {
	list []*family
}

func (l *familyList) add(name, help string, k kind, labels []string, buckets []float64) *family {
	f := newFamily(name, help, k, labels, buckets)
	l.list = append(l.list, f)
	return f
}

func (l *familyList) counter(name, help string, labels ...string) *family {
	return l.add(name, help, kindCounter, labels, nil)
}

func (l *familyList) gauge(name, help string, labels ...string) *family {
	return l.add(name, help, kindGauge, labels, nil)
}

func (l *familyList) histogram(name, help string, buckets []float64, labels ...string) *family {
	return l.add(name, help, kindHistogram, labels, buckets)
}

func (l *familyList) summary(name, help string, quantiles []float64, labels ...string) *family {
	f := l.add(name, help, kindSummary, labels, nil)
	f.quantiles = quantiles
	return f
}

// spread observes n values around mean (log-normal jitter, four draws) so
// that per-token histograms stay cheap for long generations.
func spread(m *model, f *family, s *series, mean float64, n float64) {
	if n <= 0 || mean <= 0 {
		return
	}
	total := uint64(n)
	part := total / 4
	for i := range 4 {
		k := part
		if i == 0 {
			k += total % 4
		}
		f.observe(s, m.lognormal(mean, 0.25), k)
	}
}
