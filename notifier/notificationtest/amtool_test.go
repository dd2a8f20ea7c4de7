package notificationtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	amconfig "github.com/prometheus/alertmanager/config"
	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/notifier/notificationtest"
)

// TestReceiversMatchAmtool is the differential test of routing: for the
// Alertmanager configurations of the corpus and the notifier blocks of the
// paged.yaml files with notification tests, the receivers paged computes
// for a label set (what exp_receivers compares) equal what Debian's
// `amtool config routes test` (Alertmanager 0.25) answers with the same
// route:, for label sets made to reach every route and for the alerts of
// every notification test; and every exp_receivers of those tests equals
// amtool's answer. A configuration amtool 0.25 cannot load is left out and
// counted.
func TestReceiversMatchAmtool(t *testing.T) {
	amtool := testbin.Require(t, "amtool")
	shared := testbin.SharedDir(t)
	root := testbin.RepoRoot(t)

	type source struct {
		name  string
		block map[string]any   // route, time intervals, receiver names
		tests []string         // notification test files
		conf  *notifier.Config // paged's view
	}
	var sources []source
	corpus, _ := filepath.Glob(filepath.Join(shared, "corpus", "prometheus-alertmanager", "config", "testdata", "conf.*.yml"))
	doc, _ := filepath.Glob(filepath.Join(shared, "corpus", "prometheus-alertmanager", "doc", "examples", "*.yml"))
	corpus = append(corpus, doc...)
	if len(corpus) < 9 {
		t.Fatalf("found %d Alertmanager configurations in the corpus, want at least 9", len(corpus))
	}
	for _, f := range corpus {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sources = append(sources, source{name: strings.TrimPrefix(f, shared+"/"), block: m})
	}
	pagedConfs, _ := filepath.Glob(filepath.Join(root, "examples", "*", "paged.yaml"))
	pagedConfs = append(pagedConfs, filepath.Join(root, "notifier", "notificationtest", "testdata", "paged.yaml"))
	for _, f := range pagedConfs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Notifier map[string]any `yaml:"notifier"`
		}
		if err := yaml.Unmarshal(b, &m); err != nil || m.Notifier == nil {
			t.Fatalf("%s: no notifier block (%v)", f, err)
		}
		tests, _ := filepath.Glob(filepath.Join(filepath.Dir(f), "*.test.yaml"))
		// failing.test.yaml's expectations are wrong on purpose.
		tests = slices.DeleteFunc(tests, func(p string) bool { return strings.HasPrefix(filepath.Base(p), "failing") })
		sources = append(sources, source{name: strings.TrimPrefix(f, root+"/"), block: m.Notifier, tests: tests})
	}

	dir := t.TempDir()
	rejected, compared := 0, 0
	for i, s := range sources {
		// The same route and time intervals; receivers by name only, as
		// amtool 0.25 knows none of paged's receiver types.
		am := map[string]any{"route": s.block["route"]}
		for _, k := range []string{"time_intervals", "mute_time_intervals"} {
			if v, ok := s.block[k]; ok {
				am[k] = v
			}
		}
		var names []map[string]any
		if rs, ok := s.block["receivers"].([]any); ok {
			for _, r := range rs {
				if rm, ok := r.(map[string]any); ok {
					names = append(names, map[string]any{"name": rm["name"]})
				}
			}
		}
		am["receivers"] = names
		text, err := yaml.Marshal(am)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, fmt.Sprintf("am%d.yml", i))
		if err := os.WriteFile(file, text, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(amtool, "check-config", file).CombinedOutput(); err != nil {
			t.Logf("%s: amtool 0.25 rejects the route: %s", s.name, firstLine(out))
			rejected++
			continue
		}
		conf, err := notifier.ParseConfig(text)
		if err != nil {
			t.Errorf("%s: paged rejects a route amtool accepts: %v\n%s", s.name, err, text)
			continue
		}
		sets := labelSets(conf.Alertmanager().Route)
		expect := map[string][]string{} // label set -> exp_receivers
		for _, tf := range s.tests {
			for _, c := range testCases(t, tf) {
				sets = append(sets, c.labels)
				if c.exp != nil {
					expect[c.labels.String()] = c.exp
				}
			}
		}
		for _, ls := range sets {
			want := amtoolRoutes(t, amtool, file, ls)
			got, err := notificationtest.Receivers(context.Background(), conf, ls)
			if err != nil {
				t.Fatal(err)
			}
			compared++
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s: paged routes to %v, amtool 0.25 to %v", s.name, ls, got, want)
			}
			if exp, ok := expect[ls.String()]; ok && !slices.Equal(exp, want) {
				t.Errorf("%s: %s: the notification test expects %v, amtool 0.25 answers %v", s.name, ls, exp, want)
			}
		}
	}
	t.Logf("%d configurations, %d rejected by amtool 0.25, %d label sets compared", len(sources), rejected, compared)
	if compared < 20 {
		t.Errorf("only %d label sets compared", compared)
	}
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// amtoolRoutes asks amtool for the receivers of ls.
func amtoolRoutes(t *testing.T, amtool, file string, ls model.LabelSet) []string {
	t.Helper()
	args := []string{"config", "routes", "test", "--config.file=" + file}
	names := make([]string, 0, len(ls))
	for k := range ls {
		names = append(names, string(k))
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, fmt.Sprintf("%s=%q", k, string(ls[model.LabelName(k)])))
	}
	cmd := exec.Command(amtool, args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("amtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

type testCase struct {
	labels model.LabelSet
	exp    []string // nil: the test has no exp_receivers or several alerts
}

// testCases are the alerts of a file's notification tests.
func testCases(t *testing.T, path string) []testCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, errs := ruletest.Parse(path, b)
	if len(errs) > 0 || f.NotificationTests == nil {
		return nil
	}
	tests, _, _ := notificationtest.Parse(path, f.NotificationTests)
	var out []testCase
	for _, nt := range tests {
		for _, a := range append(slices.Clone(nt.Alerts), nt.AlsoFiring...) {
			ls := model.LabelSet{}
			for k, v := range a.Labels {
				ls[model.LabelName(k)] = model.LabelValue(v)
			}
			c := testCase{labels: ls}
			if nt.ExpReceivers != nil && len(nt.Alerts) == 1 && slices.ContainsFunc(nt.Alerts, func(x notificationtest.Alert) bool { return x.Pos == a.Pos }) {
				c.exp = nt.ExpReceivers.Value
			}
			out = append(out, c)
		}
	}
	return out
}

var literalAlternation = regexp.MustCompile(`^\(?([A-Za-z0-9_:.\- ]+)(\|[A-Za-z0-9_:.\- |]+)?\)?$`)

// labelSets makes, for every route, a label set that satisfies the
// matchers on its path from the root (equality, and regular expressions
// that are alternations of literals), and one with the route's own
// matchers only, plus one that matches no route.
func labelSets(root *amconfig.Route) []model.LabelSet {
	out := []model.LabelSet{{"alertname": "NoRouteMatches"}}
	var walk func(r *amconfig.Route, path []*amlabels.Matcher)
	walk = func(r *amconfig.Route, path []*amlabels.Matcher) {
		own := routeMatchers(r)
		full := append(slices.Clone(path), own...)
		for _, ms := range [][]*amlabels.Matcher{full, own} {
			if ls, ok := satisfy(ms); ok {
				out = append(out, ls)
			}
		}
		for _, c := range r.Routes {
			walk(c, full)
		}
	}
	walk(root, nil)
	return out
}

func routeMatchers(r *amconfig.Route) []*amlabels.Matcher {
	var ms []*amlabels.Matcher
	for k, v := range r.Match {
		ms = append(ms, &amlabels.Matcher{Type: amlabels.MatchEqual, Name: k, Value: v})
	}
	for k, v := range r.MatchRE {
		ms = append(ms, &amlabels.Matcher{Type: amlabels.MatchRegexp, Name: k, Value: v.String()})
	}
	ms = append(ms, r.Matchers...)
	return ms
}

func satisfy(ms []*amlabels.Matcher) (model.LabelSet, bool) {
	ls := model.LabelSet{"alertname": "Differential"}
	for _, m := range ms {
		switch m.Type {
		case amlabels.MatchEqual:
			ls[model.LabelName(m.Name)] = model.LabelValue(m.Value)
		case amlabels.MatchRegexp:
			g := literalAlternation.FindStringSubmatch(m.Value)
			if g == nil {
				return nil, false
			}
			ls[model.LabelName(m.Name)] = model.LabelValue(g[1])
		}
	}
	for _, m := range ms {
		if !m.Matches(string(ls[model.LabelName(m.Name)])) {
			return nil, false
		}
	}
	return ls, true
}
