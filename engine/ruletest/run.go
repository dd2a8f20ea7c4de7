package ruletest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/junitxml"
)

// Options configure a run. The zero value runs like `promtool test rules`.
type Options struct {
	// Run selects test groups by name: the expressions are joined with "|"
	// and a group runs when its name matches. Empty runs every group.
	Run []string
	// Diff prints a line diff of expected and got instead of both lists.
	Diff bool
	// Debug prints timing and a dump of all series after each test group.
	Debug bool
	// IgnoreUnknownFields ignores unknown keys in the rule files.
	IgnoreUnknownFields bool
	// DisableAtModifier and DisableNegativeOffset turn off syntax that the
	// promtool CLI always turns on (its Go tests run with them off).
	DisableAtModifier, DisableNegativeOffset bool
	// Stdout gets progress ("Processing test file", "SUCCESS"); Stderr gets
	// failures and warnings. Nil discards.
	Stdout, Stderr io.Writer
	// JUnit, when set, gets a JUnit XML report: one testsuite per file and
	// one testcase per test group.
	JUnit io.Writer
	// Parser parses PromQL in rule files, tests and evaluation. Nil: the
	// default parser with no optional syntax, as promtool without
	// --enable-feature.
	Parser parser.Parser
	// LoadRules parses a rule file. Nil: ParseRuleFile.
	LoadRules LoadRulesFunc
	// Now stamps the JUnit report. Nil: time.Now.
	Now func() time.Time
	// Parallel is how many test groups run at once. 0: GOMAXPROCS.
	Parallel int
	// Notifications runs a file's notification_tests (paged's extension).
	// Nil: a file that has them fails, asking for a notifier configuration.
	Notifications NotificationsFunc
}

// NotificationsFunc runs the notification_tests of a test file after its
// rule tests; match selects tests by name as --run selects test groups.
// Each notification test is reported as one GroupResult (a JUnit test case).
type NotificationsFunc func(ctx context.Context, f *File, match func(name string) bool) []*GroupResult

