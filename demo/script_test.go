package demo

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pagedhq/paged/rules"
	"github.com/pagedhq/paged/simulator"
)

type switchAt struct {
	scenario string
	at       time.Duration // since the script started
}

// TestRunScript plays a script against a fake engine: each phase waits for
// its alert, holds, and moves on; recovery waits for the resolution.
func TestRunScript(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		c := newConsole(&out, false, time.Now, testLinker().runbook)
		start := time.Now()
		var switches []switchAt
		ctx := t.Context()
		set := func(name string) error {
			switches = append(switches, switchAt{name, time.Since(start)})
			n := len(switches)
			go func() {
				switch {
				case name == "kv-saturation":
					time.Sleep(12 * time.Second)
					fired := time.Now()
					c.notify(ctx, []*rules.Alert{alert("A", "warning", fired, fired.Add(time.Hour))})
				case name == "steady" && n > 1:
					time.Sleep(5 * time.Second)
					now := time.Now()
					c.notify(ctx, []*rules.Alert{alert("A", "warning", start, now)})
				}
			}()
			return nil
		}
		script := []Phase{
			{Scenario: "steady", Title: "calm", Min: 3 * time.Minute, Max: 3 * time.Minute},
			{Scenario: "kv-saturation", Title: "full", Await: "A", Hold: 5 * time.Minute, Max: 30 * time.Minute},
			{Scenario: "steady", Title: "recovery", Recover: true, Min: time.Minute, Max: 30 * time.Minute},
		}
		if err := runScript(ctx, script, 60, set, c, nil); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		want := []switchAt{{"steady", 0}, {"kv-saturation", 3 * time.Second}, {"steady", 20 * time.Second}}
		if len(switches) != len(want) {
			t.Fatalf("switches %v, want %v", switches, want)
		}
		for i := range want {
			if switches[i] != want[i] {
				t.Errorf("switch %d: %v, want %v", i, switches[i], want[i])
			}
		}
		if took != 25*time.Second {
			t.Errorf("script took %s, want 25s (recovery ends when A resolves)", took)
		}
		history, _, _ := c.snapshot()
		if v := verdict(expected(script), history); !v.OK() {
			t.Errorf("verdict %+v", v)
		}
		for _, w := range []string{"phase 1/3  steady: calm", "phase 2/3  kv-saturation: full (waiting for A)", "phase 3/3  steady: recovery", "FIRING    warning   A", "RESOLVED  warning   A"} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("output lacks %q:\n%s", w, out.String())
			}
		}
	})
}

// TestRunScriptTimeout: a phase whose alert never fires ends at its Max,
// says so, and the verdict names the alert.
func TestRunScriptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		c := newConsole(&out, false, time.Now, testLinker().runbook)
		start := time.Now()
		script := []Phase{{Scenario: "ttft-spike", Await: "B", Max: 30 * time.Minute}}
		if err := runScript(t.Context(), script, 60, func(string) error { return nil }, c, nil); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 30*time.Second {
			t.Errorf("phase lasted %s, want its max 30s", took)
		}
		if !strings.Contains(out.String(), "phase 1/1 ends after 30s without B firing") {
			t.Errorf("no timeout note:\n%s", out.String())
		}
		history, _, _ := c.snapshot()
		v := verdict(expected(script), history)
		if v.OK() || len(v.NotFired) != 1 || v.NotFired[0] != "B" {
			t.Errorf("verdict %+v", v)
		}
		var ie error = &IncompleteError{v}
		if ie.Error() != "demo incomplete: did not fire: B" {
			t.Errorf("error %q", ie)
		}
	})
}

// TestRunScriptStops: cancellation, a component failure and a scenario
// the simulator refuses all end the script at once.
func TestRunScriptStops(t *testing.T) {
	script := []Phase{{Scenario: "steady", Max: time.Hour}}
	synctest.Test(t, func(t *testing.T) {
		c := newConsole(&bytes.Buffer{}, false, time.Now, testLinker().runbook)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := runScript(ctx, script, 1, func(string) error { return nil }, c, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("canceled: %v", err)
		}
		failed := make(chan error, 1)
		failed <- errors.New("engine died")
		if err := runScript(t.Context(), script, 1, func(string) error { return nil }, c, failed); err == nil || err.Error() != "engine died" {
			t.Errorf("failed: %v", err)
		}
		err := runScript(t.Context(), script, 1, func(string) error { return errors.New("unknown scenario") }, c, nil)
		if err == nil || !strings.Contains(err.Error(), "phase 1: unknown scenario") {
			t.Errorf("bad scenario: %v", err)
		}
	})
}

func TestDefaultScriptUsesKnownScenarios(t *testing.T) {
	script := DefaultScript()
	if got := expected(script); strings.Join(got, ",") != AlertKVCache+","+AlertTTFT+","+AlertErrorRate {
		t.Errorf("expected alerts %v", got)
	}
	o := Options{Script: script}
	if err := o.fill(); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, sc := range simulator.Scenarios(simulator.ServerVLLM) {
		known[sc.Name] = true
	}
	for _, p := range script {
		if !known[p.Scenario] {
			t.Errorf("the simulator has no scenario %q for vLLM", p.Scenario)
		}
	}
}
