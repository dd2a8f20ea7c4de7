package embedded_test

// Parity between paged's two datasources: the same simulated vLLM server,
// the same scenario script and the same (time-scaled) vLLM pack, evaluated
// once against Debian's Prometheus (remote mode) and once against the
// embedded scraper and TSDB, must fire the same alerts at about the same
// time and resolve them all.
//
// Everything here runs on wall time (a real Prometheus process scrapes a
// real HTTP server), so the test polls with deadlines instead of using
// synctest, and it compares times only with a tolerance of a few
// evaluation intervals.
//
// Known difference between the two sides, which the tolerance absorbs:
// Debian's Prometheus is 2.42, whose range selectors include a sample that
// sits exactly on the window's left edge; the embedded mode uses the
// Prometheus 3 PromQL engine, whose windows are left-open. With 1 s scrapes
// and windows of at least 4 s this changes a rate by at most one sample at
// the edge; in practice the first firing times agree to within one
// evaluation interval.
//
// Both engines load the same file, so their groups evaluate at the same
// offset within the interval and firing times differ by whole intervals.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/demo"
	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/embedded"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
	"github.com/pagedhq/paged/simulator"
)

const (
	// parityScale divides the pack's durations and speeds the simulator
	// up by the same factor, as the demo's default time scale does: the
	// pack's 10m `for` lasts 10 s and its [5m] windows 5 s.
	parityScale = 60
	// parityStep is the scrape interval of both scrapers and the
	// evaluation interval of both engines.
	parityStep = time.Second
	// parityMinRange is the floor of a scaled range window: four scrapes,
	// as the demo does, so a rate always has samples to work with.
	parityMinRange = 4 * parityStep
	// parityTolerance is how far apart the first firing time of an alert
	// may be in the two modes: a few evaluation intervals, for the two
	// scrapers' and the two rule groups' independent phases and for
	// Prometheus's ingestion lag as seen by the remote queries.
	parityTolerance = 5 * parityStep
)

