package rules

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// The checks whose verdict must match Prometheus's own loader.
var parityChecks = map[string]bool{
	CheckYAMLParse: true, CheckStructure: true, CheckPromQLSyntax: true, "alerts/template": true,
}

// TestCorpusPromtoolParity: for every rule file in the shared corpus, paged
// accepts exactly the files Prometheus 3's loader (model/rulefmt, the code
// behind `promtool check rules`, embedded here at the same version we build
// on) accepts, and rejects the others at the same line.
func TestCorpusPromtoolParity(t *testing.T) {
	corpus := filepath.Join(testbin.SharedDir(t), "corpus")
	var files []string
	err := filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 || d.IsDir() {
			return nil
		}
		if ext := filepath.Ext(p); ext == ".yml" || ext == ".yaml" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked, rejected := 0, 0
	for _, p := range files {
		content, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		kind := classifyCorpusFile(content)
		if kind == "" {
			continue // promtool test files, Alertmanager configs, ...
		}
		checked++
		rel, _ := filepath.Rel(corpus, p)
		t.Run(rel, func(t *testing.T) {
			f := ParseFile(p, content, ParseOptions{})
			var ours []Finding
			for _, fd := range Lint([]*File{f}, DefaultConfig()) {
				if parityChecks[fd.Check] && fd.Severity == Error {
					ours = append(ours, fd)
				}
			}
			if kind == "crd" {
				// rulefmt does not read manifests; the community packs are valid.
				for _, fd := range ours {
					t.Errorf("unexpected error in a valid PrometheusRule: %s", fd)
				}
				return
			}
			refErrs := referenceErrors(content)
			if len(refErrs) == 0 {
				for _, fd := range ours {
					t.Errorf("Prometheus accepts this file but paged reports: %s", fd)
				}
				return
			}
			rejected++
			if len(ours) == 0 {
				t.Fatalf("Prometheus rejects this file (%v) but paged reports no error", refErrs)
			}
			for _, re := range refErrs {
				line := errorLine(re)
				if line == 0 {
					continue
				}
				found := false
				for _, fd := range ours {
					if fd.Range.Start.Line == line {
						found = true
					}
				}
				if !found {
					t.Errorf("Prometheus reports line %d (%v); paged reports %v", line, re, ours)
				}
			}
		})
	}
	if checked < 150 {
		t.Fatalf("only %d rule files found in the corpus; is PAGED_SHARED right?", checked)
	}
	t.Logf("%d rule files checked, %d rejected by both", checked, rejected)
}

// classifyCorpusFile says whether a YAML file is a Prometheus rule file ("rules"), a
// PrometheusRule manifest ("crd") or something else ("").
func classifyCorpusFile(content []byte) string {
	var doc yaml.Node
	if err := yaml.Unmarshal(content, &doc); err != nil {
		// Broken YAML among the rule fixtures counts as a rule file.
		if bytes.Contains(content, []byte("groups:")) {
			return "rules"
		}
		return ""
	}
	if isPrometheusRule(&doc) {
		return "crd"
	}
	m := docRoot(&doc)
	if m == nil || m.Kind != yaml.MappingNode {
		return ""
	}
	if mapValue(m, "groups") != nil && mapValue(m, "tests") == nil {
		return "rules"
	}
	return ""
}

func referenceErrors(content []byte) []error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, errs := rulefmt.Parse(content, false, model.UTF8Validation, parser.NewParser(parser.Options{}), logger)
	return errs
}

var refLineRe = regexp.MustCompile(`^(\d+):\d+: |line (\d+):`)

func errorLine(err error) int {
	m := refLineRe.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	s := m[1]
	if s == "" {
		s = m[2]
	}
	n, _ := strconv.Atoi(s)
	return n
}

