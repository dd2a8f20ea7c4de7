package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/pagedhq/paged/rules/catalog"
)

// Options is what a review needs: the project, where its checkout is and
// where the report goes. Catalog is the catalogue to compare with; nil is
// the one compiled into paged.
type Options struct {
	Project  string
	Checkout string
	Out      io.Writer
	Catalog  *catalog.Catalog
	// List also writes every family read upstream.
	List bool
	// Release, for a checkout of a tagged release of a project whose
	// releases the catalogue lists (additions.yaml lifecycle:), compares
	// with what the catalogue says that release exposes.
	Release string
}

type usageError struct{ error }

// family is one metric family as upstream source declares it.
type family struct {
	Name   string
	Type   catalog.Type // Unknown when the source does not say
	Labels []string     // nil when the source does not say (a variable not followed)
	// Values are label values written as literals next to the name
	// (TGI's "err" => "dropped").
	Values map[string][]string
	Where  string // file:line of the first declaration
	// Optional marks a family the project ships disabled (dcgm-exporter's
	// commented-out counters): the catalogue lists it as conditional.
	Optional bool
	// DescribedOnly marks a family with a help text that nothing sets
	// (TGI's tgi_batch_total_tokens): the catalogue says described_only.
	DescribedOnly bool
}

// upstream is what a project's source declares.
type upstream struct {
	families map[string]*family
	// absent, when set, says the checkout has no metrics at all and why
	// (GAIE 1.6 removed its endpoint picker); the catalogue must say so.
	absent string
	// names lists names only (go-dcgm's field list), no families.
	names map[string]string
}

func (u *upstream) add(f family) {
	if u.families == nil {
		u.families = map[string]*family{}
	}
	prev, ok := u.families[f.Name]
	if !ok {
		ff := f
		u.families[f.Name] = &ff
		return
	}
	if prev.Type == catalog.Unknown {
		prev.Type = f.Type
	}
	if prev.Labels == nil {
		prev.Labels = f.Labels
	} else if f.Labels != nil {
		for _, l := range f.Labels {
			if !slices.Contains(prev.Labels, l) {
				prev.Labels = append(prev.Labels, l)
			}
		}
	}
	for k, vs := range f.Values {
		if prev.Values == nil {
			prev.Values = map[string][]string{}
		}
		for _, v := range vs {
			if !slices.Contains(prev.Values[k], v) {
				prev.Values[k] = append(prev.Values[k], v)
			}
		}
	}
	prev.Optional = prev.Optional && f.Optional
}

// project knows where a checkout declares its metrics and which of the
// catalogue's metrics it should have.
type project struct {
	servers []string // catalogue server keys it is compared with
	line    string   // the release line of additions.yaml's lifecycle, for Options.Release
	read    func(dir string) (*upstream, error)
	// inScope picks the catalogue's metrics the checkout should declare.
	inScope func(m *catalog.Metric) bool
}

var projects = map[string]project{
	"tgi":           {servers: []string{"tgi"}, read: readTGI},
	"dcgm-exporter": {servers: []string{"dcgm_exporter"}, read: readDCGMExporter},
	"go-dcgm":       {read: readGoDCGM},
	"gaie": {servers: []string{"gaie"}, line: "inference-gateway", read: readGAIE,
		inScope: func(m *catalog.Metric) bool { return !strings.HasPrefix(m.Name, "llm_d_") }},
	"llm-d": {servers: []string{"gaie"}, read: readLLMD},
	"vllm": {servers: []string{"vllm"}, line: "vllm", read: readVLLM,
		inScope: func(m *catalog.Metric) bool { return m.Layer == "" && m.HasEngine("v1") }},
	"sglang":         {servers: []string{"sglang"}, read: readSGLang},
	"sglang-gateway": {servers: []string{"sglang_gateway"}, read: readSGLangGateway},
}

