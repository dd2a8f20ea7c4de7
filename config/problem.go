package config

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong in a configuration file, with its position and
// the dotted key path it belongs to ("datasource.prometheus.url").
type Problem struct {
	File    string
	Line    int
	Column  int
	Key     string
	Message string
}

// String renders the problem as path:line:col: key: message.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, p.Column)
	}
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error is returned by Load when the file has problems. It holds
// every problem found in one pass, in file order.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
