package notificationtest_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/notifier/notificationtest"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata")

func load(t *testing.T, path string) notificationtest.Options {
	t.Helper()
	cfg, err := config.Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return notificationtest.Options{Config: cfg.NotifierConfig, Render: cfg.RenderOptions()}
}

func runFiles(t *testing.T, opts notificationtest.Options, run []string, files ...string) (*ruletest.Result, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts.Stdout = &stdout
	res, err := ruletest.Run(context.Background(), ruletest.Options{
		Run: run, Stdout: &stdout, Stderr: &stderr, Notifications: notificationtest.Runner(opts),
	}, files...)
	if err != nil {
		t.Fatal(err)
	}
	return res, stdout.String(), stderr.String()
}

// TestPassing runs the notification tests that hold for testdata/paged.yaml:
// nested routes, continue, inhibition, a silence, a mute time interval,
// golden files and from_rule_test.
func TestPassing(t *testing.T) {
	opts := load(t, "testdata/paged.yaml")
	res, stdout, stderr := runFiles(t, opts, nil, "testdata/notifications.test.yaml")
	if res.Failed() {
		t.Fatalf("failed:\n%s", stderr)
	}
	if g := res.Files[0].Groups; len(g) != 8 {
		t.Errorf("%d tests ran, want 8", len(g))
	}
	if !strings.Contains(stdout, "SUCCESS") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestFailing: every exp_ key has a failing case, at its position, with a
// diff; hostile input fails at its positions and does not panic.
func TestFailing(t *testing.T) {
	opts := load(t, "testdata/paged.yaml")
	for _, file := range []string{"testdata/failing.test.yaml", "testdata/bad/hostile.test.yaml"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			res, _, stderr := runFiles(t, opts, nil, file)
			if !res.Failed() {
				t.Fatal("passed")
			}
			want := strings.TrimSuffix(file, ".test.yaml") + ".out"
			if *update {
				if err := os.WriteFile(want, []byte(stderr), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != stderr {
				t.Errorf("output differs from %s (go test -update rewrites it):\n%s", want, stderr)
			}
		})
	}
	// Every exp_ key fails somewhere in failing.test.yaml.
	b, err := os.ReadFile("testdata/failing.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"exp_receivers", "exp_group_labels", "exp_inhibited", "exp_muted", "exp_silenced", "exp_payloads"} {
		if !strings.Contains(string(b), "notification_test "+k+"\n") || !strings.Contains(string(b), "diff (- ") {
			t.Errorf("no failing case with a diff for %s", k)
		}
	}
}

// TestRunSelectsByName: --run selects notification tests by name.
func TestRunSelectsByName(t *testing.T) {
	opts := load(t, "testdata/paged.yaml")
	res, _, _ := runFiles(t, opts, []string{"^wrong group"}, "testdata/failing.test.yaml")
	g := res.Files[0].Groups
	if len(g) != 1 || g[0].Name != "wrong group labels" || len(g[0].Failures) != 1 {
		t.Errorf("groups: %+v", g)
	}
}

// TestUpdate writes a golden file, then the test passes against it; a
// changed alert then fails with a diff.
func TestUpdate(t *testing.T) {
	dir := t.TempDir()
	test := filepath.Join(dir, "n.test.yaml")
	os.WriteFile(test, []byte(`notification_tests:
  - name: golden
    alerts: [{labels: {alertname: PostgresDown, team: db}}]
    exp_payloads:
      db-webhook: {golden: out/db.json}
`), 0o644)
	opts := load(t, "testdata/paged.yaml")
	opts.Update = true
	res, stdout, stderr := runFiles(t, opts, nil, test)
	if res.Failed() || !strings.Contains(stdout, "updated "+filepath.Join(dir, "out/db.json")) {
		t.Fatalf("update: %s\n%s", stdout, stderr)
	}
	opts.Update = false
	if res, _, stderr := runFiles(t, opts, nil, test); res.Failed() {
		t.Fatalf("after update:\n%s", stderr)
	}
	b, _ := os.ReadFile(test)
	os.WriteFile(test, bytes.Replace(b, []byte("team: db}"), []byte("team: db, x: y}"), 1), 0o644)
	res, _, stderr = runFiles(t, opts, nil, test)
	if !res.Failed() || !strings.Contains(stderr, `+         "x": "y"`) {
		t.Errorf("want a diff:\n%s", stderr)
	}
}

// TestCoverage: the routes, inhibit rules and receivers no test exercises
// are listed.
func TestCoverage(t *testing.T) {
	opts := load(t, "testdata/paged.yaml")
	opts.Coverage = notificationtest.NewCoverage(opts.Config)
	if res, _, stderr := runFiles(t, opts, nil, "testdata/notifications.test.yaml"); res.Failed() {
		t.Fatal(stderr)
	}
	var b bytes.Buffer
	if err := opts.Coverage.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "Notification coverage: 5/6 routes reached, 1/1 inhibit rules inhibiting, 3/4 receivers rendered (85.7% of routes and inhibit rules)\n" +
		"  route not reached: {} -> default-webhook\n" +
		"  receiver never rendered: default-webhook\n"
	if b.String() != want {
		t.Errorf("coverage:\n%s\nwant:\n%s", b.String(), want)
	}
}