func (o *Options) fill() {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Parser == nil {
		o.Parser = parser.NewParser(parser.Options{})
	}
	if o.LoadRules == nil {
		o.LoadRules = ParseRuleFile
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
}

// Result is what a run found.
type Result struct {
	Files    []*FileResult
	Coverage *Coverage
}

// Failed reports whether any file or test group failed.
func (r *Result) Failed() bool {
	for _, f := range r.Files {
		if f.Failed() {
			return true
		}
	}
	return false
}

// FileResult is the outcome of one test file.
type FileResult struct {
	Path   string
	Errors []Failure // problems with the file itself: YAML, rule files, group_eval_order
	Groups []*GroupResult
}

// Failed reports whether the file or one of its groups failed.
func (f *FileResult) Failed() bool {
	if len(f.Errors) > 0 {
		return true
	}
	for _, g := range f.Groups {
		if len(g.Failures) > 0 {
			return true
		}
	}
	return false
}

// GroupResult is the outcome of one test group that ran.
type GroupResult struct {
	Name     string // the name, or unnamed#N as promtool calls it
	Pos      Pos
	Failures []Failure
	Duration time.Duration
}

// Failure is one failed assertion or error, with the position of the test
// case (or group, or file) it belongs to. Message is promtool's text.
type Failure struct {
	Pos     Pos
	Kind    string // alert_rule_test, promql_expr_test, input_series, rule evaluation, ...
	Message string
}

func (f Failure) String() string {
	if f.Kind == "" {
		return f.Pos.String() + ": " + strings.TrimSpace(f.Message)
	}
	return f.Pos.String() + ": " + f.Kind + "\n" + f.Message
}

// UsageError is an error in how the runner was called (a bad --run
// expression, a test file that cannot be read): exit code 2, not 1.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Run runs the test files in order, printing as promtool does, and returns
// what it found. The error is a *UsageError when the run could not start or
// could not read a file; test failures are in the Result, not the error.
func Run(ctx context.Context, opts Options, files ...string) (*Result, error) {
	opts.fill()
	var run *regexp.Regexp
	if len(opts.Run) > 0 {
		re, err := regexp.Compile(strings.Join(opts.Run, "|"))
		if err != nil {
			return nil, &UsageError{fmt.Errorf("--run: %w", err)}
		}
		run = re
	}
	contents := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, &UsageError{fmt.Errorf("reading test file: %w", err)}
		}
		contents[i] = b
	}

	r := &runner{opts: opts, run: run, rules: newRuleCache(opts.LoadRules, opts.Parser), cov: newCoverage()}
	junit := &junitxml.JUnitXML{}
	res := &Result{}
	// Plan every file first, then run the test groups of all files on a
	// bounded pool (each group has its own storage and rule manager), then
	// report in file and group order, so output does not depend on timing.
	plans := make([]*filePlan, len(files))
	var tasks []*groupTask
	for i, path := range files {
		plans[i] = r.plan(path, contents[i])
		tasks = append(tasks, plans[i].tasks...)
	}
	if err := r.runTasks(ctx, tasks); err != nil {
		return res, err
	}
	for _, fp := range plans {
		if fp.file != nil && fp.file.NotificationTests != nil && opts.Notifications != nil {
			fp.notifications = opts.Notifications(ctx, fp.file, func(name string) bool {
				return run == nil || run.MatchString(name)
			})
		}
	}
	for _, fp := range plans {
		fr := fp.result
		fmt.Fprintf(opts.Stdout, "Processing test file: %s\n", fr.Path)
		suite := junit.Suite(fr.Path)
		suite.Settime(opts.Now().Format("2006-01-02T15:04:05"))
		if fp.abort != nil {
			suite.Abort(fp.abort)
		}
		for _, t := range fp.tasks {
			suite.Case(t.result.Name)
			for _, f := range t.result.Failures {
				suite.Fail(f.String())
			}
			fr.Groups = append(fr.Groups, t.result)
		}
		for _, g := range fp.notifications {
			suite.Case(g.Name)
			for _, f := range g.Failures {
				suite.Fail(f.String())
			}
			fr.Groups = append(fr.Groups, g)
		}
		for _, w := range fp.warnings {
			fmt.Fprintln(opts.Stderr, "  WARNING: no file match pattern", w)
		}
		if opts.Debug {
			for _, t := range fp.tasks {
				io.WriteString(opts.Stderr, t.debug.String())
			}
		}
		res.Files = append(res.Files, fr)
		if fr.Failed() {
			fmt.Fprintln(opts.Stderr, "  FAILED:")
			for _, f := range fr.Errors {
				fmt.Fprintln(opts.Stderr, f.String())
				fmt.Fprintln(opts.Stderr)
			}
			for _, g := range fr.Groups {
				for _, f := range g.Failures {
					fmt.Fprintln(opts.Stderr, f.String())
					fmt.Fprintln(opts.Stderr)
				}
			}
		} else {
			fmt.Fprintln(opts.Stdout, "  SUCCESS")
		}
		fmt.Fprintln(opts.Stdout)
	}
	if opts.JUnit != nil {
		if err := junit.WriteXML(opts.JUnit); err != nil {
			return res, &UsageError{fmt.Errorf("writing JUnit XML: %w", err)}
		}
	}
	res.Coverage = r.cov.result(r.rules)
	return res, nil
}

type runner struct {
	opts  Options
	run   *regexp.Regexp
	rules *ruleCache
	cov   *coverage
}

// filePlan is a parsed test file and the test groups to run.
type filePlan struct {
	file          *File // nil when the file did not parse
	notifications []*GroupResult
	result        *FileResult
	abort         error // the file could not run at all (JUnit <error>)
	warnings      []string
	tasks         []*groupTask
}

type groupTask struct {
	run    groupRun
	result *GroupResult
	debug  strings.Builder
}

