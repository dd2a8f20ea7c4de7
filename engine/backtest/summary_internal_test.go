package backtest

import (
	"testing"
	"time"
)

func TestCountNotifications(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	iv := func(lbl string, from, to time.Duration, open bool) Interval {
		return Interval{Labels: map[string]string{"alertname": "A", "instance": lbl}, Start: at(from), End: at(to), Open: open}
	}
	def := Grouping{GroupWait: 30 * time.Second, GroupInterval: 5 * time.Minute, RepeatInterval: 4 * time.Hour}
	cases := []struct {
		name   string
		firing []Interval
		g      Grouping
		to     time.Duration
		want   int
	}{
		{"none", nil, def, time.Hour, 0},
		{"fire and resolve", []Interval{iv("a", 0, 20*time.Minute, false)}, def, time.Hour, 2},
		{"fire, resolved not sent", []Interval{iv("a", 0, 20*time.Minute, false)}, Grouping{GroupWait: 30 * time.Second, GroupInterval: 5 * time.Minute, RepeatInterval: 4 * time.Hour, NoResolved: true}, time.Hour, 1},
		{"still firing, repeated every 4h", []Interval{iv("a", 0, 10*time.Hour, true)}, def, 10 * time.Hour, 3},
		{"two alerts in one group_wait", []Interval{iv("a", 0, time.Hour, false), iv("b", 10*time.Second, time.Hour, false)}, def, 2 * time.Hour, 2},
		{"second alert after the first flush", []Interval{iv("a", 0, time.Hour, false), iv("b", 2*time.Minute, time.Hour, false)}, def, 2 * time.Hour, 3},
		{"flap inside one group_interval", []Interval{iv("a", 0, 2*time.Minute, false), iv("a", 3*time.Minute, 4*time.Minute, false)}, def, time.Hour, 2},
		{"group_wait past the end", []Interval{iv("a", 59*time.Minute+50*time.Second, time.Hour, true)}, def, time.Hour, 0},
		{"two episodes, group ends between", []Interval{iv("a", 0, 10*time.Minute, false), iv("a", 30*time.Minute, 40*time.Minute, false)}, def, time.Hour, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := countNotifications(c.firing, c.g, at(c.to)); got != c.want {
				t.Errorf("got %d notifications, want %d", got, c.want)
			}
		})
	}
}