// TestPromtoolTable pins the verdicts that the corpus's SOURCES.md gives for
// `promtool check rules` (Prometheus 3), with the line of the first error.
func TestPromtoolTable(t *testing.T) {
	dir := filepath.Join(testbin.SharedDir(t), "corpus", "prometheus-prometheus")
	cases := []struct {
		file     string
		opts     ParseOptions
		features parser.Options
		line     int // first error line; 0 = accepted
	}{
		{file: "cmd/promtool/testdata/rules.yml"},
		{file: "cmd/promtool/testdata/rules-bad.yml", line: 12},
		{file: "cmd/promtool/testdata/bad-rules-syntax.yml", line: 7},
		{file: "cmd/promtool/testdata/bad-rules-error.yml"},
		{file: "cmd/promtool/testdata/at-modifier.yml"},
		{file: "cmd/promtool/testdata/negative-offset.yml"},
		{file: "cmd/promtool/testdata/prometheus-config.rules.good.yml"},
		{file: "cmd/promtool/testdata/prometheus-rules.lint.yml"},
		{file: "cmd/promtool/testdata/rules_duplicates.yml"},
		{file: "cmd/promtool/testdata/rules_large.yml"},
		{file: "cmd/promtool/testdata/rules_extrafields.yml", line: 7},
		{file: "cmd/promtool/testdata/rules_extrafields.yml", opts: ParseOptions{IgnoreUnknownFields: true}},
		{file: "cmd/promtool/testdata/features.yml", line: 6},
		{file: "cmd/promtool/testdata/features.yml", features: parser.Options{EnableExperimentalFunctions: true, EnableBinopFillModifiers: true}},
		{file: "model/rulefmt/testdata/test.yaml"},
		{file: "model/rulefmt/testdata/test_aliases.yaml"},
		{file: "model/rulefmt/testdata/utf-8_lname.good.yaml"},
		{file: "model/rulefmt/testdata/utf-8_annotation.good.yaml"},
		{file: "model/rulefmt/testdata/legacy_validation_annotation.good.yaml"},
		{file: "model/rulefmt/testdata/duplicate_grp.bad.yaml", line: 3},
		{file: "model/rulefmt/testdata/bad_expr.bad.yaml", line: 5},
		{file: "model/rulefmt/testdata/record_and_alert.bad.yaml", line: 4},
		{file: "model/rulefmt/testdata/no_rec_alert.bad.yaml", line: 4},
		{file: "model/rulefmt/testdata/noexpr.bad.yaml", line: 4},
		{file: "model/rulefmt/testdata/invalid_record_name.bad.yaml", line: 4},
		{file: "model/rulefmt/testdata/bad_field.bad.yaml", line: 8},
		{file: "model/rulefmt/testdata/invalid_label_name.bad.yaml", line: 7},
		{file: "model/rulefmt/testdata/record_and_for.bad.yaml", line: 4},
		{file: "model/rulefmt/testdata/record_and_keep_firing_for.bad.yaml", line: 4},
		{file: "rules/fixtures/invalid_rules.yaml", line: 6},
		{file: "rules/fixtures/rules_multi_doc.yaml"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			c.opts.Parser = parser.NewParser(c.features)
			f, err := ReadFile(filepath.Join(dir, c.file), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var first *Finding
			for _, fd := range Lint([]*File{f}, DefaultConfig()) {
				if parityChecks[fd.Check] && fd.Severity == Error {
					first = &fd
					break
				}
			}
			switch {
			case c.line == 0 && first != nil:
				t.Errorf("promtool accepts it; paged: %s", first)
			case c.line != 0 && first == nil:
				t.Errorf("promtool rejects it at line %d; paged accepts it", c.line)
			case c.line != 0 && first.Range.Start.Line != c.line:
				t.Errorf("promtool rejects it at line %d; paged at %s", c.line, first)
			}
		})
	}
}

// TestDebianPromtoolAgrees runs the real promtool binary on a sample of the
// corpus and on the packs' neighbours: where Debian's 2.42 and Prometheus 3
// agree (no new syntax involved), paged's verdict matches the binary's.
func TestDebianPromtoolAgrees(t *testing.T) {
	promtool := testbin.Require(t, "promtool")
	dir := filepath.Join(testbin.SharedDir(t), "corpus", "prometheus-prometheus")
	for _, file := range []string{
		"cmd/promtool/testdata/rules.yml",
		"cmd/promtool/testdata/rules-bad.yml",
		"cmd/promtool/testdata/bad-rules-syntax.yml",
		"model/rulefmt/testdata/bad_field.bad.yaml",
		"model/rulefmt/testdata/noexpr.bad.yaml",
		"model/rulefmt/testdata/duplicate_grp.bad.yaml",
		"model/rulefmt/testdata/record_and_for.bad.yaml",
		"model/rulefmt/testdata/test.yaml",
	} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(dir, file)
			out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
			promtoolOK := err == nil
			f, rerr := ReadFile(path, ParseOptions{})
			if rerr != nil {
				t.Fatal(rerr)
			}
			pagedOK := true
			for _, fd := range Lint([]*File{f}, DefaultConfig()) {
				if parityChecks[fd.Check] && fd.Severity == Error {
					pagedOK = false
				}
			}
			if promtoolOK != pagedOK {
				t.Errorf("promtool ok=%v, paged ok=%v\npromtool said:\n%s", promtoolOK, pagedOK, strings.TrimSpace(string(out)))
			}
		})
	}
}
