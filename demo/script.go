package demo

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Phase is one step of the demo's script: the simulator runs Scenario
// until the phase ends. Durations are in the packs' time: Run divides them
// by the time scale, like the rules.
type Phase struct {
	// Scenario is the simulator scenario to select.
	Scenario string
	// Title says what happens, for the announcement.
	Title string
	// Await ends the phase (after Min, and Hold more) once this alert
	// fires. The alerts awaited are the ones the demo must show firing
	// and resolving.
	Await string
	// Recover ends the phase (after Min) once no alert is firing.
	Recover bool
	// Min and Max bound the phase. A phase without Await or Recover lasts
	// Min... Max: it ends at Max.
	Min, Max time.Duration
	// Hold keeps the scenario running after Await fired, so the alert is
	// seen firing before the next phase begins.
	Hold time.Duration
}

// Alert names the default script waits for.
const (
	AlertKVCache   = "VLLMKVCacheSaturated"
	AlertTTFT      = "VLLMTimeToFirstTokenHigh"
	AlertErrorRate = "VLLMHighErrorRate"
)

// DefaultScript is the demo: steady, KV-cache saturation, a TTFT spike,
// an error burst, then recovery. Each incident lasts until its alert of
// the vLLM pack fires, at most half an hour of pack time (30 s at the
// default scale); recovery lasts until every alert has resolved.
func DefaultScript() []Phase {
	const incident = 30 * time.Minute
	return []Phase{
		{Scenario: "steady", Title: "a healthy vLLM server under moderate load", Min: 3 * time.Minute, Max: 3 * time.Minute},
		{Scenario: "kv-saturation", Title: "the KV cache fills up to 99% and requests queue", Await: AlertKVCache, Hold: 5 * time.Minute, Max: incident},
		{Scenario: "ttft-spike", Title: "time to first token jumps to about 8 s", Await: AlertTTFT, Hold: 5 * time.Minute, Max: incident},
		{Scenario: "error-burst", Title: "30% of HTTP responses are 5xx", Await: AlertErrorRate, Hold: 5 * time.Minute, Max: incident},
		{Scenario: "steady", Title: "recovery: the server is healthy again", Recover: true, Min: time.Minute, Max: incident},
	}
}

// expected lists the alerts a script awaits, in order.
func expected(script []Phase) []string {
	var out []string
	for _, p := range script {
		if p.Await != "" {
			out = append(out, p.Await)
		}
	}
	return out
}

// scenarioSetter switches the simulator's scenario.
type scenarioSetter func(name string) error

// runScript plays the phases, announcing each on the console. It returns
// early when ctx ends or failed reports an error (a component died).
func runScript(ctx context.Context, script []Phase, scale float64, set scenarioSetter, c *console, failed <-chan error) error {
	scaled := func(d time.Duration) time.Duration { return time.Duration(float64(d) / scale) }
	for i, p := range script {
		if err := set(p.Scenario); err != nil {
			return fmt.Errorf("phase %d: %w", i+1, err)
		}
		start := c.now()
		c.phase(i+1, len(script), p, start)
		minEnd := time.NewTimer(scaled(p.Min))
		maxEnd := time.NewTimer(scaled(p.Max))
		minPassed := p.Min == 0
		var hold <-chan time.Time
		for done := false; !done; {
			history, active, changed := c.snapshot()
			if hold == nil && minPassed && phaseDone(p, history, active, start) {
				if p.Hold <= 0 || p.Await == "" {
					done = true
					continue
				}
				hold = time.After(scaled(p.Hold))
			}
			select {
			case <-ctx.Done():
				minEnd.Stop()
				maxEnd.Stop()
				return ctx.Err()
			case err := <-failed:
				minEnd.Stop()
				maxEnd.Stop()
				return err
			case <-minEnd.C:
				minPassed = true
			case <-maxEnd.C:
				if p.Await != "" || p.Recover {
					c.printf("%s\n", c.style(fmt.Sprintf("── phase %d/%d ends after %s without %s", i+1, len(script), scaled(p.Max), phaseGoal(p)), styleYellow))
				}
				done = true
			case <-hold:
				done = true
			case <-changed:
			}
		}
		minEnd.Stop()
		maxEnd.Stop()
	}
	return nil
}

// phaseDone reports whether the phase reached its goal: its alert fired
// (during the phase or still firing from before), or nothing is firing.
func phaseDone(p Phase, history []record, active int, start time.Time) bool {
	switch {
	case p.Await != "":
		for _, r := range history {
			if r.Name == p.Await && (r.Resolved.IsZero() || !r.FiredAt.Before(start)) {
				return true
			}
		}
		return false
	case p.Recover:
		return active == 0
	}
	return false
}

func phaseGoal(p Phase) string {
	if p.Await != "" {
		return p.Await + " firing"
	}
	return "every alert resolved"
}

// Verdict is the outcome of a demo run: which expected alerts did not fire
// or did not resolve.
type Verdict struct {
	NotFired, NotResolved []string
}

// OK reports whether every expected alert fired and resolved.
func (v Verdict) OK() bool { return len(v.NotFired) == 0 && len(v.NotResolved) == 0 }

func verdict(want []string, history []record) Verdict {
	var v Verdict
	for _, name := range want {
		fired, resolved := false, false
		for _, r := range history {
			if r.Name == name {
				fired = true
				resolved = resolved || !r.Resolved.IsZero()
			}
		}
		switch {
		case !fired:
			v.NotFired = append(v.NotFired, name)
		case !resolved:
			v.NotResolved = append(v.NotResolved, name)
		}
	}
	return v
}

// IncompleteError is Run's error when an expected alert did not fire or
// did not resolve.
type IncompleteError struct{ Verdict }

func (e *IncompleteError) Error() string {
	var parts []string
	if len(e.NotFired) > 0 {
		parts = append(parts, "did not fire: "+strings.Join(e.NotFired, ", "))
	}
	if len(e.NotResolved) > 0 {
		parts = append(parts, "did not resolve: "+strings.Join(e.NotResolved, ", "))
	}
	return "demo incomplete: " + strings.Join(parts, "; ")
}
