package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/rules"
)

// recorder is a NotifyFunc that keeps what it receives.
type recorder struct {
	mu  sync.Mutex
	got []*rules.Alert
}

func (r *recorder) notify(_ context.Context, alerts []*rules.Alert) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range alerts {
		c := *a
		r.got = append(r.got, &c)
	}
}

// take returns what was received since the last take.
func (r *recorder) take() []*rules.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// named keeps the alerts with the given alertname.
func named(alerts []*rules.Alert, name string) []*rules.Alert {
	var out []*rules.Alert
	for _, a := range alerts {
		if a.Labels.Get(labels.AlertName) == name {
			out = append(out, a)
		}
	}
	return out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// running is an engine started in the background.
type running struct {
	*engine.Engine
	reg  *prometheus.Registry
	stop func()
}

// start creates an engine with opts (a fresh registry), applies files and
// runs it until stop is called or the test ends.
func start(t *testing.T, opts engine.Options, files []string, s engine.RuleSettings) *running {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	e, err := engine.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := e.ApplyRules(files, s); err != nil {
		e.Close()
		t.Fatalf("ApplyRules: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &running{Engine: e, reg: reg, stop: stop}
}

// activeAlerts returns the engine's active (pending or firing) alerts of
// the named rule, with their annotations.
func activeAlerts(e *engine.Engine, name string) []*promrules.Alert {
	var out []*promrules.Alert
	for _, g := range e.RuleGroups() {
		for _, r := range g.Rules() {
			if ar, ok := r.(*promrules.AlertingRule); ok && ar.Name() == name {
				out = append(out, e.ActiveAlerts(context.Background(), g, ar)...)
			}
		}
	}
	return out
}

func ruleNamed(t *testing.T, e *engine.Engine, name string) promrules.Rule {
	t.Helper()
	for _, g := range e.RuleGroups() {
		for _, r := range g.Rules() {
			if r.Name() == name {
				return r
			}
		}
	}
	t.Fatalf("no rule %s", name)
	return nil
}

func metricValue(t *testing.T, reg *prometheus.Registry, name string, lbls map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := lbls[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Counter != nil:
				return m.Counter.GetValue()
			}
		}
	}
	t.Fatalf("metric %s%v not found", name, lbls)
	return 0
}

var _ = time.Second
