package backtest_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/engine/backtest"
)

// TestTextAndJSON: the table and the JSON carry the same facts.
func TestTextAndJSON(t *testing.T) {
	rep := kvReport(t)
	var text bytes.Buffer
	if err := backtest.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{
		"Backtest 2026-11-22T10:00:00Z .. 2026-11-22T10:50:00Z (50m), 3 rules",
		"RULE ", "NOTIFICATIONS", "TIME FIRING",
		"KVCacheHigh ", "> 0.9 ",
		"group_wait 30s, group_interval 5m, repeat_interval 4h",
		"KVCacheHigh  (max by (model_name, instance) (vllm:kv_cache_usage_perc) > 0.9, for 1m, keep_firing_for 45s)",
		"  firing  2026-11-22T10:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	var js bytes.Buffer
	if err := backtest.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rules []struct {
			Name          string
			Fired         int
			Notifications int
			TimeFiring    string `json:"time_firing"`
			Threshold     struct{ Value float64 }
			Firing        []struct {
				Labels   map[string]string
				Start    time.Time
				Duration string
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	byName := map[string]int{}
	for i, r := range got.Rules {
		byName[r.Name] = i
	}
	kv := got.Rules[byName["KVCacheHigh"]]
	if kv.Fired != 2 || kv.Notifications != 4 || kv.Threshold.Value != 0.9 || len(kv.Firing) != 2 {
		t.Errorf("KVCacheHigh in JSON: %+v", kv)
	}
	if d, err := time.ParseDuration(kv.Firing[0].Duration); err != nil || d < 15*time.Minute || kv.Firing[0].Labels["instance"] != "sim:8000" {
		t.Errorf("first firing period: %+v", kv.Firing[0])
	}
}

func FuzzParseInputs(f *testing.F) {
	for _, s := range []string{"now", "-7d", "now-1h", "2026-11-22T10:00:00Z", "1795000000.5", "A=0.5", "=", "now-"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = backtest.ParseTime(s, now)
		m, err := backtest.ParseSet([]string{s})
		if err == nil && len(m) != 1 {
			t.Errorf("ParseSet(%q) = %v", s, m)
		}
	})
}
