// Command startup times the commands people type, where they feel a CLI's
// start: `paged version`, `paged lint` and `paged test` against Debian's
// promtool 2.42 doing the same (`promtool --version`, `promtool check
// rules`, `promtool test rules`), in alternating pairs within one run, and
// prints a Markdown table of median wall time, CPU (user+system) and peak
// RSS with paged's ratio to promtool.
//
//	go run ./bench/startup [pairs]        (default 20 pairs, after 2 warm-up pairs)
//
// Options (flag or environment):
//
//	-paged BIN    / PAGED=BIN            time this binary instead of building one from the tree
//	-tags T       / PAGED_TAGS=T         build tags for the build (e.g. paged_all_discovery)
//	-ldflags F    / PAGED_LDFLAGS=F      linker flags for the build (e.g. "-s -w", as scripts/release.sh)
//	-promtool BIN / PROMTOOL=BIN         default /usr/bin/promtool (apt-get install prometheus)
//	-shared DIR   / PAGED_SHARED=DIR     the shared corpus, default ../shared beside the repository
//
// Fairness: both binaries are copied with cp into one fresh temporary
// directory, synced, and run from there (how much of a binary the page
// cache holds changes its RSS by 10 MiB and more on this kernel); each pair
// runs paged, then promtool, back to back, so drifting load falls on both;
// output goes to /dev/null for both; exit codes are ignored (the community
// files have findings) and shown in the table.
//
// Wall time is taken around fork and wait; CPU and peak RSS come from the
// child's rusage (wait4): ru_maxrss is the number GNU time prints as %M, and
// user+system is read to the microsecond where GNU time's %U and %S print
// hundredths, too coarse for a start of 20–40 ms.
//
// Inputs, from the shared corpus: paged's packs (examples/packs/*/*.rules.yaml),
// awesome-prometheus-alerts (dist/rules/**/*.yml), monitoring-mixins
// (assets/**/*.yaml), each kept to the files `promtool check rules` accepts,
// the same list for both tools; and promtool's own rule unit tests
// (cmd/promtool/testdata, the files with a top-level tests: that Debian's
// promtool passes), run from their directory since they name their rule
// files relatively. No network.
package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/startup:", err)
		os.Exit(1)
	}
}

// options are the command line, flags first, then the environment.
type options struct {
	pairs, warmup int
	paged         string
	tags, ldflags string
	promtool      string
	shared        string
}

func parseOptions(args []string) (options, error) {
	var o options
	fl := flag.NewFlagSet("startup", flag.ContinueOnError)
	fl.IntVar(&o.warmup, "warmup", 2, "warm-up pairs, not counted")
	fl.StringVar(&o.paged, "paged", os.Getenv("PAGED"), "paged binary to time (default: build one from the tree)")
	fl.StringVar(&o.tags, "tags", os.Getenv("PAGED_TAGS"), "build tags for the paged build")
	fl.StringVar(&o.ldflags, "ldflags", os.Getenv("PAGED_LDFLAGS"), "linker flags for the paged build")
	fl.StringVar(&o.promtool, "promtool", envOr("PROMTOOL", "/usr/bin/promtool"), "promtool binary")
	fl.StringVar(&o.shared, "shared", os.Getenv("PAGED_SHARED"), "shared corpus directory (default ../shared beside the repository)")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: go run ./bench/startup [flags] [pairs]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return o, err
	}
	o.pairs = 20
	switch fl.NArg() {
	case 0:
	case 1:
		n, err := strconv.Atoi(fl.Arg(0))
		if err != nil || n < 1 {
			return o, fmt.Errorf("pairs: want a positive number, got %q", fl.Arg(0))
		}
		o.pairs = n
	default:
		return o, errors.New("at most one argument: the number of pairs")
	}
	if o.warmup < 0 {
		return o, errors.New("-warmup: want 0 or more")
	}
	if o.paged != "" && (o.tags != "" || o.ldflags != "") {
		return o, errors.New("-tags and -ldflags apply to the build; with -paged the binary is used as it is")
	}
	return o, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// benchCase is one line of the table: the two command lines and where they run.
type benchCase struct {
	command string // as shown in the table
	input   string
	dir     string // working directory; "" is the binaries' directory
	paged   []string
	prom    []string
}

// sample is one run of one command.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
	exit      int
}

