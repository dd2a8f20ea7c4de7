package rules

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// Formats of lint output.
const (
	FormatText   = "text"
	FormatJSON   = "json"
	FormatGitHub = "github"
	FormatSARIF  = "sarif"
)

// Formats lists the output formats.
var Formats = []string{FormatText, FormatJSON, FormatGitHub, FormatSARIF}

// SourceFunc returns line n of a file, for showing the source under a
// finding; "" when unknown.
type SourceFunc func(path string, line int) string

// WriteFindings writes findings in the named format.
func WriteFindings(w io.Writer, format string, fs []Finding, src SourceFunc, color bool) error {
	switch format {
	case FormatText, "":
		return writeBuffered(w, func(w io.Writer) error { return writeText(w, fs, src, color) })
	case FormatJSON:
		return writeJSON(w, fs)
	case FormatGitHub:
		return writeBuffered(w, func(w io.Writer) error { return writeGitHub(w, fs) })
	case FormatSARIF:
		return writeSARIF(w, fs)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// writeBuffered runs a writer of lines through a buffer: a few writes for
// a report, not one per line (each a system call on a pipe).
func writeBuffered(w io.Writer, write func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	err := write(bw)
	_ = bw.Flush() // the line writers do not report a failed write either
	return err
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiDim    = "\x1b[2m"
)

func writeText(w io.Writer, fs []Finding, src SourceFunc, color bool) error {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	for _, f := range fs {
		sevColor := ansiBlue
		switch f.Severity {
		case Error:
			sevColor = ansiRed
		case Warning:
			sevColor = ansiYellow
		}
		fmt.Fprintf(w, "%s: %s %s %s\n",
			paint(ansiBold, fmt.Sprintf("%s:%d:%d", f.Path, f.Range.Start.Line, f.Range.Start.Column)),
			paint(sevColor, f.Severity.String()),
			paint(ansiDim, "["+f.Check+"]"),
			f.Message)
		if src == nil {
			continue
		}
		line := src(f.Path, f.Range.Start.Line)
		if line == "" {
			continue
		}
		line = strings.ReplaceAll(line, "\t", " ")
		width := 1
		if f.Range.End.Line == f.Range.Start.Line && f.Range.End.Column >= f.Range.Start.Column {
			width = f.Range.End.Column - f.Range.Start.Column + 1
		} else if f.Range.End.Line > f.Range.Start.Line {
			width = utf8.RuneCountInString(line) - f.Range.Start.Column + 1
		}
		width = max(1, width)
		gutter := fmt.Sprintf("%5d | ", f.Range.Start.Line)
		fmt.Fprintf(w, "%s%s\n", paint(ansiDim, gutter), line)
		fmt.Fprintf(w, "%s%s%s\n", strings.Repeat(" ", len(gutter)-2)+paint(ansiDim, "| "),
			strings.Repeat(" ", max(0, f.Range.Start.Column-1)), paint(sevColor, strings.Repeat("^", width)))
	}
	if len(fs) > 0 {
		counts := map[Severity]int{}
		for _, f := range fs {
			counts[f.Severity]++
		}
		fmt.Fprintf(w, "%d error(s), %d warning(s), %d info\n", counts[Error], counts[Warning], counts[Info])
	}
	return nil
}

type jsonFinding struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
	Severity  string `json:"severity"`
	Check     string `json:"check"`
	Message   string `json:"message"`
	Rule      string `json:"rule"`
	Group     string `json:"group"`
}

func writeJSON(w io.Writer, fs []Finding) error {
	out := make([]jsonFinding, 0, len(fs))
	for _, f := range fs {
		out = append(out, jsonFinding{
			Path: f.Path, Line: f.Range.Start.Line, Column: f.Range.Start.Column,
			EndLine: f.Range.End.Line, EndColumn: f.Range.End.Column,
			Severity: f.Severity.String(), Check: f.Check, Message: f.Message,
			Rule: f.Rule, Group: f.Group,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// GitHub workflow commands: ::error file=F,line=L,col=C,endLine=..,endColumn=..,title=T::message
func writeGitHub(w io.Writer, fs []Finding) error {
	for _, f := range fs {
		level := "notice"
		switch f.Severity {
		case Error:
			level = "error"
		case Warning:
			level = "warning"
		}
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,endLine=%d,endColumn=%d,title=%s::%s\n",
			level, ghProperty(f.Path), f.Range.Start.Line, f.Range.Start.Column,
			f.Range.End.Line, f.Range.End.Column, ghProperty("paged "+f.Check), ghData(f.Message))
	}
	return nil
}

func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// SARIF 2.1.0, the subset code-scanning tools read.
func writeSARIF(w io.Writer, fs []Finding) error {
	type region struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
		EndLine     int `json:"endLine"`
		EndColumn   int `json:"endColumn"`
	}
	type location struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
			Region region `json:"region"`
		} `json:"physicalLocation"`
	}
	type message struct {
		Text string `json:"text"`
	}
	type result struct {
		RuleID    string     `json:"ruleId"`
		RuleIndex int        `json:"ruleIndex"`
		Level     string     `json:"level"`
		Message   message    `json:"message"`
		Locations []location `json:"locations"`
	}
	type rule struct {
		ID               string  `json:"id"`
		ShortDescription message `json:"shortDescription"`
		HelpURI          string  `json:"helpUri,omitempty"`
	}
	ruleIndex := map[string]int{}
	var rulesList []rule
	help := map[string]string{}
	for _, ch := range Checks() {
		help[ch.Name] = ch.Help
	}
	names := map[string]bool{}
	for _, f := range fs {
		names[f.Check] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		ruleIndex[n] = len(rulesList)
		h := help[n]
		if h == "" {
			h = n
		}
		rulesList = append(rulesList, rule{ID: n, ShortDescription: message{h}})
	}
	results := make([]result, 0, len(fs))
	for _, f := range fs {
		level := "note"
		switch f.Severity {
		case Error:
			level = "error"
		case Warning:
			level = "warning"
		}
		var loc location
		loc.PhysicalLocation.ArtifactLocation.URI = strings.TrimPrefix(f.Path, "./")
		loc.PhysicalLocation.Region = region{f.Range.Start.Line, f.Range.Start.Column, f.Range.End.Line, f.Range.End.Column + 1}
		results = append(results, result{RuleID: f.Check, RuleIndex: ruleIndex[f.Check], Level: level, Message: message{f.Message}, Locations: []location{loc}})
	}
	if rulesList == nil {
		rulesList = []rule{}
	}
	doc := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool": map[string]any{"driver": map[string]any{
				"name":           "paged",
				"informationUri": "https://github.com/pagedhq/paged",
				"rules":          rulesList,
			}},
			"results": results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
