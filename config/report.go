package config

import (
	"fmt"
	"strings"
	"time"
	// The time zones travel with the binary: report.time_zone must mean
	// the same on a machine without /usr/share/zoneinfo.
	_ "time/tzdata"

	"go.yaml.in/yaml/v3"
)

// timeZone parses an IANA time zone name (Europe/Paris, UTC).
func (d *decoder) timeZone(dst **time.Location) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		if v == "" || strings.EqualFold(v, "local") {
			d.errorf(n, key, "expected a time zone name such as Europe/Paris or UTC, got %s", d.quote(n))
			return
		}
		loc, err := time.LoadLocation(v)
		if err != nil {
			d.errorf(n, key, "unknown time zone %s (use an IANA name such as Europe/Paris, America/New_York or UTC)", d.quote(n))
			return
		}
		*dst = loc
	}
}

// workingHours parses "HH:MM-HH:MM", the start before the end (24:00
// ends at midnight).
func (d *decoder) workingHours(start, end *time.Duration) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		a, b, found := strings.Cut(v, "-")
		s, err1 := clockTime(strings.TrimSpace(a))
		e, err2 := clockTime(strings.TrimSpace(b))
		switch {
		case !found || err1 != nil || err2 != nil:
			d.errorf(n, key, "expected hours such as 09:00-18:00, got %s", d.quote(n))
		case s >= e:
			d.errorf(n, key, "the hours %s end before they start (a night shift is the hours outside the working hours)", d.quote(n))
		default:
			*start, *end = s, e
		}
	}
}

// clockTime reads HH:MM as an offset from midnight, 00:00 to 24:00.
func clockTime(s string) (time.Duration, error) {
	var h, m int
	if len(s) != 5 || s[2] != ':' || strings.Trim(s[:2]+s[3:], "0123456789") != "" {
		return 0, fmt.Errorf("not HH:MM")
	}
	if _, err := fmt.Sscanf(s, "%02d:%02d", &h, &m); err != nil {
		return 0, err
	}
	if h < 0 || m < 0 || m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("out of range")
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, nil
}

var weekdayNames = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

// weekdays parses a list of days (mon, tue... or monday, tuesday...).
func (d *decoder) weekdays(dst *[7]bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, key, "expected a list of days such as [mon, tue, wed, thu, fri], got %s", kindName(n))
			return
		}
		var days [7]bool
		ok := true
		for _, item := range n.Content {
			v, isScalar := d.scalar(item, key)
			if !isScalar {
				ok = false
				continue
			}
			name := strings.ToLower(v)
			wd, known := weekdayNames[name]
			if !known {
				d.errorf(item, key, "unknown day %s (mon, tue, wed, thu, fri, sat, sun)", d.quote(item))
				ok = false
				continue
			}
			if days[wd] {
				d.errorf(item, key, "%s is listed twice", d.quote(item))
				ok = false
			}
			days[wd] = true
		}
		if ok {
			*dst = days
		}
	}
}

// clock writes an offset from midnight as HH:MM.
func clock(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