func projectNames() []string {
	var out []string
	for k := range projects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Run reads the checkout, compares it with the catalogue, writes one line
// per difference and returns how many there are.
func Run(ctx context.Context, o Options) (int, error) {
	p, ok := projects[o.Project]
	if !ok {
		return 0, usageError{fmt.Errorf("unknown project %q (want one of %s)", o.Project, strings.Join(projectNames(), ", "))}
	}
	if st, err := os.Stat(o.Checkout); err != nil || !st.IsDir() {
		return 0, usageError{fmt.Errorf("checkout %s: not a directory", o.Checkout)}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if o.Release != "" && p.line == "" {
		return 0, usageError{fmt.Errorf("-release: the catalogue lists no releases of %s", o.Project)}
	}
	cat := o.Catalog
	if cat == nil {
		cat = catalog.Default()
	}
	up, err := p.read(o.Checkout)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", o.Checkout, err)
	}
	fmt.Fprintf(o.Out, "# %s at %s%s\n", o.Project, o.Checkout, revision(o.Checkout))
	var diffs []string
	switch {
	case up.names != nil:
		diffs = compareNames(cat, up)
	case up.absent != "":
		fmt.Fprintf(o.Out, "# no metrics: %s\n", up.absent)
		diffs = compareAbsent(cat, p, up)
	default:
		diffs = compare(cat, p, up, o.Release)
		fmt.Fprintf(o.Out, "# %d families upstream\n", len(up.families))
		if o.List {
			for _, n := range sorted(keys(up.families)) {
				f := up.families[n]
				opt := ""
				if f.Optional {
					opt = ", disabled by default"
				}
				fmt.Fprintf(o.Out, "#   %s (%s%s%s) %s\n", n, typeText(f.Type), labelText(f.Labels), opt, f.Where)
			}
		}
	}
	for _, d := range diffs {
		fmt.Fprintln(o.Out, d)
	}
	if len(diffs) == 0 {
		fmt.Fprintln(o.Out, "clean: the catalogue agrees with the checkout")
	} else {
		fmt.Fprintf(o.Out, "%d difference(s)\n", len(diffs))
	}
	return len(diffs), nil
}

// revision is " (commit, describe)" of a git checkout, or "".
func revision(dir string) string {
	out, err := exec.Command("git", "-C", dir, "log", "-1", "--format=%h %cs").Output()
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(out))
	if d, err := exec.Command("git", "-C", dir, "describe", "--tags", "--always").Output(); err == nil {
		s += ", " + strings.TrimSpace(string(d))
	}
	return " (" + s + ")"
}

func inServers(m *catalog.Metric, servers []string) bool {
	return m.Server != nil && slices.Contains(servers, m.Server.Key)
}

// compare lists the differences between the checkout's families and the
// catalogue's metrics of the project's servers.
func compare(cat *catalog.Catalog, p project, up *upstream, release string) []string {
	// exposed: whether the catalogue has the metric at the release; with
	// no release, whether it is current. A removed metric counts at a
	// release only when its lifecycle says when it went.
	exposed := func(m *catalog.Metric) bool {
		if release == "" {
			return m.Status != catalog.Removed
		}
		if _, ok := cat.LifecycleOf(p.line, m.Name); !ok && m.Status == catalog.Removed {
			return false
		}
		return cat.ExposedIn(p.line, m.Name, release)
	}
	var out []string
	names := make([]string, 0, len(up.families))
	for n := range up.families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := up.families[n]
		m := cat.Metric(n)
		if m == nil || !inServers(m, p.servers) {
			out = append(out, fmt.Sprintf("lacks  %s (%s%s) %s", n, typeText(f.Type), labelText(f.Labels), f.Where))
			continue
		}
		if !exposed(m) {
			what := "lists it as removed"
			if release != "" {
				what = "says release " + release + " does not expose it"
			}
			out = append(out, fmt.Sprintf("wrong  %s: the catalogue %s, upstream declares it (%s)", n, what, f.Where))
			continue
		}
		declared := m.Type
		if m.DeclaredType != "" {
			declared = m.DeclaredType // typed by behaviour; the catalogue records what upstream declares
		}
		if f.Type != catalog.Unknown && declared != catalog.Unknown && f.Type != declared {
			out = append(out, fmt.Sprintf("wrong  %s: type %s upstream, %s in the catalogue (%s)", n, f.Type, declared, f.Where))
		}
		labels := m.Labels
		if release != "" {
			labels = cat.LabelsAt(p.line, m, release)
		}
		if f.Labels != nil && labels != nil && !sameSet(f.Labels, labels) {
			out = append(out, fmt.Sprintf("wrong  %s: labels [%s] upstream, [%s] in the catalogue (%s)", n,
				strings.Join(sorted(f.Labels), " "), strings.Join(sorted(labels), " "), f.Where))
		}
		for _, l := range sorted(keys(f.Values)) {
			known := m.LabelValues[l]
			if len(known) == 0 {
				continue
			}
			var missing []string
			for _, v := range f.Values[l] {
				if !slices.Contains(known, v) {
					missing = append(missing, v)
				}
			}
			if len(missing) > 0 {
				out = append(out, fmt.Sprintf("wrong  %s: %s values %s upstream are not in the catalogue's [%s] (%s)", n, l,
					strings.Join(sorted(missing), ", "), strings.Join(known, " "), f.Where))
			}
		}
		if f.DescribedOnly != (m.Status == catalog.Described) {
			what := "upstream sets it, the catalogue says it is only described"
			if f.DescribedOnly {
				what = "upstream only describes it (nothing sets it), the catalogue lists it as " + string(m.Status)
			}
			out = append(out, fmt.Sprintf("wrong  %s: %s (%s)", n, what, f.Where))
		}
		if f.Optional && m.Status == catalog.Current {
			out = append(out, fmt.Sprintf("wrong  %s: upstream ships it disabled, the catalogue lists it as on by default (%s)", n, f.Where))
		}
		if !f.Optional && m.Status == catalog.Conditional && strings.Contains(m.Condition, "commented out") {
			out = append(out, fmt.Sprintf("wrong  %s: upstream collects it by default, the catalogue says %q (%s)", n, m.Condition, f.Where))
		}
	}
	for _, m := range cat.Metrics() {
		if !inServers(m, p.servers) || !exposed(m) || p.inScope != nil && !p.inScope(m) {
			continue
		}
		if _, ok := up.families[m.Name]; !ok {
			out = append(out, fmt.Sprintf("gone   %s: the catalogue lists it (%s), the checkout does not declare it", m.Name, statusText(m)))
		}
	}
	return out
}

