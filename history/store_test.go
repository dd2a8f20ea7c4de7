package history

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/internal/durable"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func open(t *testing.T, o Options) *Store {
	t.Helper()
	if o.Path == "" {
		o.Path = filepath.Join(t.TempDir(), FileName)
	}
	if o.BatchInterval == 0 {
		o.BatchInterval = time.Hour // commits come from Flush and BatchSize only
	}
	if o.PruneInterval == 0 {
		o.PruneInterval = 1000 * time.Hour
	}
	if o.Now == nil {
		o.Now = func() time.Time { return t0 }
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sets(ms ...*labels.Matcher) [][]*labels.Matcher { return [][]*labels.Matcher{ms} }

func flush(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func query(t *testing.T, s *Store, q Query) Page {
	t.Helper()
	p, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func kinds(evs []Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type+":"+e.Alertname)
	}
	return strings.Join(out, " ")
}

func alert(ty, name, instance string, at time.Time) Event {
	return Event{Time: at, Type: ty, Labels: map[string]string{"alertname": name, "instance": instance},
		Details: Details(map[string]any{"value": 0.93})}
}

func TestRecordAndQuery(t *testing.T) {
	s := open(t, Options{})
	s.Record(
		alert(TypeFiring, "KV", "a", t0.Add(2*time.Minute)),
		alert(TypePending, "KV", "a", t0),
		alert(TypePending, "Queue", "b", t0.Add(time.Minute)),
		Event{Time: t0.Add(3 * time.Minute), Type: TypeNotification, Labels: map[string]string{"alertname": "KV"},
			Receiver: "oncall", Integration: "slack", Outcome: OutcomeSent, Details: Details(map[string]string{"slack_ts": "1.2"})},
		Event{Time: t0.Add(4 * time.Minute), Type: TypeReload, Outcome: OutcomeSuccess},
	)
	flush(t, s)

	all := query(t, s, Query{})
	if got, want := kinds(all.Events), "pending:KV pending:Queue firing:KV notification:KV reload:"; got != want {
		t.Fatalf("events = %q, want %q (oldest first)", got, want)
	}
	first := all.Events[0]
	if first.Fingerprint != Fingerprint(map[string]string{"alertname": "KV", "instance": "a"}) || first.Labels["instance"] != "a" {
		t.Errorf("first event = %+v", first)
	}
	var d map[string]float64
	if err := json.Unmarshal(first.Details, &d); err != nil || d["value"] != 0.93 {
		t.Errorf("details = %s, %v", first.Details, err)
	}
	if n := all.Events[3]; n.Receiver != "oncall" || n.Integration != "slack" || n.Outcome != OutcomeSent || n.Fingerprint != "" {
		t.Errorf("notification = %+v", n)
	}

	for name, c := range map[string]struct {
		q    Query
		want string
	}{
		"alertname": {Query{Alertname: "KV"}, "pending:KV firing:KV notification:KV"},
		"matcher":   {Query{Matchers: sets(labels.MustNewMatcher(labels.MatchRegexp, "instance", "a|b"))}, "pending:KV pending:Queue firing:KV"},
		"name matcher and type": {Query{Matchers: sets(labels.MustNewMatcher(labels.MatchEqual, "alertname", "KV")),
			Types: []string{TypeFiring, TypeNotification}}, "firing:KV notification:KV"},
		"two names":  {Query{Alertname: "Queue", Matchers: sets(labels.MustNewMatcher(labels.MatchEqual, "alertname", "KV"))}, ""},
		"time range": {Query{Start: t0.Add(time.Minute), End: t0.Add(3 * time.Minute)}, "pending:Queue firing:KV notification:KV"},
		"not equal":  {Query{Matchers: sets(labels.MustNewMatcher(labels.MatchNotEqual, "instance", "a"))}, "pending:Queue notification:KV reload:"},
		"either set": {Query{Matchers: [][]*labels.Matcher{{labels.MustNewMatcher(labels.MatchEqual, "alertname", "Queue")},
			{labels.MustNewMatcher(labels.MatchEqual, "instance", "a"), labels.MustNewMatcher(labels.MatchEqual, "alertname", "KV")}}},
			"pending:KV pending:Queue firing:KV"},
	} {
		if got := kinds(query(t, s, c.q).Events); got != c.want {
			t.Errorf("%s: events = %q, want %q", name, got, c.want)
		}
	}
}

func TestQueryPages(t *testing.T) {
	s := open(t, Options{})
	for i := range 7 {
		s.Record(alert(TypeFiring, fmt.Sprintf("A%d", i), "x", t0.Add(time.Duration(i/2)*time.Second))) // times repeat
	}
	flush(t, s)
	for _, matcher := range []bool{false, true} {
		q := Query{Limit: 3}
		if matcher {
			q.Matchers = sets(labels.MustNewMatcher(labels.MatchEqual, "instance", "x"))
		}
		var got []string
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("cursor does not advance")
			}
			p := query(t, s, q)
			for _, e := range p.Events {
				got = append(got, e.Alertname)
			}
			if p.Next == "" {
				break
			}
			q.Cursor = p.Next
		}
		if strings.Join(got, ",") != "A0,A1,A2,A3,A4,A5,A6" {
			t.Errorf("matcher %v: pages gave %v", matcher, got)
		}
	}
	if _, err := s.Query(context.Background(), Query{Cursor: "not-a-cursor"}); err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("bad cursor: err = %v", err)
	}
}