// TestParityRemoteAndEmbedded runs one sped-up simulated vLLM V1 server,
// scraped every second by Debian's Prometheus (with paged's engine in
// remote mode querying it) and by paged's embedded datasource (with a
// second engine), both engines loading the same time-scaled copy of the
// vLLM pack. The simulator goes through kv-saturation, ttft-spike,
// error-burst and back to steady. Both modes must fire the same alerts
// with the same label sets (the target address, hence instance, is the
// same on both sides), including the KV-cache, TTFT and error-rate alerts,
// each first firing within a few evaluation intervals of the other mode,
// and both must resolve every alert once the server is steady again.
func TestParityRemoteAndEmbedded(t *testing.T) {
	testbin.Require(t, "prometheus")
	// The script: each incident scenario runs until its alert has fired in
	// both modes, then on until neither engine has a pending alert left,
	// so that every alert the incident triggers fires in both modes or in
	// neither before the next scenario starts. Then steady, until every
	// alert has resolved in both.
	parityPhases := []struct{ scenario, await string }{
		{"kv-saturation", "VLLMKVCacheSaturated"},
		{"ttft-spike", "VLLMTimeToFirstTokenHigh"},
		{"error-burst", "VLLMHighErrorRate"},
	}
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm", "vllm.rules.yaml")
	scaledFiles, err := demo.ScaleRuleFiles([]string{pack}, t.TempDir(), parityScale, parityMinRange, parityStep)
	if err != nil {
		t.Fatal(err)
	}
	scaled := scaledFiles[0]

	sim, err := simulator.New(simulator.Options{Server: simulator.ServerVLLM, Scenario: "steady", Speed: parityScale, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	target := srv.Listener.Addr().String()

	// Remote mode: Debian's Prometheus scrapes, the engine queries it.
	prom := testbin.StartPrometheus(t, fmt.Sprintf(
		"global: {scrape_interval: %[1]s, scrape_timeout: %[1]s, evaluation_interval: %[1]s}\n"+
			"scrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [%[2]q]}]\n",
		model.Duration(parityStep), target))
	remoteDS, err := engine.NewRemote(engine.RemoteOptions{URL: prom.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	// Embedded mode: paged scrapes into its own TSDB.
	emb, err := embedded.New(embedded.Options{
		StoragePath:    t.TempDir(),
		ScrapeInterval: parityStep,
		ScrapeConfigs: []embedded.ScrapeConfig{{
			JobName:       "vllm",
			StaticConfigs: []embedded.StaticConfig{{Targets: []string{target}}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	runInBackground(t, "embedded", emb.Run)
	embDS := emb.Datasource(embedded.QueryOptions{EvaluationInterval: parityStep})

	// The engines stop (cleanups run last-in first-out) before the
	// embedded TSDB closes and Prometheus stops.
	modes := []*parityMode{
		startParityMode(t, "remote", remoteDS, scaled),
		startParityMode(t, "embedded", embDS, scaled),
	}

	// Both engines are ready and both datasources see the target up.
	waitUntil(t, 60*time.Second, "both modes ready with the target up", func() error {
		for _, m := range modes {
			if ok, why := m.eng.Ready(); !ok {
				return fmt.Errorf("%s: %s", m.name, why)
			}
			v, err := m.ds.Query(context.Background(), `up{job="vllm"} == 1`, time.Now())
			if err != nil || len(v) != 1 || v[0].Metric.Get("instance") != target {
				return fmt.Errorf("%s: up{job=\"vllm\"} == 1 gives %v, %v", m.name, v, err)
			}
		}
		return nil
	})

	for _, p := range parityPhases {
		if err := sim.SetScenario(p.scenario); err != nil {
			t.Fatal(err)
		}
		t.Logf("scenario %s", p.scenario)
		waitUntil(t, 45*time.Second, p.await+" firing in both modes", func() error {
			for _, m := range modes {
				if !m.log.fired(p.await) {
					return fmt.Errorf("%s: %s has not fired; active: %v", m.name, p.await, m.active())
				}
			}
			return nil
		})
		waitUntil(t, 30*time.Second, "no alert pending in either mode during "+p.scenario, func() error {
			for _, m := range modes {
				if pending := m.pending(); len(pending) > 0 {
					return fmt.Errorf("%s: still pending: %v", m.name, pending)
				}
			}
			return nil
		})
	}

	if err := sim.SetScenario("steady"); err != nil {
		t.Fatal(err)
	}
	t.Logf("scenario steady")
	waitUntil(t, 45*time.Second, "every alert resolved in both modes", func() error {
		for _, m := range modes {
			if act := m.active(); len(act) > 0 {
				return fmt.Errorf("%s: still active: %v", m.name, act)
			}
			if open := m.log.unresolved(); len(open) > 0 {
				return fmt.Errorf("%s: no resolved notification yet for %v", m.name, open)
			}
		}
		return nil
	})

	remote, local := modes[0].log.snapshot(), modes[1].log.snapshot()
	for _, m := range modes {
		t.Logf("%s fired %d alerts", m.name, len(m.log.snapshot()))
	}
	for key, r := range remote {
		l, ok := local[key]
		if !ok {
			t.Errorf("fired in remote mode only: %s", key)
			continue
		}
		d := l.firstStartsAt.Sub(r.firstStartsAt)
		t.Logf("%s: first fired embedded-remote = %v (fired %d/%d times)", key, d, l.firings, r.firings)
		if d.Abs() > parityTolerance {
			t.Errorf("%s first fired at %s in remote mode and %s in embedded mode: %v apart, more than %v",
				key, r.firstStartsAt.Format(time.StampMilli), l.firstStartsAt.Format(time.StampMilli), d, parityTolerance)
		}
		if r.runbook != l.runbook || r.runbook == "" {
			t.Errorf("%s: runbook_url %q in remote mode, %q in embedded mode", key, r.runbook, l.runbook)
		}
	}
	for key := range local {
		if _, ok := remote[key]; !ok {
			t.Errorf("fired in embedded mode only: %s", key)
		}
	}
	for _, p := range parityPhases {
		want := fmt.Sprintf(`{alertname=%q, instance=%q, job="vllm"`, p.await, target)
		for name, fired := range map[string]map[string]*firedAlert{"remote": remote, "embedded": local} {
			if !slices.ContainsFunc(keysOf(fired), func(k string) bool { return strings.HasPrefix(k, want) }) {
				t.Errorf("%s mode: %s{instance=%q, job=\"vllm\"} never fired; fired: %v", name, p.await, target, keysOf(fired))
			}
		}
	}
}

// parityMode is one engine and what it notified.
type parityMode struct {
	name string
	ds   engine.Datasource
	eng  *engine.Engine
	log  *alertLog
}

// startParityMode runs an engine over ds with the rule file, evaluating
// every parityStep, until the test ends.
func startParityMode(t *testing.T, name string, ds engine.Datasource, ruleFile string) *parityMode {
	t.Helper()
	log := newAlertLog()
	eng, err := engine.New(engine.Options{
		Datasource:         ds,
		DatasourceName:     name,
		StoragePath:        t.TempDir(),
		Notify:             log.notify,
		EvaluationInterval: parityStep,
		ResendDelay:        time.Minute,
		ProbeInterval:      parityStep,
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := eng.ApplyRules([]string{ruleFile}, engine.RuleSettings{EvaluationInterval: parityStep}); err != nil {
		eng.Close()
		t.Fatalf("%s: %v", name, err)
	}
	runInBackground(t, name+" engine", eng.Run)
	return &parityMode{name: name, ds: ds, eng: eng, log: log}
}

// active lists the engine's pending and firing alerts, as
// "state alertname{labels}".
func (m *parityMode) active() []string {
	var out []string
	for _, g := range m.eng.RuleGroups() {
		for _, r := range g.AlertingRules() {
			for _, a := range r.ActiveAlerts() {
				out = append(out, a.State.String()+" "+a.Labels.String())
			}
		}
	}
	slices.Sort(out)
	return out
}

// pending lists the engine's pending alerts.
func (m *parityMode) pending() []string {
	var out []string
	for _, g := range m.eng.RuleGroups() {
		for _, r := range g.AlertingRules() {
			for _, a := range r.ActiveAlerts() {
				if a.State == promrules.StatePending {
					out = append(out, a.Labels.String())
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// firedAlert is what alertLog keeps about one alert (one label set).
type firedAlert struct {
	name          string
	firstStartsAt time.Time // StartsAt of its first firing notification
	firings       int       // distinct firing episodes (distinct StartsAt)
	lastStartsAt  time.Time
	resolved      bool // the latest notification was a resolution
	runbook       string
}

// alertLog is a NotifyFunc that records, per label set, the first firing
// time and whether the alert's latest notification resolved it.
type alertLog struct {
	mu     sync.Mutex
	alerts map[string]*firedAlert
}

func newAlertLog() *alertLog { return &alertLog{alerts: map[string]*firedAlert{}} }

func (l *alertLog) notify(_ context.Context, alerts []*rules.Alert) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range alerts {
		key := a.Labels.String()
		f, ok := l.alerts[key]
		if a.Resolved(now) {
			if ok {
				f.resolved = true
			}
			continue
		}
		if !ok {
			f = &firedAlert{name: a.Labels.Get("alertname"), firstStartsAt: a.StartsAt, runbook: a.Annotations.Get("runbook_url")}
			l.alerts[key] = f
		}
		if !a.StartsAt.Equal(f.lastStartsAt) {
			f.firings++
			f.lastStartsAt = a.StartsAt
		}
		f.resolved = false
	}
}

// fired reports whether an alert of that name has fired.
func (l *alertLog) fired(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.alerts {
		if f.name == name {
			return true
		}
	}
	return false
}

// unresolved lists the alerts whose latest notification was a firing one.
func (l *alertLog) unresolved() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k, f := range l.alerts {
		if !f.resolved {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// snapshot copies the log.
func (l *alertLog) snapshot() map[string]*firedAlert {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]*firedAlert, len(l.alerts))
	for k, f := range l.alerts {
		c := *f
		out[k] = &c
	}
	return out
}

func keysOf(m map[string]*firedAlert) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// runInBackground runs run(ctx) until the test ends and checks that it
// returned without error.
func runInBackground(t *testing.T, what string, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop 30s after its context ended", what)
		}
	})
}

// waitUntil polls check until it returns nil, or fails the test with its
// last error after timeout. The scrapers and engines run on wall time in
// other goroutines and another process, so there is nothing to synctest.
func waitUntil(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s: %v", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