func run(ctx context.Context, args []string) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	loadStart := loadavg()
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	if o.shared == "" {
		o.shared = filepath.Join(repo, "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(o.shared, "corpus")); err != nil {
		return fmt.Errorf("shared corpus not found (set -shared or PAGED_SHARED): %w", err)
	}
	promSrc, err := exec.LookPath(o.promtool)
	if err != nil {
		return fmt.Errorf("promtool not found (apt-get install prometheus): %w", err)
	}

	tmp, err := os.MkdirTemp("", "paged-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pagedSrc, treeRev := o.paged, ""
	if pagedSrc == "" {
		treeRev = treeRevision(repo)
		pagedSrc = filepath.Join(tmp, "build", "paged")
		build := []string{"build", "-o", pagedSrc}
		if o.tags != "" {
			build = append(build, "-tags", o.tags)
		}
		if o.ldflags != "" {
			build = append(build, "-ldflags", o.ldflags)
		}
		build = append(build, "./cmd/paged")
		logf("go %s", strings.Join(build, " "))
		cmd := exec.CommandContext(ctx, "go", build...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = repo, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building paged: %w", err)
		}
	}

	// Both binaries fresh in one directory, written the same way and synced,
	// so that neither is timed with its file half out of the page cache or
	// while its pages are being written back.
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return err
	}
	paged, prom := filepath.Join(bin, "paged"), filepath.Join(bin, "promtool")
	for _, c := range [][]string{{"cp", pagedSrc, paged}, {"cp", promSrc, prom}, {"sync", paged, prom}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(c, " "), err, out)
		}
	}

	cases, err := buildCases(o.shared, repo, promSrc)
	if err != nil {
		return err
	}

	loadBegin := loadavg()
	start := time.Now()
	results := make([][2][]sample, len(cases))
	for i, c := range cases {
		logf("%s, %s (%d pairs after %d warm-up)", c.command, c.input, o.pairs, o.warmup)
		dir := c.dir
		if dir == "" {
			dir = bin
		}
		for p := range o.warmup + o.pairs {
			if err := ctx.Err(); err != nil {
				return err // interrupted: the deferred clean-up still runs
			}
			g, err := measure(dir, paged, c.paged)
			if err != nil {
				return err
			}
			t, err := measure(dir, prom, c.prom)
			if err != nil {
				return err
			}
			if p >= o.warmup {
				results[i][0] = append(results[i][0], g)
				results[i][1] = append(results[i][1], t)
			}
		}
	}
	elapsed := time.Since(start)
	loadEnd := loadavg()

	return report(o, reportInfo{
		paged: paged, prom: prom, pagedSrc: pagedSrc, promSrc: promSrc, treeRev: treeRev,
		loadStart: loadStart, loadBegin: loadBegin, loadEnd: loadEnd,
		start: start, elapsed: elapsed,
	}, cases, results)
}

// buildCases finds the inputs and keeps what promtool accepts.
func buildCases(shared, repo, promtool string) ([]benchCase, error) {
	cases := []benchCase{{
		command: "`paged version` / `promtool --version`",
		input:   "—",
		paged:   []string{"version"},
		prom:    []string{"--version"},
	}}
	lintInputs := []struct {
		name, root, glob string
	}{
		{"paged packs", filepath.Join(repo, "examples", "packs"), "*.rules.yaml"},
		{"awesome-prometheus-alerts", filepath.Join(shared, "corpus", "samber-awesome-prometheus-alerts", "dist", "rules"), "*.yml"},
		{"monitoring-mixins", filepath.Join(shared, "corpus", "monitoring-mixins-website", "assets"), "*.yaml"},
	}
	for _, in := range lintInputs {
		found, err := walkGlob(in.root, in.glob)
		if err != nil {
			return nil, err
		}
		files, rules, err := acceptedRuleFiles(promtool, found)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.name, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no rule files under %s", in.name, in.root)
		}
		input := fmt.Sprintf("%s, %d files, %d rules", in.name, len(files), rules)
		if len(files) < len(found) {
			input += fmt.Sprintf(" (%d of %d files; promtool rejects the rest)", len(files), len(found))
		}
		cases = append(cases, benchCase{
			command: "`paged lint FILES` / `promtool check rules FILES`",
			input:   input,
			paged:   append([]string{"lint"}, files...),
			prom:    append([]string{"check", "rules"}, files...),
		})
	}

	dir := filepath.Join(shared, "corpus", "prometheus-prometheus", "cmd", "promtool", "testdata")
	tests, err := passingTests(promtool, dir)
	if err != nil {
		return nil, err
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("no rule unit test in %s that promtool passes", dir)
	}
	cases = append(cases, benchCase{
		command: "`paged test FILES` / `promtool test rules FILES`",
		input:   "promtool's testdata: " + strings.Join(tests, ", "),
		dir:     dir,
		paged:   append([]string{"test"}, tests...),
		prom:    append([]string{"test", "rules"}, tests...),
	})
	return cases, nil
}