// Events recorded before a Flush share its commit; a full batch commits
// without one.
func TestBatching(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := open(t, Options{BatchSize: 10, Registerer: reg})
	commits := func() float64 { return testutil.ToFloat64(s.metrics.commits) }
	for i := range 5 {
		s.Record(alert(TypeFiring, "A", fmt.Sprint(i), t0))
	}
	if got := len(query(t, s, Query{}).Events); got != 0 {
		t.Fatalf("%d events committed before the batch was full or flushed", got)
	}
	flush(t, s)
	if got := commits(); got != 1 {
		t.Errorf("5 events and a flush: %v commits, want 1", got)
	}
	flush(t, s)
	if got := commits(); got != 1 {
		t.Errorf("a flush with nothing queued committed: %v commits", got)
	}
	batch := make([]Event, 25)
	for i := range batch {
		batch[i] = alert(TypeResolved, "B", fmt.Sprint(i), t0)
	}
	s.Record(batch...)
	flush(t, s)
	if got := commits(); got != 2 {
		t.Errorf("25 events recorded at once: %v commits in all, want 2", got)
	}
	if got := len(query(t, s, Query{}).Events); got != 30 {
		t.Errorf("%d events, want 30", got)
	}
	if got := testutil.ToFloat64(s.metrics.events); got != 30 {
		t.Errorf("paged_history_events_total = %v", got)
	}
}

func TestQueueBoundDropsOldest(t *testing.T) {
	s := open(t, Options{BatchSize: 1000, QueueSize: 1000})
	s.mu.Lock() // hold the writer off the queue
	for i := range 1500 {
		s.queue = append(s.queue, alert(TypeFiring, "A", fmt.Sprint(i), t0))
	}
	s.mu.Unlock()
	s.Record(alert(TypeFiring, "A", "last", t0))
	flush(t, s)
	evs := query(t, s, Query{}).Events
	if len(evs) != 1000 || evs[0].Labels["instance"] != "501" || evs[999].Labels["instance"] != "last" {
		t.Fatalf("kept %d events from %v to %v, want the newest 1000", len(evs), evs[0].Labels, evs[len(evs)-1].Labels)
	}
	if got := testutil.ToFloat64(s.metrics.dropped); got != 501 {
		t.Errorf("dropped = %v, want 501", got)
	}
}

