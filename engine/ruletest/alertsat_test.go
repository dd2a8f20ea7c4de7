package ruletest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/engine/ruletest"
)

// TestNotificationTestsNeedARunner: a file with notification_tests fails at
// the key's position when no runner is given, and the runner gets the
// file and the --run filter when one is.
func TestNotificationTestsNeedARunner(t *testing.T) {
	path := "testdata/notifications.test.yaml"
	res, _, stderr := run(t, ruletest.Options{}, path)
	if !res.Failed() || !strings.Contains(stderr, path+":7:1: notification_tests\n    notification_tests need the notifier configuration") {
		t.Errorf("want a failure at 7:1, got:\n%s", stderr)
	}
	var names []string
	opts := ruletest.Options{Run: []string{"kv|read"}, Notifications: func(_ context.Context, f *ruletest.File, match func(string) bool) []*ruletest.GroupResult {
		if f.NotificationTests == nil || f.NotificationsPos.Line != 7 {
			t.Errorf("file without its notification_tests: %+v", f)
		}
		names = append(names, "called")
		return []*ruletest.GroupResult{{Name: "n1", Failures: []ruletest.Failure{{Pos: ruletest.Pos{Path: path, Line: 8, Col: 5}, Kind: "notification_test", Message: "    boom"}}}}
	}}
	res, _, stderr = run(t, opts, path)
	if len(names) != 1 || !res.Failed() || !strings.Contains(stderr, path+":8:5: notification_test\n    boom") {
		t.Errorf("runner not used: %v\n%s", names, stderr)
	}
	if g := res.Files[0].Groups; len(g) != 2 || g[1].Name != "n1" {
		t.Errorf("groups: %+v", g)
	}
}

func TestAlertsAt(t *testing.T) {
	path := "testdata/coverage.test.yaml"
	got, err := ruletest.AlertsAt(context.Background(), ruletest.Options{}, path, "kv cache fires after 5m and is pending before", 6*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Labels.String() != `{alertname="KVCacheFull", job="vllm", severity="warning"}` ||
		got[0].Annotations.Get("summary") != "KV cache at 0.95" || !got[0].FiredAt.Equal(time.Unix(300, 0)) {
		t.Fatalf("got %+v", got)
	}
	pending, err := ruletest.AlertsAt(context.Background(), ruletest.Options{}, path, "kv cache fires after 5m and is pending before", 2*time.Minute)
	if err != nil || len(pending) != 0 {
		t.Errorf("at 2m (pending): %v %v", pending, err)
	}
	all, err := ruletest.AlertsAt(context.Background(), ruletest.Options{}, path, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range all {
		names = append(names, a.Labels.Get("alertname"))
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"QueueBacklog"}) { // KVCacheFull is pending at 0
		t.Errorf("all groups: %v", names)
	}
	if _, err := ruletest.AlertsAt(context.Background(), ruletest.Options{}, path, "no such group", time.Minute); err == nil || !strings.Contains(err.Error(), `no test group named "no such group"`) {
		t.Errorf("unknown group: %v", err)
	}
}
