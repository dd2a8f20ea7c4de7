// Package ruletesttest holds what tests of `paged test` share: the table of
// promtool test files in the shared corpus and how promtool 3 treats them
// (corpus/SOURCES.md §1a and §2).
package ruletesttest

// PromtoolDir and MixinDir are the corpus folders, relative to the shared dir.
const (
	PromtoolDir = "corpus/prometheus-prometheus/cmd/promtool/testdata"
	MixinDir    = "corpus/kubernetes-monitoring-kubernetes-mixin/tests"
)

// Case is one invocation of `promtool test rules` and its outcome.
type Case struct {
	Name                string
	Dir                 string   // PromtoolDir or MixinDir
	Files               []string // in Dir
	Run                 []string // --run values
	IgnoreUnknownFields bool
	// Rows that turn off @ or negative offsets (which the CLI always turns
	// on) are for the Go API only, as in promtool's own Go tests.
	DisableAtModifier, DisableNegativeOffset bool
	WantFail                                 bool
	// Reason is a piece of the failure output that shows the case fails for
	// the reason SOURCES.md gives (failing cases only).
	Reason string
}

// Args is the command line of the case, after "test".
func (c Case) Args(dir string) []string {
	var args []string
	for _, r := range c.Run {
		args = append(args, "--run", r)
	}
	if c.IgnoreUnknownFields {
		args = append(args, "--ignore-unknown-fields")
	}
	for _, f := range c.Files {
		args = append(args, dir+"/"+f)
	}
	return args
}

// APIOnly reports whether the case needs options the CLI does not have.
func (c Case) APIOnly() bool { return c.DisableAtModifier || c.DisableNegativeOffset }

func pass(dir, file string) Case { return Case{Name: file, Dir: dir, Files: []string{file}} }
func fail(dir, file, reason string) Case {
	return Case{Name: file, Dir: dir, Files: []string{file}, WantFail: true, Reason: reason}
}

// Corpus is every promtool test file of the corpus with the flags SOURCES.md
// gives, and whether promtool 3 passes it.
var Corpus = []Case{
	pass(PromtoolDir, "unittest.yml"),
	pass(PromtoolDir, "long-period.yml"),
	pass(PromtoolDir, "no-test-group-interval.yml"),
	pass(PromtoolDir, "start-time-test.yml"),
	pass(PromtoolDir, "at-modifier-test.yml"),
	pass(PromtoolDir, "negative-offset-test.yml"),
	{Name: "at-modifier-test.yml without @", Dir: PromtoolDir, Files: []string{"at-modifier-test.yml"}, DisableAtModifier: true, WantFail: true, Reason: "@ modifier is disabled"},
	{Name: "negative-offset-test.yml without negative offsets", Dir: PromtoolDir, Files: []string{"negative-offset-test.yml"}, DisableNegativeOffset: true, WantFail: true, Reason: "negative offset is disabled"},
	fail(PromtoolDir, "failing.yml", "alertname: AlwaysFiring, time: 5m"),
	fail(PromtoolDir, "bad-input-series.yml", "bad-input-series.yml:3:9: input_series"),
	fail(PromtoolDir, "bad-promql.yml", "many-to-many matching not allowed"),
	fail(PromtoolDir, "bad-rules-syntax-test.yml", "bad-rules-syntax.yml:7:21: error [promql/syntax]"),
	fail(PromtoolDir, "bad-rules-error-test.yml", "rule: joined, time: 0s, err: found duplicate series"),
	fail(PromtoolDir, "rules_run.yml", "rules_run.yml:26:9: promql_expr_test"),
	{Name: "rules_run.yml --run correct --run wrong", Dir: PromtoolDir, Files: []string{"rules_run.yml"}, Run: []string{"correct", "wrong"}, WantFail: true, Reason: "rules_run.yml:26:9: promql_expr_test"},
	{Name: "rules_run.yml --run correct", Dir: PromtoolDir, Files: []string{"rules_run.yml"}, Run: []string{"correct"}},
	{Name: "rules_run.yml --run wrong", Dir: PromtoolDir, Files: []string{"rules_run.yml"}, Run: []string{"wrong"}, WantFail: true, Reason: "rules_run.yml:26:9: promql_expr_test"},
	{Name: "rules_run_extrafields.yml --ignore-unknown-fields", Dir: PromtoolDir, Files: []string{"rules_run_extrafields.yml"}, IgnoreUnknownFields: true},
	fail(PromtoolDir, "rules_run_extrafields.yml", "field namespace not found"),
	{Name: "rules_run_fuzzy.yml --run correct", Dir: PromtoolDir, Files: []string{"rules_run_fuzzy.yml"}, Run: []string{"correct"}},
	{Name: "rules_run_fuzzy.yml --run wrong", Dir: PromtoolDir, Files: []string{"rules_run_fuzzy.yml"}, Run: []string{"wrong"}, WantFail: true, Reason: "3.0000000000000013E+00"},
	fail(PromtoolDir, "rules_run_fuzzy.yml", "got: {__name__=\"test_low\"} 2.9999999999999987E+00"),
	fail(PromtoolDir, "rules_run_no_fuzzy.yml", "got: {__name__=\"test_high\"} 3.0000000000000004E+00"),
	// kubernetes-mixin: all 8 pass with promtool 3. Debian's promtool 2.42
	// fails absent_alert-test.yaml and tests.yaml (closed lookback windows).
	pass(MixinDir, "absent_alert-test.yaml"),
	pass(MixinDir, "apiserver-availability-test.yaml"),
	pass(MixinDir, "apps_alerts-test.yaml"),
	pass(MixinDir, "kube_scheduler-test.yaml"),
	pass(MixinDir, "kubelet-test.yaml"),
	pass(MixinDir, "resource_alerts-test.yaml"),
	pass(MixinDir, "rules-pod-owner-test.yaml"),
	pass(MixinDir, "tests.yaml"),
}

// PromtoolTestFiles is every promtool test file in PromtoolDir (the rest of
// that folder are rule files).
var PromtoolTestFiles = []string{
	"unittest.yml", "long-period.yml", "no-test-group-interval.yml", "start-time-test.yml",
	"at-modifier-test.yml", "negative-offset-test.yml", "failing.yml", "bad-input-series.yml",
	"bad-promql.yml", "bad-rules-syntax-test.yml", "bad-rules-error-test.yml", "rules_run.yml",
	"rules_run_extrafields.yml", "rules_run_fuzzy.yml", "rules_run_no_fuzzy.yml",
}