func TestRetention(t *testing.T) {
	s := open(t, Options{Retention: time.Hour})
	s.Record(
		alert(TypeFiring, "Old", "a", t0.Add(-3*time.Hour)),
		alert(TypeResolved, "Old", "a", t0.Add(-61*time.Minute)),
		alert(TypeFiring, "New", "a", t0.Add(-59*time.Minute)),
		alert(TypeResolved, "New", "a", t0),
	)
	flush(t, s)
	s.prune(t0)
	if got := kinds(query(t, s, Query{}).Events); got != "firing:New resolved:New" {
		t.Errorf("after retention: %q", got)
	}
	if got := testutil.ToFloat64(s.metrics.pruned.WithLabelValues("retention")); got != 2 {
		t.Errorf("pruned by retention = %v", got)
	}
	// Everything is old: the newest event stays.
	s.prune(t0.Add(48 * time.Hour))
	if got := kinds(query(t, s, Query{}).Events); got != "resolved:New" {
		t.Errorf("all old: %q, want the newest kept", got)
	}
}

func TestSizeBound(t *testing.T) {
	const max = 1 << 20
	s := open(t, Options{MaxBytes: max, BatchSize: 1000})
	pad := strings.Repeat("x", 400)
	const n = 6000 // about 3 MiB
	for i := range n {
		e := alert(TypeFiring, "A", fmt.Sprint(i), t0.Add(time.Duration(i)*time.Second))
		e.Details = Details(map[string]string{"pad": pad})
		s.Record(e)
	}
	flush(t, s)
	s.prune(t0.Add(n * time.Second))
	used, err := s.usedBytes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if used > max {
		t.Errorf("data takes %d bytes after pruning, bound %d", used, max)
	}
	evs := query(t, s, Query{}).Events
	if len(evs) == 0 || len(evs) > n/2 {
		t.Fatalf("%d events kept of %d", len(evs), n)
	}
	if last := evs[len(evs)-1].Labels["instance"]; last != fmt.Sprint(n-1) {
		t.Errorf("newest event kept is %s, want %d", last, n-1)
	}
	for i, e := range evs { // oldest deleted first: what is left is the newest, without gaps
		if want := fmt.Sprint(n - len(evs) + i); e.Labels["instance"] != want {
			t.Fatalf("event %d is instance %s, want %s", i, e.Labels["instance"], want)
		}
	}
	fi, err := os.Stat(s.opts.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > max+64<<10 {
		t.Errorf("file is %d bytes after pruning: freed pages were not given back", fi.Size())
	}
	if got := testutil.ToFloat64(s.metrics.pruned.WithLabelValues("size")); got != float64(n-len(evs)) {
		t.Errorf("pruned by size = %v, want %d", got, n-len(evs))
	}
}

func TestDamagedFileMovedAside(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"not a database": func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("this is not SQLite\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"pages overwritten": func(t *testing.T, path string) {
			s := open(t, Options{Path: path})
			for i := range 3000 {
				s.Record(alert(TypeFiring, "A", fmt.Sprint(i), t0))
			}
			flush(t, s)
			s.Close()
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			if fi.Size() < 64<<10 {
				t.Fatalf("file is only %d bytes", fi.Size())
			}
			junk := []byte(strings.Repeat("\xff\x00garbage", 8192))
			if _, err := f.WriteAt(junk, 8192); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			damage(t, path)
			rep := durable.NewReporter(dir, nil, prometheus.NewRegistry())
			s := open(t, Options{Path: path, Reporter: rep})
			moved := rep.MovedAside(time.Time{})
			if len(moved) == 0 || moved[0].File != FileName || !strings.HasPrefix(moved[0].MovedTo, FileName+durable.CorruptSuffix) {
				t.Fatalf("moved aside: %+v", moved)
			}
			if got := testutil.ToFloat64(s.metrics.corruptions); got != 1 {
				t.Errorf("paged_history_corruptions_total = %v", got)
			}
			s.Record(alert(TypeFiring, "After", "a", t0))
			flush(t, s)
			if got := kinds(query(t, s, Query{}).Events); got != "firing:After" {
				t.Errorf("new file holds %q", got)
			}
		})
	}
}

