package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity of a finding. The order matters: --fail-on compares with it.
type Severity int

const (
	Info Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// ParseSeverity reads "error", "warning" or "info".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want error, warning or info)", s)
}

// Pos is a 1-based line and column in a file. Columns count characters.
type Pos struct {
	Line   int
	Column int
}

// Range is a span of a file; End is inclusive of its last character.
type Range struct {
	Start Pos
	End   Pos
}

// Finding is one problem in a user's file.
type Finding struct {
	Path     string
	Range    Range
	Severity Severity
	Check    string
	Message  string
	Group    string // rule group name, when the finding belongs to one
	Rule     string // alert or record name, when the finding belongs to one
}

// String formats the finding as path:line:col: severity [check] message.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s [%s] %s", f.Path, f.Range.Start.Line, f.Range.Start.Column, f.Severity, f.Check, f.Message)
}

// SortFindings orders findings by path, position, then check name.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Range.Start.Line, b.Range.Start.Line),
			cmp.Compare(a.Range.Start.Column, b.Range.Start.Column),
			cmp.Compare(a.Check, b.Check),
			cmp.Compare(a.Message, b.Message),
		)
	})
}
