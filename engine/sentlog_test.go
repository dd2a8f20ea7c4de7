package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/rules"
)

// FuzzOpenSentLog: whatever is on disk, loading never panics, and what
// loads can be recorded against and saved again.
func FuzzOpenSentLog(f *testing.F) {
	f.Add([]byte(`{"version":1,"entries":[{"alert":{"Labels":{"alertname":"X"},"Annotations":{},"StartsAt":"2026-01-01T00:00:00Z","EndsAt":"2026-01-01T00:05:00Z"},"lastSentAt":"2026-01-01T00:01:00Z"}]}`))
	f.Add([]byte(`{"version":1,"entries":[null,{"alert":null}]}`))
	f.Add([]byte(`{"entries":[{"alert":{"Labels":{"":""}}}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "sent.json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, _ := openSentLog(p)
		if s == nil {
			t.Fatal("nil log")
		}
		now := time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC)
		s.record([]*rules.Alert{{Labels: labels.FromStrings("alertname", "X"), StartsAt: now, EndsAt: now.Add(time.Minute)}}, now, time.Minute)
		s.prune(now)
		if err := s.flush(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSentLogRecord(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sent.json")
	s, err := openSentLog(p)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &rules.Alert{Labels: labels.FromStrings("alertname", "X", "instance", "a"), StartsAt: t0, EndsAt: t0.Add(4 * time.Minute)}
	out, n := s.record([]*rules.Alert{a}, t0, time.Minute)
	if len(out) != 1 || n != 0 {
		t.Fatalf("first send: %d sent, %d suppressed", len(out), n)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}

	// A new run: the same alert, fired again 30s later with a new StartsAt.
	s2, err := openSentLog(p)
	if err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(30 * time.Second)
	again := &rules.Alert{Labels: a.Labels, StartsAt: t1, EndsAt: t1.Add(4 * time.Minute)}
	if out, n := s2.record([]*rules.Alert{again}, t1, time.Minute); len(out) != 0 || n != 1 {
		t.Fatalf("re-send within the resend delay: %d sent, %d suppressed", len(out), n)
	}
	t2 := t0.Add(90 * time.Second)
	later := &rules.Alert{Labels: a.Labels, StartsAt: t1, EndsAt: t2.Add(4 * time.Minute)}
	out, _ = s2.record([]*rules.Alert{later}, t2, time.Minute)
	if len(out) != 1 || !out[0].StartsAt.Equal(t0) {
		t.Fatalf("re-send after the delay: %+v", out)
	}
	resolved := &rules.Alert{Labels: a.Labels, StartsAt: t0, EndsAt: t2.Add(time.Second)}
	out, _ = s2.record([]*rules.Alert{resolved}, t2.Add(time.Second), time.Minute)
	if len(out) != 1 || len(s2.entries) != 0 {
		t.Fatalf("resolved alert: %d out, %d entries left", len(out), len(s2.entries))
	}
}

// TestEncodeSentFileMatchesEncodingJSON: the hand-written encoder writes
// what encoding/json writes for the same entries, byte for byte, odd
// strings and times included.
func TestEncodeSentFileMatchesEncodingJSON(t *testing.T) {
	odd := []string{"", "x", `quo"te`, `back\slash`, "new\nline", "<b>&amp;</b>", "ünïcödé", "\u2028\u2029", "\x01\x7f", "bad \xff utf-8", "emoji 🚀"}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	var entries []*sentEntry
	for i := range 60 {
		lb := labels.NewBuilder(labels.FromStrings("alertname", odd[i%len(odd)]+"A"))
		ab := labels.NewBuilder(labels.EmptyLabels())
		for j := range i % 4 {
			lb.Set(fmt.Sprintf("l%d_%s", j, odd[(i+j)%len(odd)]), odd[(i*3+j)%len(odd)])
			ab.Set(fmt.Sprintf("a%d", j), odd[(i*7+j)%len(odd)])
		}
		entries = append(entries, &sentEntry{
			Alert: &rules.Alert{
				Labels: lb.Labels(), Annotations: ab.Labels(),
				StartsAt: t0.Add(time.Duration(i) * time.Second), EndsAt: t0.Add(time.Duration(i) * time.Minute),
				GeneratorURL: "http://x/graph?g0.expr=" + odd[i%len(odd)], Stale: i%2 == 0,
			},
			LastSentAt: t0.Add(time.Duration(i) * time.Millisecond).UTC(),
		})
	}
	entries = append(entries, &sentEntry{Alert: &rules.Alert{Labels: labels.FromStrings("alertname", "Zero")}})
	want, err := json.Marshal(sentFile{Version: 1, Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	if got := encodeSentFile(entries); string(got) != string(want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		from := max(i-80, 0)
		t.Fatalf("encodeSentFile differs from encoding/json at byte %d:\n got  …%s\n want …%s", i, got[from:min(i+80, len(got))], want[from:min(i+80, len(want))])
	}
	if got := encodeSentFile(nil); string(got) != `{"version":1,"entries":[]}` {
		t.Errorf("empty log: %s", got)
	}
}