func (r *runner) plan(path string, content []byte) *filePlan {
	fp := &filePlan{result: &FileResult{Path: path}}
	fileFail := func(pos Pos, kind string, err error) {
		fp.result.Errors = append(fp.result.Errors, Failure{Pos: pos, Kind: kind, Message: "    " + err.Error()})
		fp.abort = errors.Join(fp.abort, err)
	}
	tf, errs := Parse(path, content)
	if len(errs) > 0 {
		for _, err := range errs {
			var pe *ParseError
			if errors.As(err, &pe) {
				fp.result.Errors = append(fp.result.Errors, Failure{Pos: pe.Pos, Message: pe.Msg})
				fp.abort = errors.Join(fp.abort, err)
				continue
			}
			fileFail(Pos{Path: path}, "", err)
		}
		return fp
	}

	if tf.NotificationTests != nil && r.opts.Notifications == nil {
		fileFail(tf.NotificationsPos, "notification_tests", errors.New("notification_tests need the notifier configuration: run paged test --config paged.yaml"))
		return fp
	}
	fp.file = tf

	ruleFiles, warnings, err := resolveRuleFiles(tf)
	fp.warnings = warnings
	if err != nil {
		fileFail(Pos{Path: path}, "rule_files", err)
		return fp
	}

	order := map[string]int{}
	for i, name := range tf.GroupEvalOrder {
		if _, dup := order[name]; dup {
			fileFail(tf.GroupEvalOrderPos[i], "group_eval_order", fmt.Errorf("group name repeated in evaluation order: %s", name))
			return fp
		}
		order[name] = i
	}

	evalInterval := tf.EvaluationInterval
	if evalInterval == 0 {
		evalInterval = time.Minute
	}
	for i := range tf.Tests {
		tg := &tf.Tests[i]
		if r.run != nil && !r.run.MatchString(tg.Name) {
			continue
		}
		name := tg.Name
		if name == "" {
			name = fmt.Sprintf("unnamed#%d", i)
		}
		gr := &GroupResult{Name: name, Pos: tg.Pos}
		fp.tasks = append(fp.tasks, &groupTask{
			result: gr,
			run: groupRun{
				file:         tf,
				group:        tg,
				evalInterval: evalInterval,
				order:        order,
				ruleFiles:    ruleFiles,
				result:       gr,
			},
		})
	}
	return fp
}

// runTasks runs the test groups on at most Options.Parallel goroutines.
func (r *runner) runTasks(ctx context.Context, tasks []*groupTask) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *groupTask)
	errc := make(chan error, r.opts.Parallel)
	var wg sync.WaitGroup
	for range r.opts.Parallel {
		wg.Go(func() {
			for t := range work {
				if err := r.runTask(ctx, t); err != nil {
					select {
					case errc <- err:
					default:
					}
					cancel()
				}
			}
		})
	}
feed:
	for _, t := range tasks {
		select {
		case work <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	return ctx.Err()
}

func (r *runner) runTask(ctx context.Context, t *groupTask) error {
	if r.opts.Debug {
		fmt.Fprintf(&t.debug, "DEBUG: Starting test %s\n", t.result.Name)
	}
	start := time.Now()
	err := r.group(ctx, t.run, &t.debug)
	t.result.Duration = time.Since(start)
	if r.opts.Debug {
		fmt.Fprintf(&t.debug, "DEBUG: Test %s finished, took %v\n", t.result.Name, t.result.Duration)
	}
	return err
}

// resolveRuleFiles makes rule_files relative to the test file's folder and
// expands globs. A pattern that matches nothing is a warning, as in promtool.
func resolveRuleFiles(tf *File) (files, unmatched []string, err error) {
	base := filepath.Dir(tf.Path)
	for _, rf := range tf.RuleFiles {
		if rf != "" && !filepath.IsAbs(rf) {
			rf = filepath.Join(base, rf)
		}
		m, err := filepath.Glob(rf)
		if err != nil {
			return nil, nil, fmt.Errorf("rule_files: %q: %w", rf, err)
		}
		if len(m) == 0 {
			unmatched = append(unmatched, rf)
		}
		files = append(files, m...)
	}
	return files, unmatched, nil
}