// walkGlob lists the files under root whose name matches glob, sorted.
func walkGlob(root, glob string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ok, _ := filepath.Match(glob, d.Name()); ok && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

var rulesFound = regexp.MustCompile(`SUCCESS: (\d+) rules found`)

// acceptedRuleFiles returns the files `promtool check rules` accepts and
// how many rules they hold. One call for all of them; file by file only
// when that one fails.
func acceptedRuleFiles(promtool string, files []string) ([]string, int, error) {
	out, err := exec.Command(promtool, append([]string{"check", "rules"}, files...)...).CombinedOutput()
	if err == nil {
		return files, countRules(out), nil
	}
	var kept []string
	rules := 0
	for _, f := range files {
		out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput()
		if err != nil {
			logf("promtool rejects %s, left out", f)
			continue
		}
		kept = append(kept, f)
		rules += countRules(out)
	}
	return kept, rules, nil
}

func countRules(out []byte) int {
	n := 0
	for _, m := range rulesFound.FindAllSubmatch(out, -1) {
		k, _ := strconv.Atoi(string(m[1]))
		n += k
	}
	return n
}

// passingTests returns the rule unit-test files of dir (a top-level
// tests: key) that promtool runs and passes, by base name.
func passingTests(promtool, dir string) ([]string, error) {
	var names []string
	for _, pat := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		names = append(names, m...)
	}
	slices.Sort(names)
	var kept []string
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(b, []byte("tests:")) && !bytes.Contains(b, []byte("\ntests:")) {
			continue
		}
		name := filepath.Base(p)
		cmd := exec.Command(promtool, "test", "rules", name)
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			logf("promtool does not pass %s, left out", name)
			continue
		}
		kept = append(kept, name)
	}
	return kept, nil
}

// measure runs bin args in dir with output to /dev/null and returns its
// wall time, CPU time and peak RSS. The exit code is kept, not judged.
func measure(dir, bin string, args []string) (sample, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir // Stdout and Stderr nil: /dev/null
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return sample{}, fmt.Errorf("%s: %w", bin, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, errors.New("no rusage for the child")
	}
	return sample{
		wall:   wall,
		cpu:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		rssKiB: ru.Maxrss,
		exit:   cmd.ProcessState.ExitCode(),
	}, nil
}

type reportInfo struct {
	paged, prom, pagedSrc, promSrc string
	treeRev                        string // the tree's commit, when paged was built from it
	loadStart, loadBegin, loadEnd  string
	start                          time.Time
	elapsed                        time.Duration
}

func report(o options, ri reportInfo, cases []benchCase, results [][2][]sample) error {
	pagedVersion := firstLine(exec.Command(ri.paged, "version").Output())
	promVersion := firstLine(exec.Command(ri.prom, "--version").CombinedOutput())
	pagedSize, promSize := fileSize(ri.paged), fileSize(ri.prom)

	fmt.Printf("## paged vs promtool: start-up (`%s`)\n\n", invocation(o))
	fmt.Printf("- date: %s, %s of timing\n", ri.start.UTC().Format("2006-01-02 15:04 MST"), ri.elapsed.Round(time.Second))
	fmt.Printf("- machine: %d cores (nproc), %s; load average %s at start, %s when timing began, %s at the end\n",
		runtime.NumCPU(), cpuModel(), ri.loadStart, ri.loadBegin, ri.loadEnd)
	fmt.Printf("- paged: %s; %s; binary %s\n", pagedVersion, buildDescription(ri.paged, ri.treeRev, o), sizeText(pagedSize))
	fmt.Printf("- promtool: %s (%s); binary %s\n", promVersion, ri.promSrc, sizeText(promSize))
	fmt.Printf("- %d pairs after %d warm-up pairs, each pair paged then promtool back to back; both copied with cp into one fresh directory and run from there (the tests from their own directory); output to /dev/null; medians; CPU is user+system; peak RSS is ru_maxrss (GNU time's %%M)\n\n", o.pairs, o.warmup)

	fmt.Println("| command | input | paged wall | promtool wall | ratio | per-pair wall ratio: median (quartiles) | paged CPU | promtool CPU | ratio | paged peak RSS | promtool peak RSS | ratio | exit paged / promtool |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for i, c := range cases {
		g, t := results[i][0], results[i][1]
		gw, tw := medianOf(g, wallMs), medianOf(t, wallMs)
		gc, tc := medianOf(g, cpuMs), medianOf(t, cpuMs)
		gr, tr := medianOf(g, rssMiB), medianOf(t, rssMiB)
		pair := make([]float64, len(g))
		for j := range g {
			pair[j] = wallMs(g[j]) / wallMs(t[j])
		}
		slices.Sort(pair)
		fmt.Printf("| %s | %s | %.1f ms | %.1f ms | **%.2f** | %.2f (%.2f–%.2f) | %.1f ms | %.1f ms | **%.2f** | %.1f MiB | %.1f MiB | **%.2f** | %s / %s |\n",
			c.command, c.input, gw, tw, gw/tw, quantile(pair, 0.5), quantile(pair, 0.25), quantile(pair, 0.75),
			gc, tc, gc/tc, gr, tr, gr/tr, exits(g), exits(t))
	}
	return nil
}

