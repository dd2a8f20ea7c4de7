package rules

import (
	"math"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
)

// A lint run: files are parsed and linted on one worker per CPU, and the
// findings come out in the order of the files whatever order the workers
// finish in, so the output is the same as one file after the other.

// LintFiles lints, as Lint does, the files already loaded (a paged.yaml's
// packs) followed by the rule files at paths, and returns the findings and
// the source lines they point at, for WriteFindings.
//
// It reads every path first, so that a file that cannot be read is an
// error, the first one in the order of paths, before any check runs. Of a
// file it reads, it keeps once linted only the lines its findings point
// at: a run does not hold every file's YAML and PromQL trees at once.
func LintFiles(loaded []*File, paths []string, opts ParseOptions, cfg *Config) ([]Finding, SourceFunc, error) {
	contents, err := readRuleFiles(paths)
	if err != nil {
		return nil, nil, err
	}
	n := len(loaded) + len(paths)
	pathOf := func(i int) string {
		if i < len(loaded) {
			return loaded[i].Path
		}
		return paths[i-len(loaded)]
	}
	// The source printer shows the lines of the last file of a path, as
	// a map from path to file would: a path given twice (a pack's and a
	// file's) keeps all of that file.
	last, count := map[string]int{}, map[string]int{}
	for i := range n {
		last[pathOf(i)] = i
		count[pathOf(i)]++
	}
	file := func(i int, w *worker) *File {
		if i < len(loaded) {
			return loaded[i]
		}
		j := i - len(loaded)
		o := opts
		o.templates = w.templateActions
		f := ParseFile(paths[j], contents[j], o)
		contents[j] = nil // f holds it now, until f is dropped
		return f
	}
	shown := make([]sourceLines, n)
	keep := func(i int, f *File, ff fileFindings) {
		switch {
		case last[f.Path] != i:
			// Another file of this path is the one shown.
		case count[f.Path] > 1:
			shown[i] = allLines(f)
		default:
			shown[i] = findingLines(f, ff)
		}
	}
	findings := sortedFindings(lintAll(n, file, cfg, keep))
	src := func(path string, line int) string {
		if i, ok := last[path]; ok {
			return shown[i][line]
		}
		return ""
	}
	return findings, src, nil
}

// sourceLines are the lines of a file the source printer may show, by
// number.
type sourceLines map[int]string

// findingLines are the lines of f that its findings start on.
func findingLines(f *File, ff fileFindings) sourceLines {
	out := make(sourceLines, len(ff.found)+len(ff.pending))
	for _, fd := range ff.found {
		out[fd.Range.Start.Line] = f.Line(fd.Range.Start.Line)
	}
	for _, pf := range ff.pending {
		out[pf.Range.Start.Line] = f.Line(pf.Range.Start.Line)
	}
	return out
}

func allLines(f *File) sourceLines {
	out := make(sourceLines, f.index.lines())
	for n := 1; n <= f.index.lines(); n++ {
		out[n] = f.Line(n)
	}
	return out
}

// lintAll lints n files on one worker per CPU and returns the findings
// of each, in the order of the files. file(i, w) returns the i-th file,
// parsing it with the caches of worker w when the caller streams them; done, when set, gets each file
// with what it found once it is linted, after which the run holds on to
// neither.
func lintAll(n int, file func(i int, w *worker) *File, cfg *Config, done func(i int, f *File, ff fileFindings)) [][]Finding {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	perFile := make([]fileFindings, n)
	recorded := newRecordedFirst()
	forEach(n, lintWorkers(n, cfg), func() func(i int) {
		w := newWorker()
		return func(i int) {
			f := file(i, w)
			recorded.add(i, f)
			perFile[i] = lintFile(f, cfg, w)
			if done != nil {
				done(i, f, perFile[i])
			}
		}
	})
	// Now that every file is parsed: a pending finding stands when no
	// file before its own records the name.
	found := make([][]Finding, n)
	for i, ff := range perFile {
		found[i] = ff.found
		for _, pf := range ff.pending {
			if recorded.first(pf.unlessRecorded) >= i {
				found[i] = append(found[i], pf.Finding)
			}
		}
	}
	return found
}

// lintWorkers is one worker per CPU, or one when the live checks run:
// they learn about the server across the run (it is down: one finding,
// on the first rule that met it), in the order of the files.
func lintWorkers(n int, cfg *Config) int {
	if cfg.Prometheus != nil {
		return min(n, 1)
	}
	return min(n, runtime.GOMAXPROCS(0))
}

// forEach calls each(i) for every i in [0, n) on as many goroutines as
// workers, handing out i in increasing order, and returns once all calls
// have. Each goroutine gets its each from newEach, with state of its own.
func forEach(n, workers int, newEach func() func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			each := newEach()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				each(i)
			}
		})
	}
	wg.Wait()
}

// worker holds what one worker goroutine caches across the files it
// lints: its own, so it needs no lock.
type worker struct {
	templateActions templateCache             // check_alerts_template.go
	matcherRes      map[string]*regexp.Regexp // by label: matcherRange
}

func newWorker() *worker {
	return &worker{templateActions: templateCache{}, matcherRes: map[string]*regexp.Regexp{}}
}

// recordedFirst maps each name recording rules write to the first file,
// in the run's order, that writes it. Workers add files as they parse
// them, in any order.
type recordedFirst struct {
	mu    sync.Mutex
	files map[string]int
}

func newRecordedFirst() *recordedFirst {
	return &recordedFirst{files: map[string]int{}}
}

// add records the names f, the i-th file, writes.
func (rf *recordedFirst) add(i int, f *File) {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Record == nil || r.Record.Value == "" {
				continue
			}
			if j, ok := rf.files[r.Record.Value]; !ok || i < j {
				rf.files[r.Record.Value] = i
			}
		}
	}
}

// first is the first file that writes name, or math.MaxInt when none
// does.
func (rf *recordedFirst) first(name string) int {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	if i, ok := rf.files[name]; ok {
		return i
	}
	return math.MaxInt
}
