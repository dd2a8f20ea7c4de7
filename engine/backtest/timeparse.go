package backtest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// ParseTime reads a --from/--to value: RFC3339 ("2026-11-22T10:00:00Z"),
// unix seconds ("1795000000" or with a fraction), "now", or a duration
// relative to now in Prometheus's syntax ("-7d", "-36h", "-1w2d"), also
// written "now-7d" (which a command line does not mistake for a flag).
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "now"); ok && rest != "" {
		s = rest
	}
	switch {
	case s == "":
		return time.Time{}, fmt.Errorf("empty time")
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
		d, err := model.ParseDuration(s[1:])
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: %w", s, err)
		}
		if s[0] == '-' {
			return now.Add(-time.Duration(d)), nil
		}
		return now.Add(time.Duration(d)), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 && f < 1e11 {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("time %q: want RFC3339 (2026-11-22T10:00:00Z), unix seconds, now, or a duration from now (-7d, now-7d)", s)
}
