package notifier

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/internal/durable/durabletest"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// A restart on a storage path that cannot be written (a full tmpfs, a
// read-only one) starts and pages: the notification log and the silences
// load what is there and work in memory, every state file is reported
// failing (what PagedStateWriteFailing fires from), and a silence change
// answers 503 because it would not survive another restart. Once the disk
// can be written again the retry writes everything.
func TestStartOnUnwritableStoragePath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(*durabletest.Disk)
		mend   func(*durabletest.Disk)
		reason string
	}{
		{"full", (*durabletest.Disk).Fill, (*durabletest.Disk).Free, "no space left on device"},
		{"read-only", func(d *durabletest.Disk) { d.ReadOnly(true) }, func(d *durabletest.Disk) { d.ReadOnly(false) }, "read-only file system"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disk := durabletest.Mount(t, 4<<20)
			s := notifiertest.NewSlack(t, testToken)
			conf := slackBotConfig(s, "")

			// Before: one silence and one notified group on disk.
			n := start(t, conf, Options{StoragePath: disk.Dir})
			url := serveAPI(t, n.Notifier)
			code, body := apiDo(t, http.MethodPost, url+"/api/v2/silences", silenceBody("Maintenance", "set before the disk broke"))
			if code != http.StatusOK {
				t.Fatalf("POST silence: %d %s", code, body)
			}
			n.Notify(context.Background(), []*rules.Alert{firing("Before")})
			s.WaitCalls(t, 1, 10*time.Second)
			waitFor(t, func() bool { return nflogEntries(n.Notifier) == 1 })
			n.stop()

			tc.break_(disk)
			rep := durable.NewReporter(disk.Dir, nil, nil)
			n2, err := New(Options{Config: mustConfig(t, conf), StoragePath: disk.Dir, Reporter: rep, Logger: newTestLogger(&syncBuffer{})})
			if err != nil {
				t.Fatalf("New on a %s storage path: %v, want it to start", tc.name, err)
			}
			r2 := runNotifier(t, n2, &syncBuffer{})
			var failing []string
			for _, f := range rep.Failing() {
				failing = append(failing, f.File)
				if !strings.Contains(f.Err, tc.reason) {
					t.Errorf("%s failing with %q, want %q", f.File, f.Err, tc.reason)
				}
			}
			if got := strings.Join(failing, " "); got != "nflog silences slack-messages" {
				t.Errorf("files reported failing: %q, want nflog silences slack-messages", got)
			}
			if nflogEntries(n2) != 1 {
				t.Errorf("%d notification log entries loaded, want 1", nflogEntries(n2))
			}
			url2 := serveAPI(t, n2)
			_, list := apiDo(t, http.MethodGet, url2+"/api/v2/silences", "")
			contains(t, "silences after the restart", list, "set before the disk broke")

			// It pages, from memory.
			r2.Notify(context.Background(), []*rules.Alert{firing("During")})
			s.WaitCalls(t, 2, 10*time.Second)
			waitFor(t, func() bool { return nflogEntries(n2) == 2 })
			// A silence change is in effect but not acknowledged.
			code, body = apiDo(t, http.MethodPost, url2+"/api/v2/silences", silenceBody("During", "set while the disk is broken"))
			if code != http.StatusServiceUnavailable {
				t.Fatalf("POST silence on a %s disk: %d %s, want 503", tc.name, code, body)
			}
			contains(t, "503 answer", body, tc.reason)

			// The disk is mended: within a retry interval (5s) all is
			// written, and the silence answered 503 is on disk.
			tc.mend(disk)
			deadline := time.Now().Add(15 * time.Second)
			for len(rep.Failing()) > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if f := rep.Failing(); len(f) > 0 {
				t.Fatalf("still failing 15s after the disk was mended: %+v", f)
			}
			r2.stop()
			found := false
			for _, sil := range diskSilences(t, disk.Dir) {
				found = found || sil.Comment == "set while the disk is broken"
			}
			if !found {
				t.Error("the silence set while the disk was broken is not on disk after the retry")
			}
		})
	}
}