// compareAbsent: a checkout without metrics must be one of the releases
// the catalogue says export none.
func compareAbsent(cat *catalog.Catalog, p project, up *upstream) []string {
	for _, key := range p.servers {
		if s := cat.Server(key); s != nil && len(s.Absent) > 0 {
			return nil
		}
	}
	return []string{"absent " + up.absent + "; the catalogue has no absent: entry saying a release exports none"}
}

// compareNames compares a list of names (go-dcgm's fields) with the
// catalogue's list of them.
func compareNames(cat *catalog.Catalog, up *upstream) []string {
	var out []string
	for _, n := range sorted(keys(up.names)) {
		if !cat.DCGMField(n) {
			out = append(out, fmt.Sprintf("lacks  %s (a DCGM field, %s)", n, up.names[n]))
		}
	}
	for _, n := range cat.DCGMFields() {
		if _, ok := up.names[n]; !ok {
			out = append(out, fmt.Sprintf("gone   %s: dcgm_fields.txt lists it, the checkout does not define it", n))
		}
	}
	return out
}

func statusText(m *catalog.Metric) string {
	s := string(m.Status)
	if m.Condition != "" {
		s += ": " + m.Condition
	}
	return s
}

func typeText(t catalog.Type) string {
	if t == catalog.Unknown {
		return "type not read"
	}
	return string(t)
}

func labelText(ls []string) string {
	if ls == nil {
		return ""
	}
	return "; labels [" + strings.Join(sorted(ls), " ") + "]"
}

func sameSet(a, b []string) bool {
	return slices.Equal(sorted(a), sorted(b))
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// walkFiles calls fn for every file under dir (relative to root) whose
// name ends in one of exts, skipping vendored and build folders.
func walkFiles(root, dir string, exts []string, fn func(rel string, data []byte) error) error {
	start := filepath.Join(root, dir)
	if _, err := os.Stat(start); err != nil {
		return nil // not in this revision
	}
	return filepath.WalkDir(start, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "target", "node_modules", "vendor", ".git", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		ok := false
		for _, e := range exts {
			ok = ok || strings.HasSuffix(p, e)
		}
		if !ok || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		return fn(filepath.ToSlash(rel), data)
	})
}

// lineOf is the 1-based line of byte offset off in data.
func lineOf(data []byte, off int) int {
	return strings.Count(string(data[:off]), "\n") + 1
}
