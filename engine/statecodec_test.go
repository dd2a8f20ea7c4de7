package engine

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"
)

func TestStateCodecRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	a := &storedAlert{
		labels:        labels.FromStrings("alertname", "KV", "instance", "a", "severity", "critical"),
		metricExtra:   labels.FromStrings("__name__", "vllm:kv_cache_usage_perc", "severity", "x"),
		metricMissing: []string{"alertname"},
		state:         promrules.StateFiring, value: math.NaN(),
		activeAt: t0, firedAt: t0.Add(time.Minute), lastSentAt: t0.Add(2 * time.Minute), validUntil: t0.Add(6 * time.Minute),
	}
	b := &storedAlert{labels: labels.FromStrings("alertname", "KV", "instance", "b"), annotations: labels.FromStrings("summary", "ü\x00"),
		state: promrules.StateInactive, value: math.Inf(-1), resolvedAt: t0, keepFiringSince: t0.Add(-time.Second)}
	rc := ruleChange{id: ruleID{name: "KV", labels: `{severity="critical"}`, nth: 2}, puts: []*storedAlert{a}, times: []*storedAlert{b}, drops: []uint64{42}}
	rc.setHash(a, a.labels.Hash())
	rc.setHash(b, 7)
	in := &groupRecord{key: "f.yaml;g", lastEval: t0, rules: []ruleChange{rc, {id: ruleID{name: "Gone"}, gone: true}}}
	g, _, _, err := decodeState(encodeGroup(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	if g.key != in.key || !g.lastEval.Equal(t0) || len(g.rules) != 2 || !g.rules[1].gone || g.rules[1].id.name != "Gone" {
		t.Fatalf("decoded %+v", g)
	}
	r := g.rules[0]
	if r.id != rc.id || len(r.puts) != 1 || len(r.times) != 1 || len(r.drops) != 1 || r.drops[0] != 42 || r.hash[r.times[0]] != 7 {
		t.Fatalf("rule change %+v", r)
	}
	p := r.puts[0]
	if !labels.Equal(p.labels, a.labels) || !labels.Equal(p.metricExtra, a.metricExtra) || len(p.metricMissing) != 1 ||
		p.state != promrules.StateFiring || !math.IsNaN(p.value) || !p.activeAt.Equal(t0) || !p.validUntil.Equal(a.validUntil) || !p.resolvedAt.IsZero() {
		t.Errorf("put %+v", p)
	}
	if !labels.Equal(p.metric(), labels.FromStrings("__name__", "vllm:kv_cache_usage_perc", "instance", "a", "severity", "x")) {
		t.Errorf("metric %s", p.metric())
	}
	tm := r.times[0]
	if tm.state != promrules.StateInactive || !math.IsInf(tm.value, -1) || !tm.resolvedAt.Equal(t0) || !tm.keepFiringSince.Equal(b.keepFiringSince) {
		t.Errorf("times %+v", tm)
	}
	_, _, h, err := decodeState(encodeHealth(nil, healthRecord{down: true, downSince: t0}))
	if err != nil || !h.down || !h.downSince.Equal(t0) || !h.lastSent.IsZero() {
		t.Errorf("health %+v %v", h, err)
	}
	_, d, _, err := decodeState(encodeDropGroup(nil, "x;y"))
	if err != nil || d != "x;y" {
		t.Errorf("drop %q %v", d, err)
	}
	// Every truncation of a record is an error, never a panic.
	full := encodeGroup(nil, in)
	for i := range full {
		if _, _, _, err := decodeState(full[:i]); err == nil {
			t.Errorf("truncated to %d of %d bytes: no error", i, len(full))
		}
	}
}

func FuzzDecodeState(f *testing.F) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := &storedAlert{labels: labels.FromStrings("alertname", "X"), state: promrules.StatePending, activeAt: t0}
	rc := ruleChange{id: ruleID{name: "X"}, puts: []*storedAlert{a}}
	rc.setHash(a, 1)
	f.Add(encodeGroup(nil, &groupRecord{key: "k", lastEval: t0, rules: []ruleChange{rc}}))
	f.Add(encodeHealth(nil, healthRecord{down: true}))
	f.Add([]byte("G\x01\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &stateStore{groups: map[string]*groupSnap{}}
		_ = s.apply(b) // must not panic
	})
}
