package slackchart

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestHumanize(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{0.973, "percentunit", "97.3%"},
		{0.95, "percentunit", "95%"},
		{0.001, "percentunit", "0.1%"},
		{1, "percentunit", "100%"},
		{85, "percent", "85%"},
		{0, "", "0"},
		{0.1, "", "0.1"},
		{0.001, "", "0.001"},
		{0.0001, "", "0.0001"},
		{0.00001, "", "1e-05"},
		{0, "s", "0 s"},
		{0, "percentunit", "0%"},
		{10, "", "10"},
		{999, "", "999"},
		{1234, "", "1.23k"},
		{64000, "short", "64k"},
		{2.5e6, "", "2.5M"},
		{-1500, "", "-1.5k"},
		{0.4, "s", "400 ms"},
		{0.0005, "seconds", "500 µs"},
		{5, "s", "5 s"},
		{90, "s", "1.5 min"},
		{7200, "seconds", "2 h"},
		{250, "ms", "250 ms"},
		{2500, "ms", "2.5 s"},
		{1536, "bytes", "1.5 KiB"},
		{85, "celsius", "85°C"},
		{1200, "reqps", "1.2k req/s"},
		{3, "ops", "3 ops/s"},
		{42, "tokens", "42"}, // unknown units are named beside the axis
		{math.Inf(1), "", "+Inf"},
		{math.NaN(), "s", "NaN"},
	} {
		if got := humanize(tc.v, tc.unit); got != tc.want {
			t.Errorf("humanize(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

func TestValueAxis(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		unit   string
		want   string // the tick labels
	}{
		{0.45, 1, "percentunit", "40% 60% 80% 100%"},
		{0, 1, "percentunit", "0% 25% 50% 75% 100%"},
		{0, 10.9, "s", "0 s 2.5 s 5 s 7.5 s 10 s 12.5 s"},
		{0, 0.8, "s", "0 s 200 ms 400 ms 600 ms 800 ms"},
		{0, 10, "", "0 2.5 5 7.5 10"},
		{0, 15, "", "0 5 10 15"},
		{0, 14700, "", "0 5k 10k 15k"},
		{-3, 3, "", "-3 -2 -1 0 1 2 3"},
		{0.5, 0.5, "", "0.45 0.475 0.5 0.525 0.55"},
		{0, 0, "", "0 0.25 0.5 0.75 1"},
		{0.5, 0.501, "", "0.5 0.50025 0.5005 0.50075 0.501"},
		{1e9, 4e9, "bytes", "0 B 1 GiB 2 GiB 3 GiB 4 GiB"},
	} {
		a := newValueAxis(tc.lo, tc.hi, tc.unit)
		var ls []string
		for _, tk := range a.ticks {
			ls = append(ls, tk.Label)
		}
		if got := strings.Join(ls, " "); got != tc.want {
			t.Errorf("axis %v..%v %q: %q, want %q", tc.lo, tc.hi, tc.unit, got, tc.want)
		}
		if a.min > tc.lo || a.max < tc.hi || len(a.ticks) > 7 {
			t.Errorf("axis %v..%v: %v..%v with %d ticks", tc.lo, tc.hi, a.min, a.max, len(a.ticks))
		}
	}
}

func TestTimeTicks(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 12, 4, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		start, end time.Time
		want       string
	}{
		{at(13, 0), at(14, 30), "13:00 13:15 13:30 13:45 14:00 14:15 14:30"},
		{at(13, 7), at(14, 7), "13:10 13:20 13:30 13:40 13:50 14:00"},
		{at(13, 0), at(13, 10), "13:00 13:02 13:04 13:06 13:08 13:10"},
		{at(0, 0), at(23, 0), "00:00 03:00 06:00 09:00 12:00 15:00 18:00 21:00"},
		{at(12, 0), at(12, 0).Add(48 * time.Hour), "12:00 18:00 Dec 5 06:00 12:00 18:00 Dec 6 06:00 12:00"},
		// Other time zones are drawn in UTC.
		{at(13, 0).In(time.FixedZone("X", 3600)), at(14, 0), "13:00 13:10 13:20 13:30 13:40 13:50 14:00"},
	} {
		var ls []string
		for _, tk := range timeTicks(tc.start, tc.end, 8) {
			ls = append(ls, tk.Label)
			if tk.Value < 0 || tk.Value > tc.end.Sub(tc.start).Seconds() {
				t.Errorf("%s..%s: tick %s at %v, outside", tc.start, tc.end, tk.Label, tk.Value)
			}
		}
		if got := strings.Join(ls, " "); got != tc.want {
			t.Errorf("timeTicks(%s, %s) = %q, want %q", tc.start, tc.end, got, tc.want)
		}
	}
}
