package engine_test

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
)

// reloadState stands in for the server's record of failed reloads.
type reloadState struct {
	mu      sync.Mutex
	f       engine.ReloadFailure
	failing bool
}

func (r *reloadState) set(f engine.ReloadFailure, failing bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f, r.failing = f, failing
}

func (r *reloadState) get() (engine.ReloadFailure, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.f, r.failing
}

// TestReloadFailedAlert: PagedReloadFailed fires at the check after a
// reload fails, with the start of its error, and resolves at the check
// after one succeeds.
func TestReloadFailedAlert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		file := writeFile(t, t.TempDir(), "queue.rules.yaml", queueRules)
		rec := &recorder{}
		rs := &reloadState{}
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir(), Notify: rec.notify, ReloadFailed: rs.get}, []string{file}, settings())
		defer e.stop()
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got := named(rec.take(), engine.ReloadFailedAlert); len(got) != 0 {
			t.Fatalf("PagedReloadFailed with no failed reload: %+v", got)
		}

		since := time.Now()
		var problems []string
		for i := range 25 {
			problems = append(problems, "rules/r.yaml:"+string(rune('a'+i))+": error")
		}
		rs.set(engine.ReloadFailure{File: "paged.yaml", Since: since, Err: "rules: previous rules kept: " + strings.Join(problems, "\n")}, true)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		got := named(rec.take(), engine.ReloadFailedAlert)
		if len(got) != 1 {
			t.Fatalf("PagedReloadFailed: %+v", got)
		}
		a := got[0]
		desc := a.Annotations.Get("description")
		switch {
		case a.Labels.Get("severity") != "critical" || a.Labels.Get("cluster") != "prod" || a.Labels.Has("file"):
			t.Errorf("labels %s", a.Labels)
		case a.Annotations.Get("runbook_url") != "paged/PagedReloadFailed":
			t.Errorf("runbook_url %q", a.Annotations.Get("runbook_url"))
		case !a.StartsAt.Equal(since) || a.Resolved(time.Now()):
			t.Errorf("startsAt %v (want %v), resolved %v", a.StartsAt, since, a.Resolved(time.Now()))
		case !strings.Contains(a.Annotations.Get("summary"), "paged.yaml"):
			t.Errorf("summary %q", a.Annotations.Get("summary"))
		case !strings.Contains(desc, "rules/r.yaml:j: error") || strings.Contains(desc, "rules/r.yaml:k: error") || !strings.Contains(desc, "… and 15 more line(s)"):
			t.Errorf("description does not quote the first ten lines of the error:\n%s", desc)
		}
		if b := e.BuiltinAlerts(); len(b) != 1 || b[0].Labels.Get("alertname") != engine.ReloadFailedAlert {
			t.Errorf("BuiltinAlerts = %+v", b)
		}

		rs.set(engine.ReloadFailure{}, false)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		got = named(rec.take(), engine.ReloadFailedAlert)
		if len(got) != 1 || !got[0].Resolved(time.Now()) {
			t.Fatalf("after a good reload: %+v", got)
		}
		if b := e.BuiltinAlerts(); len(b) != 0 {
			t.Errorf("BuiltinAlerts after a good reload = %+v", b)
		}
	})
}

// The quoted reload error stays within its bound whatever it holds: one
// huge line is cut where a character ends.
func TestClipLines(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"a\nb\nc", "a\nb\nc"},
		{"a\nb\nc\nd\n", "a\nb\nc\n… and 1 more line(s)"},
		{strings.Repeat("é", 8), "ééé…"},
		{"ab\n" + strings.Repeat("x", 10), "ab\n… and 1 more line(s)"},
	} {
		if got := engine.ClipLines(tc.in, 3, 7); got != tc.want {
			t.Errorf("ClipLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