// invocation is the command line that repeats this run.
func invocation(o options) string {
	var b strings.Builder
	b.WriteString("go run ./bench/startup")
	if o.paged != "" {
		fmt.Fprintf(&b, " -paged %s", o.paged)
	}
	if o.tags != "" {
		fmt.Fprintf(&b, " -tags %s", o.tags)
	}
	if o.ldflags != "" {
		fmt.Fprintf(&b, " -ldflags %q", o.ldflags)
	}
	if o.warmup != 2 {
		fmt.Fprintf(&b, " -warmup %d", o.warmup)
	}
	fmt.Fprintf(&b, " %d", o.pairs)
	return b.String()
}

func wallMs(s sample) float64 { return float64(s.wall) / 1e6 }
func cpuMs(s sample) float64  { return float64(s.cpu) / 1e6 }
func rssMiB(s sample) float64 { return float64(s.rssKiB) / 1024 }

func medianOf(ss []sample, f func(sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	return quantile(v, 0.5)
}

// quantile of sorted v, interpolating linearly between ranks.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	pos := q * float64(len(v)-1)
	lo := int(pos)
	if lo+1 >= len(v) {
		return v[lo]
	}
	return v[lo] + (pos-float64(lo))*(v[lo+1]-v[lo])
}

// exits lists the distinct exit codes of the runs.
func exits(ss []sample) string {
	var codes []string
	for _, s := range ss {
		if c := strconv.Itoa(s.exit); !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	return strings.Join(codes, ",")
}

// buildDescription names the commit, whether the tree had changes, and the
// build tags and linker flags, from the binary's own build information.
// A binary built with -buildvcs=false (as GOFLAGS may say) carries no
// commit; one built here then takes treeRev, read with git.
func buildDescription(path, treeRev string, o options) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "no build information"
	}
	var rev, tags, ldflags string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		case "-tags":
			tags = s.Value
		case "-ldflags":
			ldflags = s.Value
		}
	}
	var parts []string
	switch {
	case rev == "" && treeRev != "":
		parts = append(parts, "commit "+treeRev)
	case rev == "":
		parts = append(parts, "commit unknown (no VCS information in the binary)")
	case modified:
		parts = append(parts, "commit "+rev[:min(12, len(rev))]+" with uncommitted changes")
	default:
		parts = append(parts, "commit "+rev[:min(12, len(rev))])
	}
	if tags == "" {
		tags = "none"
	}
	parts = append(parts, "build tags: "+tags)
	if ldflags != "" {
		parts = append(parts, "ldflags: "+ldflags)
	}
	if o.paged != "" {
		parts = append(parts, "given as "+o.paged)
	} else {
		parts = append(parts, "built from the tree")
	}
	return strings.Join(parts, ", ")
}

func firstLine(b []byte, err error) string {
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func sizeText(n int64) string {
	return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "CPU unknown"
	}
	defer f.Close()
	// The first processor's fields; a VM may name only the vendor and
	// line ("AMD EPYC"), so family and model come too.
	fields := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() && sc.Text() != "" {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	name := fields["model name"]
	if name == "" {
		return "CPU unknown"
	}
	if fields["cpu family"] != "" {
		name += fmt.Sprintf(" (family %s, model %s)", fields["cpu family"], fields["model"])
	}
	return name
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// treeRevision is the tree's commit, and how many tracked files differ
// from it (untracked files are not counted: bench/startup itself may be one).
func treeRevision(repo string) string {
	rev, err := exec.Command("git", "-C", repo, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(rev))
	st, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return s
	}
	if lines := strings.TrimSpace(string(st)); lines != "" {
		s += fmt.Sprintf(" with uncommitted changes to %d tracked files", strings.Count(lines, "\n")+1)
	}
	return s
}

// repoRoot is the directory of the main module, wherever this is run from.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run inside the paged module")
	}
	return filepath.Dir(gomod), nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "startup: "+format+"\n", args...)
}
