package digest

import "time"

// Schedule is when digests are sent: every week on Weekday at the time
// of day At (hours and minutes from midnight) in Location. On the day a
// change to daylight saving time skips that time, the digest is sent as
// much later as the clocks moved (02:30 becomes 03:30); on the day the
// change back repeats it, at the first of the two.
type Schedule struct {
	Weekday  time.Weekday
	At       time.Duration
	Location *time.Location
}

// on is the scheduled time on the given day (normalised: day may be out
// of the month's range).
func (s Schedule) on(year int, month time.Month, day int) time.Time {
	h, m := int(s.At/time.Hour), int(s.At%time.Hour/time.Minute)
	t := time.Date(year, month, day, h, m, 0, 0, s.loc())
	// time.Date picks either side of a change of the clocks; pick one.
	_, before := t.Add(-12 * time.Hour).Zone()
	_, after := t.Add(12 * time.Hour).Zone()
	shift := time.Duration(before-after) * time.Second
	wall := func(t time.Time) time.Duration {
		return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute
	}
	switch {
	case shift < 0 && wall(t) < s.At:
		// Skipped, and time.Date went back before the gap: after it.
		t = t.Add(-shift)
	case shift > 0 && wall(t.Add(-shift)) == s.At && t.Add(-shift).Day() == t.Day():
		// Repeated, and time.Date took the second: the first.
		t = t.Add(-shift)
	}
	return t
}

// Next is the first scheduled time after t.
func (s Schedule) Next(t time.Time) time.Time {
	l := t.In(s.loc())
	day := l.Day() + (int(s.Weekday)-int(l.Weekday())+7)%7
	next := s.on(l.Year(), l.Month(), day)
	if !next.After(t) {
		next = s.on(l.Year(), l.Month(), day+7)
	}
	return next
}

// Prev is the last scheduled time at or before t.
func (s Schedule) Prev(t time.Time) time.Time {
	l := t.In(s.loc())
	day := l.Day() - (int(l.Weekday())-int(s.Weekday)+7)%7
	prev := s.on(l.Year(), l.Month(), day)
	if prev.After(t) {
		prev = s.on(l.Year(), l.Month(), day-7)
	}
	return prev
}

func (s Schedule) loc() *time.Location {
	if s.Location == nil {
		return time.UTC
	}
	return s.Location
}
