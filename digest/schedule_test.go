package digest

import (
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestScheduleNext(t *testing.T) {
	paris, ny := mustZone(t, "Europe/Paris"), mustZone(t, "America/New_York")
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	mon9 := func(loc *time.Location) Schedule {
		return Schedule{Weekday: time.Monday, At: 9 * time.Hour, Location: loc}
	}
	for _, tc := range []struct {
		name     string
		s        Schedule
		from     string
		next     string // RFC 3339 with the zone's offset
		wantPrev string
	}{
		{"later the same week", mon9(time.UTC), "2026-03-04T12:00:00Z", "2026-03-09T09:00:00Z", "2026-03-02T09:00:00Z"},
		{"from Saturday, wraps to Monday", mon9(time.UTC), "2026-03-07T23:59:00Z", "2026-03-09T09:00:00Z", "2026-03-02T09:00:00Z"},
		{"from Sunday", Schedule{Weekday: time.Sunday, At: 0, Location: time.UTC}, "2026-03-08T00:00:00Z", "2026-03-15T00:00:00Z", "2026-03-08T00:00:00Z"},
		{"the same day, before", mon9(time.UTC), "2026-03-09T08:59:59Z", "2026-03-09T09:00:00Z", "2026-03-02T09:00:00Z"},
		{"at the time: the week after", mon9(time.UTC), "2026-03-09T09:00:00Z", "2026-03-16T09:00:00Z", "2026-03-09T09:00:00Z"},
		{"Saturday to Sunday 23:59", Schedule{Weekday: time.Sunday, At: 23*time.Hour + 59*time.Minute, Location: time.UTC}, "2026-03-07T10:00:00Z", "2026-03-08T23:59:00Z", "2026-03-01T23:59:00Z"},
		{"Friday before, across the year", Schedule{Weekday: time.Friday, At: 17 * time.Hour, Location: time.UTC}, "2026-12-31T18:00:00Z", "2027-01-01T17:00:00Z", "2026-12-25T17:00:00Z"},
		// Paris moves to summer time on Sunday 29 March 2026: Monday 09:00
		// is 08:00 UTC before, 07:00 UTC after.
		{"Paris, into summer time", mon9(paris), "2026-03-27T12:00:00+01:00", "2026-03-30T09:00:00+02:00", "2026-03-23T09:00:00+01:00"},
		{"Paris, out of summer time", mon9(paris), "2026-10-24T12:00:00+02:00", "2026-10-26T09:00:00+01:00", "2026-10-19T09:00:00+02:00"},
		// In the zone's time, the same day: 02:30 on the night the clocks
		// go from 02:00 to 03:00 does not exist; an hour later.
		{"Paris, a skipped time", Schedule{Weekday: time.Sunday, At: 2*time.Hour + 30*time.Minute, Location: paris}, "2026-03-28T12:00:00+01:00", "2026-03-29T03:30:00+02:00", "2026-03-22T02:30:00+01:00"},
		{"New York, a skipped time", Schedule{Weekday: time.Sunday, At: 2*time.Hour + 30*time.Minute, Location: ny}, "2026-03-07T12:00:00-05:00", "2026-03-08T03:30:00-04:00", "2026-03-01T02:30:00-05:00"},
		// 02:30 comes twice when the clocks go back from 03:00 to 02:00
		// (Paris) and 01:30 from 02:00 to 01:00 (New York): the first.
		{"Paris, a repeated time", Schedule{Weekday: time.Sunday, At: 2*time.Hour + 30*time.Minute, Location: paris}, "2026-10-24T12:00:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-18T02:30:00+02:00"},
		{"New York, a repeated time", Schedule{Weekday: time.Sunday, At: time.Hour + 30*time.Minute, Location: ny}, "2026-10-31T12:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-10-25T01:30:00-04:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := utc(tc.from)
			next := tc.s.Next(from)
			if want := utc(tc.next); !next.Equal(want) {
				t.Errorf("Next(%s) = %s, want %s", tc.from, next.In(tc.s.loc()).Format(time.RFC3339), tc.next)
			}
			if prev := tc.s.Prev(from); !prev.Equal(utc(tc.wantPrev)) {
				t.Errorf("Prev(%s) = %s, want %s", tc.from, prev.In(tc.s.loc()).Format(time.RFC3339), tc.wantPrev)
			}
			if got := tc.s.Prev(next); !got.Equal(next) {
				t.Errorf("Prev(Next) = %s, want Next itself", got)
			}
			// The one after: a week later in the zone's days.
			after := tc.s.Next(next)
			if d := after.In(tc.s.loc()).YearDay() - next.In(tc.s.loc()).YearDay(); d != 7 && d != 7-365 {
				t.Errorf("the one after %s is %s, not a week later", next, after)
			}
		})
	}
}

// Every scheduled time of two years in zones with and without daylight
// saving time: one a week, on the weekday, at the time (or as much later
// as the clocks jumped over it), each between the previous and the next.
func TestScheduleEveryWeek(t *testing.T) {
	for _, zone := range []string{"UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"} {
		loc := mustZone(t, zone)
		for _, s := range []Schedule{
			{Weekday: time.Monday, At: 9 * time.Hour, Location: loc},
			{Weekday: time.Sunday, At: 2*time.Hour + 15*time.Minute, Location: loc},
			{Weekday: time.Saturday, At: 23*time.Hour + 59*time.Minute, Location: loc},
		} {
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
			prev := s.Prev(at)
			for range 104 {
				next := s.Next(at)
				l := next.In(loc)
				wall := time.Duration(l.Hour())*time.Hour + time.Duration(l.Minute())*time.Minute
				if !next.After(at) || l.Weekday() != s.Weekday || wall < s.At || wall > s.At+time.Hour {
					t.Fatalf("%s %v: Next(%s) = %s", zone, s, at, l)
				}
				if d := next.Sub(prev); d < 7*24*time.Hour-time.Hour || d > 7*24*time.Hour+time.Hour {
					t.Fatalf("%s %v: %s after %s", zone, s, next, prev)
				}
				// Just before it, it is next; at it, it is the last.
				if p := s.Prev(next.Add(-time.Second)); !p.Equal(prev) {
					t.Fatalf("%s %v: Prev(%s - 1s) = %s, want %s", zone, s, next, p, prev)
				}
				prev, at = next, next.Add(time.Duration(int64(next.Unix())%5)*time.Hour)
			}
		}
	}
}
