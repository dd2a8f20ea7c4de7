package report

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/model"
)

// ParseTime reads a bound of a report's span as paged report's --from
// and --to and the /report page's from and to take it: now, a duration
// back from now (Prometheus durations: -90m, -7d) or an RFC 3339 time.
func ParseTime(s string, now time.Time) (time.Time, error) {
	switch {
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-"):
		d, err := model.ParseDuration(s[1:])
		if err != nil || d == 0 {
			return time.Time{}, fmt.Errorf("%s is not a duration back from now such as -1h or -7d", quote(s))
		}
		return now.Add(-time.Duration(d)), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s is neither now, a duration back from now (-1h, -7d) nor an RFC 3339 time", quote(s))
	}
	return t, nil
}

// quote shows a value from a user, cut to a length a message can hold.
func quote(s string) string {
	if utf8.RuneCountInString(s) > 64 {
		s = string([]rune(s)[:64]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
