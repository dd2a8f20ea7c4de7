package examples_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/notifier/notificationtest"
)

// TestNotificationTests runs the notification tests of
// examples/notifications against its paged.yaml, as
// `paged test --config examples/notifications/paged.yaml examples/notifications/`
// does: every route, inhibit rule and receiver of the routing tree.
func TestNotificationTests(t *testing.T) {
	dir := "notifications"
	cfg, err := config.Load(filepath.Join(dir, "paged.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	files, err := ruletest.ExpandPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cov := notificationtest.NewCoverage(cfg.NotifierConfig)
	res, err := ruletest.Run(context.Background(), ruletest.Options{
		Stdout: &stdout, Stderr: &stderr,
		Notifications: notificationtest.Runner(notificationtest.Options{
			Config: cfg.NotifierConfig, Coverage: cov,
			Render: cfg.RenderOptions(),
		}),
	}, files...)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("notification tests failed:\n%s", stderr.String())
	}
	n := 0
	for _, f := range res.Files {
		n += len(f.Groups)
	}
	if n < 12 {
		t.Errorf("%d notification tests ran, want at least 12", n)
	}
	// paged test --coverage: every route and inhibit rule exercised, every
	// receiver rendered.
	var out bytes.Buffer
	if err := cov.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if want := "Notification coverage: 5/5 routes reached, 2/2 inhibit rules inhibiting, 4/4 receivers rendered (100.0% of routes and inhibit rules)\n"; out.String() != want || cov.Percent() != 100 {
		t.Errorf("coverage:\n%s", out.String())
	}
}
