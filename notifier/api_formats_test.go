package notifier

import (
	"slices"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
)

// untunedFormats is go-openapi's own order, read before any Notifier is
// made.
var untunedFormats = slices.Clone(strfmt.DateTimeFormats)

var dateTimeSeeds = []string{
	"2026-12-01T23:31:38Z", "2026-12-01T23:31:38.123456789Z", "2026-12-01T23:31:38.5+01:00",
	"2026-12-01t23:31:38.000z", "2026-12-01T23:31:38.123-05:30", "2026-12-01T23:31:38.123456Z",
	"2026-12-01T23:31:38.123+0100", "2026-12-01T23:31:38+0100", "2026-12-01T23:31:38", "2026-12-01 23:31:38",
	"2026-12-01", "2026-12-01T24:00:00Z", "2026-12-01T23:60:00Z", "2026-12-01T23:59:60Z",
	"2026-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-01T23:31:38.Z",
	"2026-12-01T23:31:38x5Z", "2026-12-01T23:31:38.5", "2026-12-01T23:31:38.5+01", "2026-12-01T23:31:38.5+99:99",
	"2026-12-01TT23:31:38Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "", "T", "2026",
	"2026-12-01T23:31:38Z\n", " 2026-12-01T23:31:38Z", "2026-12-01T23:31:38ZZ", "2026-12-01T23:31:38.1234567891234Z",
	"2026-1-01T23:31:38Z", "2026-12-01T3:31:38Z", "99999-12-01T23:31:38Z", "2026-12-01T23:31:38−01:00",
}

// TestDateTimeAsGoOpenAPI holds the tuned date-time validator and layout
// order to go-openapi's own answers.
func TestDateTimeAsGoOpenAPI(t *testing.T) {
	tuneDateTimes()
	if strfmt.DateTimeFormats[0] != time.RFC3339 || len(strfmt.DateTimeFormats) != len(untunedFormats) {
		t.Fatalf("layouts %q, want time.RFC3339 first and the others kept (%q)", strfmt.DateTimeFormats, untunedFormats)
	}
	for _, s := range dateTimeSeeds {
		checkDateTime(t, s)
	}
	if !strfmt.Default.Validates("date-time", "2026-12-01T23:31:38.123456789Z") || strfmt.Default.Validates("date-time", "2026-12-01T24:00:00Z") {
		t.Error("the registry's date-time validator does not answer as strfmt.IsDateTime")
	}
	// The two answer alike, so what shows that isDateTime is the one
	// installed is what it does not do: allocate. The registry's lookup
	// of a dashed name allocates once; strfmt.IsDateTime's regular
	// expression five times more.
	if !raceEnabled {
		s := "2026-12-01T23:31:38.123456789Z"
		if got := testing.AllocsPerRun(20, func() { strfmt.Default.Validates("date-time", s) }); got > 1 {
			t.Errorf("the registry's date-time validator allocates %.0f times a call: isDateTime is not installed", got)
		}
	}
}

func FuzzDateTimeAsGoOpenAPI(f *testing.F) {
	for _, s := range dateTimeSeeds {
		f.Add(s)
	}
	tuneDateTimes()
	f.Fuzz(checkDateTime)
}

func checkDateTime(t *testing.T, s string) {
	if got, want := isDateTime(s), strfmt.IsDateTime(s); got != want {
		t.Errorf("isDateTime(%q) = %v, strfmt.IsDateTime %v", s, got, want)
	}
	got, gerr := strfmt.ParseDateTime(s)
	want, werr := parseIn(untunedFormats, s)
	if (gerr == nil) != (werr == nil) || !time.Time(got).Equal(want) || time.Time(got).Location().String() != want.Location().String() {
		t.Errorf("ParseDateTime(%q) = %v, %v with time.RFC3339 first; %v, %v in go-openapi's order", s, time.Time(got), gerr, want, werr)
	}
}

// parseIn is strfmt.ParseDateTime over the given layouts.
func parseIn(layouts []string, s string) (time.Time, error) {
	if s == "" {
		return time.Time(strfmt.NewDateTime()), nil
	}
	var last error
	for _, l := range layouts {
		t, err := time.ParseInLocation(l, s, strfmt.DefaultTimeLocation)
		if err == nil {
			return t, nil
		}
		last = err
	}
	return time.Time{}, last
}
