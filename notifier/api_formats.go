package notifier

import (
	"slices"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
)

// tuneDateTimes makes the API's date-time handling cheaper for the
// timestamps senders actually write, through the two settings go-openapi
// exposes for it, without changing what is accepted or how it parses:
//
//   - strfmt.DateTimeFormats is tried in order, and Prometheus (like any
//     Go encoder) writes RFC 3339 with up to nine fractional digits, which
//     the four fixed-precision layouts ahead of time.RFC3339 reject. Each
//     rejection allocated a parse error: eight for an alert's startsAt and
//     endsAt. time.RFC3339
//     goes first: it accepts any number of fractional digits, and a string
//     that another layout also accepts reads as the same instant.
//   - The "datetime" validator matched every timestamp against a regular
//     expression. isDateTime answers the common shape directly and leaves
//     everything else to strfmt.IsDateTime; FuzzIsDateTime holds the two
//     equal.
//
// Both are process-wide, as go-openapi keeps them; nothing else in paged
// reads them.
var tuneDateTimes = sync.OnceFunc(func() {
	rest := slices.DeleteFunc(slices.Clone(strfmt.DateTimeFormats), func(l string) bool { return l == time.RFC3339 })
	strfmt.DateTimeFormats = append([]string{time.RFC3339}, rest...)
	strfmt.Default.Add("datetime", &strfmt.DateTime{}, isDateTime)
})

// isDateTime is strfmt.IsDateTime without its regular expression for
// strings shaped YYYY-MM-DDTHH:MM:SS[.F…](Z|±HH:MM), upper or lower case
// T and Z; any other string goes to strfmt.IsDateTime.
func isDateTime(s string) bool {
	// date T hh:mm:ss, then the fraction, then the zone.
	const dateLen, timeLen = 10, 8
	if len(s) < dateLen+1+timeLen+1 || (s[dateLen] != 'T' && s[dateLen] != 't') {
		return strfmt.IsDateTime(s)
	}
	date, rest := s[:dateLen], s[dateLen+1:]
	if !digitsAt(date, 0, 1, 2, 3, 5, 6, 8, 9) || date[4] != '-' || date[7] != '-' ||
		!digitsAt(rest, 0, 1, 3, 4, 6, 7) || rest[2] != ':' || rest[5] != ':' {
		return strfmt.IsDateTime(s)
	}
	hms, zone := rest[:timeLen], rest[timeLen:]
	if zone[0] == '.' {
		i := 1
		for i < len(zone) && zone[i] >= '0' && zone[i] <= '9' {
			i++
		}
		if i == 1 {
			return strfmt.IsDateTime(s)
		}
		zone = zone[i:]
	}
	switch {
	case zone == "Z" || zone == "z":
	case len(zone) == 6 && (zone[0] == '+' || zone[0] == '-') && digitsAt(zone, 1, 2, 4, 5) && zone[3] == ':':
	default:
		return strfmt.IsDateTime(s)
	}
	// strfmt checks the date with time.Parse and the clock fields by
	// comparing their digits; the zone's are not checked.
	if _, err := time.Parse(strfmt.RFC3339FullDate, date); err != nil {
		return false
	}
	return hms[0:2] <= "23" && hms[3:5] <= "59" && hms[6:8] <= "59"
}

func digitsAt(s string, idx ...int) bool {
	for _, i := range idx {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
