package rules

import (
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// lineIndex maps byte offsets of a file to lines and columns.
type lineIndex struct {
	content []byte
	starts  []int // byte offset of the start of each line; starts[0] == 0
}

func newLineIndex(content []byte) *lineIndex {
	starts := make([]int, 1, 64)
	for i, c := range content {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{content: content, starts: starts}
}

// lines returns the number of lines.
func (li *lineIndex) lines() int { return len(li.starts) }

// line returns the text of line n (1-based) without its line break.
func (li *lineIndex) line(n int) string {
	if n < 1 || n > len(li.starts) {
		return ""
	}
	start := li.starts[n-1]
	end := len(li.content)
	if n < len(li.starts) {
		end = li.starts[n] - 1
	}
	if end > start && li.content[end-1] == '\r' {
		end--
	}
	if end < start {
		end = start
	}
	return string(li.content[start:end])
}

// offset returns the byte offset of a line and character column, both 1-based.
func (li *lineIndex) offset(line, col int) int {
	if line < 1 {
		return 0
	}
	if line > len(li.starts) {
		return len(li.content)
	}
	off := li.starts[line-1]
	for c := 1; c < col && off < len(li.content) && li.content[off] != '\n'; c++ {
		_, size := utf8.DecodeRune(li.content[off:])
		off += size
	}
	return off
}

// pos returns the line and character column of a byte offset.
func (li *lineIndex) pos(off int) Pos {
	if off < 0 {
		off = 0
	}
	if off > len(li.content) {
		off = len(li.content)
	}
	// Binary search for the line.
	lo, hi := 0, len(li.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if li.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	col := utf8.RuneCount(li.content[li.starts[lo]:off]) + 1
	return Pos{Line: lo + 1, Column: col}
}

// nodeRange is the range of a scalar node's text, or of the first line of a
// collection node.
func (li *lineIndex) nodeRange(n *yaml.Node) Range {
	if n == nil {
		return Range{Start: Pos{1, 1}, End: Pos{1, 1}}
	}
	start := Pos{Line: n.Line, Column: n.Column}
	if n.Kind != yaml.ScalarNode {
		return Range{Start: start, End: start}
	}
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		m := li.scalarMap(n)
		if len(m) == 0 {
			return Range{Start: start, End: start}
		}
		return Range{Start: li.pos(m[0]), End: li.pos(m[len(m)-1])}
	}
	n0 := utf8.RuneCountInString(n.Value)
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		n0 += 2
	}
	if n0 < 1 {
		n0 = 1
	}
	end := start
	if !containsNewline(n.Value) {
		end.Column += n0 - 1
	}
	return Range{Start: start, End: end}
}

func containsNewline(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return true
		}
	}
	return false
}

// scalarMap maps every byte of a scalar node's decoded value to the byte
// offset in the file where it was written. It follows YAML's quoting,
// escaping, folding and block indentation well enough that a column inside
// a PromQL expression lands on the right character, also in | and > blocks.
func (li *lineIndex) scalarMap(n *yaml.Node) []int {
	src := li.content
	si := li.offset(n.Line, n.Column)
	quoted := byte(0)
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		quoted = '"'
		si++
	case n.Style&yaml.SingleQuotedStyle != 0:
		quoted = '\''
		si++
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		// Content starts on the line after the block header.
		for si < len(src) && src[si] != '\n' {
			si++
		}
		si++
	}
	v := n.Value
	out := make([]int, len(v))
	for vi := 0; vi < len(v); vi++ {
		if si >= len(src) {
			out[vi] = len(src) - 1
			continue
		}
		c := v[vi]
		// Escapes and doubled quotes in quoted scalars.
		if quoted == '"' && src[si] == '\\' && si+1 < len(src) {
			if src[si+1] == '\n' || src[si+1] == '\r' {
				// Escaped line break: contributes nothing.
				si += 2
				for si < len(src) && (src[si] == ' ' || src[si] == '\t' || src[si] == '\n' || src[si] == '\r') {
					si++
				}
				vi--
				continue
			}
			out[vi] = si
			si += escapeLen(src[si+1])
			// A \u escape may decode to several bytes: map them all here.
			for vi+1 < len(v) && v[vi+1] >= 0x80 && !utf8.RuneStart(v[vi+1]) {
				vi++
				out[vi] = out[vi-1]
			}
			continue
		}
		if quoted == '\'' && c == '\'' && src[si] == '\'' && si+1 < len(src) && src[si+1] == '\'' {
			out[vi] = si
			si += 2
			continue
		}
		if src[si] == c {
			out[vi] = si
			si++
			continue
		}
		if c == ' ' || c == '\n' || c == '\t' {
			// Folded line break: one value character for a run of
			// source whitespace.
			out[vi] = si
			for si < len(src) && isSpace(src[si]) {
				si++
			}
			continue
		}
		// Skip source whitespace (indentation, folded breaks) until the
		// character appears; never skip anything else.
		j := si
		for j < len(src) && isSpace(src[j]) {
			j++
		}
		if j < len(src) && src[j] == c {
			si = j
		}
		out[vi] = si
		si++
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// escapeLen is the source length of a double-quoted escape \X.
func escapeLen(x byte) int {
	switch x {
	case 'x':
		return 4
	case 'u':
		return 6
	case 'U':
		return 10
	}
	return 2
}

// ScalarPos returns the line and column, in content, of the byte at offset
// in the decoded value of scalar node n: what a parse error's offset inside
// a YAML value points at, through quoting, escapes and block scalars.
func ScalarPos(content []byte, n *yaml.Node, offset int) Pos {
	if n == nil {
		return Pos{1, 1}
	}
	li := newLineIndex(content)
	m := li.scalarMap(n)
	if len(m) == 0 {
		return Pos{n.Line, n.Column}
	}
	if offset >= len(m) {
		// The end of the value: one past its last character.
		p := li.pos(m[len(m)-1])
		p.Column++
		return p
	}
	return li.pos(m[max(offset, 0)])
}