// A write that fails keeps the events and writes them once it can, trying
// again every RetryInterval; meanwhile a Flush hears of the failure at
// once.
func TestWriteFailureRetried(t *testing.T) {
	dir := t.TempDir()
	rep := durable.NewReporter(dir, nil, nil)
	s := open(t, Options{Path: filepath.Join(dir, FileName), Reporter: rep, RetryInterval: 2 * time.Second})
	if _, err := s.db.Exec("CREATE TRIGGER refuse BEFORE INSERT ON events BEGIN SELECT RAISE(FAIL, 'disk says no'); END"); err != nil {
		t.Fatal(err)
	}
	s.Record(alert(TypeFiring, "A", "a", t0))
	if err := s.Flush(context.Background()); err == nil || !strings.Contains(err.Error(), "disk says no") {
		t.Fatalf("flush err = %v", err)
	}
	if f := rep.Failing(); len(f) != 1 || f[0].File != FileName {
		t.Errorf("failing = %+v", f)
	}
	if _, err := s.db.Exec("DROP TRIGGER refuse"); err != nil {
		t.Fatal(err)
	}
	// Within the interval: not tried again, the failure answered.
	if err := s.Flush(context.Background()); err == nil || !strings.Contains(err.Error(), "disk says no") {
		t.Fatalf("flush within the retry interval: err = %v, want the last failure", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.Flush(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the write was not tried again")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := kinds(query(t, s, Query{}).Events); got != "firing:A" {
		t.Errorf("after the retry: %q", got)
	}
	if f := rep.Failing(); len(f) != 0 {
		t.Errorf("still failing: %+v", f)
	}
}

func TestNilStore(t *testing.T) {
	var s *Store
	s.Record(alert(TypeFiring, "A", "a", t0))
	if err := s.Flush(context.Background()); err != nil {
		t.Error(err)
	}
	if p, err := s.Query(context.Background(), Query{}); err != nil || len(p.Events) != 0 {
		t.Error(p, err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

func TestReadOnlyBesideWriter(t *testing.T) {
	s := open(t, Options{})
	s.Record(alert(TypeFiring, "A", "a", t0))
	flush(t, s)
	r, err := OpenReadOnly(s.opts.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := kinds(query(t, r, Query{}).Events); got != "firing:A" {
		t.Errorf("read-only: %q", got)
	}
	r.Record(alert(TypeFiring, "B", "b", t0)) // ignored
	if err := r.Flush(context.Background()); err != nil {
		t.Error(err)
	}
	if _, err := OpenReadOnly(filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("a missing file opened")
	}
}

// The child process of TestKillAfterFlush: it commits events, says so,
// queues more and waits to be killed.
func TestMain(m *testing.M) {
	if path := os.Getenv("PAGED_HISTORY_CHILD"); path != "" {
		// The clock of the events: with the machine's, retention would
		// prune them at the first commit.
		s, err := Open(Options{Path: path, BatchInterval: time.Hour, PruneInterval: time.Hour, Now: func() time.Time { return t0 }})
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(2)
		}
		for i := range 500 {
			s.Record(alert(TypeFiring, "Flushed", fmt.Sprint(i), t0.Add(time.Duration(i)*time.Millisecond)))
		}
		if err := s.Flush(context.Background()); err != nil {
			fmt.Println("flush:", err)
			os.Exit(2)
		}
		s.Record(alert(TypeFiring, "Queued", "q", t0))
		fmt.Println("flushed")
		select {}
	}
	os.Exit(m.Run())
}

func TestKillAfterFlush(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PAGED_HISTORY_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "flushed" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q", line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("the killed writer left no WAL: %v", err)
	}

	s := open(t, Options{Path: path})
	evs := query(t, s, Query{Alertname: "Flushed"}).Events
	if len(evs) != 500 {
		t.Fatalf("%d flushed events after kill -9, want 500", len(evs))
	}
	seen := map[string]bool{}
	for _, e := range evs {
		if seen[e.Labels["instance"]] {
			t.Fatalf("event %s twice", e.Labels["instance"])
		}
		seen[e.Labels["instance"]] = true
	}
	// The file is whole: an integrity check passes.
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
}

func TestAutoVacuumSet(t *testing.T) {
	s := open(t, Options{})
	var mode int
	if err := s.db.QueryRow("PRAGMA auto_vacuum").Scan(&mode); err != nil || mode != 2 {
		t.Errorf("auto_vacuum = %d, %v; want 2 (incremental)", mode, err)
	}
}

// Each label set is written once, whatever the number of its events; an
// event reads back its alert's fingerprint and labels, or its own labels
// when they are not one alert's (a notification of several).
func TestSeries(t *testing.T) {
	s := open(t, Options{})
	ls := map[string]string{"alertname": "KV", "instance": "a"}
	fp := Fingerprint(ls)
	other := Fingerprint(map[string]string{"alertname": "KV", "instance": "b"})
	s.Record(
		alert(TypePending, "KV", "a", t0),
		alert(TypeFiring, "KV", "a", t0.Add(time.Second)),
		Event{Time: t0.Add(2 * time.Second), Type: TypeNotification, Labels: ls, Fingerprint: fp, GroupKey: "g", Outcome: OutcomeSent},
		Event{Time: t0.Add(3 * time.Second), Type: TypeNotification, Labels: map[string]string{"alertname": "KV"}, GroupKey: "g", Outcome: OutcomeSent},
		Event{Time: t0.Add(4 * time.Second), Type: TypeStale, Fingerprint: fp},    // its fingerprint alone
		Event{Time: t0.Add(5 * time.Second), Type: TypeStale, Fingerprint: other}, // not known yet
		Event{Time: t0.Add(6 * time.Second), Type: TypeFiring, Fingerprint: "not hex", Labels: map[string]string{"alertname": "X"}},
	)
	flush(t, s)
	var series int
	if err := s.db.QueryRow("SELECT count(*) FROM series").Scan(&series); err != nil || series != 4 {
		t.Errorf("%d series, want 4 (KV a, KV, KV b by its fingerprint, X): %v", series, err)
	}
	got := func() string {
		var out []string
		for _, e := range query(t, s, Query{}).Events {
			out = append(out, fmt.Sprintf("%s:%s:%s:%s", e.Type, e.Alertname, e.Fingerprint, e.Labels["instance"]))
		}
		return strings.Join(out, " ")
	}
	want := "pending:KV:" + fp + ":a firing:KV:" + fp + ":a notification:KV:" + fp + ":a notification:KV:: stale:KV:" + fp + ":a stale::" + other + ": firing:X::"
	if g := got(); g != want {
		t.Errorf("events:\n%s\nwant\n%s", g, want)
	}
	// The labels of an alert known by its fingerprint until now.
	s.Record(alert(TypeFiring, "KV", "b", t0.Add(7*time.Second)))
	flush(t, s)
	want = strings.Replace(want, "stale::"+other+":", "stale:KV:"+other+":b", 1) + " firing:KV:" + other + ":b"
	if g := got(); g != want {
		t.Errorf("after the labels of %s:\n%s\nwant\n%s", other, g, want)
	}
	if g := kinds(query(t, s, Query{Fingerprint: fp}).Events); g != "pending:KV firing:KV notification:KV stale:KV" {
		t.Errorf("one alert's events: %q", g)
	}
	p := query(t, s, Query{Alertname: "KV", NoLabels: true, Types: []string{TypeFiring}})
	if len(p.Events) != 2 || p.Events[0].Labels != nil || p.Events[0].Fingerprint != fp {
		t.Errorf("NoLabels: %+v", p.Events)
	}
	// What a reader is given is its own.
	p = query(t, s, Query{Fingerprint: fp, Limit: 1})
	p.Events[0].Labels["instance"] = "changed"
	if g := query(t, s, Query{Fingerprint: fp, Limit: 1}).Events[0].Labels["instance"]; g != "a" {
		t.Errorf("a reader's change reached the store: %q", g)
	}
}

// Series and names no event refers to any more are deleted with the
// events; their ids are not given again.
func TestSweep(t *testing.T) {
	now := t0.Add(-time.Hour) // the writer's first prune deletes nothing
	s := open(t, Options{Retention: time.Hour, Now: func() time.Time { return now }})
	old := alert(TypeFiring, "Old", "a", t0.Add(-2*time.Hour))
	s.Record(old,
		notification("g-old", "oncall", "slack", OutcomeSent, t0.Add(-2*time.Hour), "", notifiedAlert{"00000000000000a1", "Old", "firing"}),
		alert(TypeFiring, "New", "a", t0),
		notification("g-new", "oncall", "slack", OutcomeSent, t0, "", notifiedAlert{"00000000000000a2", "New", "firing"}))
	flush(t, s)
	count := func(table string) int {
		var n int
		if err := s.db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	series, names := count("series"), count("names")
	s.prune(t0)
	if got := kinds(query(t, s, Query{}).Events); got != "firing:New notification:New" {
		t.Fatalf("after retention: %q", got)
	}
	if got := count("series"); got != series-2 {
		t.Errorf("%d series left of %d, want the 2 of Old gone", got, series)
	}
	if got := count("names"); got != names-2 {
		t.Errorf("%d names left of %d, want g-old and Old's alert names gone", got, names)
	}
	if got := count("notices"); got != 1 {
		t.Errorf("%d notices left, want New's", got)
	}
	s.Record(old)
	flush(t, s)
	var maxID, oldID int64
	if err := s.db.QueryRow("SELECT max(id) FROM series").Scan(&maxID); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRow("SELECT id FROM series WHERE alertname = 'Old'").Scan(&oldID); err != nil || oldID != maxID || oldID <= int64(series) {
		t.Errorf("Old's series again: id %d (max %d, %d before), %v", oldID, maxID, series, err)
	}
	if got := kinds(query(t, s, Query{Alertname: "Old"}).Events); got != "firing:Old" {
		t.Errorf("Old again: %q", got)
	}
}

// After a restart the writer does not know which series the events in
// the file refer to: it deletes none of them before every event written
// before the restart is gone.
func TestSweepAfterReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	clock := func() time.Time { return t0.Add(-3 * time.Hour) } // the writers' own pruning deletes nothing
	s := open(t, Options{Path: path, Retention: time.Hour, Now: clock})
	s.Record(alert(TypeFiring, "A", "a", t0.Add(-3*time.Hour)), alert(TypeFiring, "B", "b", t0.Add(-2*time.Hour)))
	flush(t, s)
	s.Close()
	s = open(t, Options{Path: path, Retention: time.Hour, Now: clock})
	s.Record(alert(TypeFiring, "C", "c", t0))
	flush(t, s)
	names := func() string {
		rows, err := s.db.Query("SELECT alertname FROM series ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return strings.Join(out, " ")
	}
	s.prune(t0.Add(-90 * time.Minute)) // A's event goes, B's stays
	if got := names(); got != "A B C" {
		t.Errorf("series after A's event went: %q; A's may still be in use as far as the writer knows", got)
	}
	s.prune(t0) // B's goes too
	if got := names(); got != "C" {
		t.Errorf("series after B's event went: %q", got)
	}
}
