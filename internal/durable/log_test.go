package durable

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/internal/testbin"
)

// kv is a test state: records "set k v" and "del k"; the snapshot is the
// sorted "k v" pairs, framed.
type kv struct {
	mu sync.Mutex
	m  map[string]string
}

func newKV() *kv { return &kv{m: map[string]string{}} }

func (s *kv) apply(rec []byte) error {
	f := strings.SplitN(string(rec), " ", 3)
	switch {
	case len(f) == 3 && f[0] == "set":
		s.m[f[1]] = f[2]
	case len(f) == 2 && f[0] == "del":
		delete(s.m, f[1])
	default:
		return fmt.Errorf("bad record %q", rec)
	}
	return nil
}

func (s *kv) options(path string, rep *Reporter) Options {
	return Options{
		Path: path,
		Load: func(r io.Reader) error {
			return ReadFrames(r, func(rec []byte) error {
				k, v, ok := strings.Cut(string(rec), " ")
				if !ok {
					return fmt.Errorf("bad pair %q", rec)
				}
				s.m[k] = v
				return nil
			})
		},
		Replay: s.apply,
		Snapshot: func(w io.Writer) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			keys := make([]string, 0, len(s.m))
			for k := range s.m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b []byte
			for _, k := range keys {
				b = AppendFrame(b, []byte(k+" "+s.m[k]))
			}
			_, err := w.Write(b)
			return err
		},
		Reporter:      rep,
		RetryInterval: time.Hour, // tests call Compact themselves
	}
}

// set applies and appends, as a caller must: memory first, then the log.
func (s *kv) set(l *Log, k, v string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
	return l.Append([]byte("set " + k + " " + v))
}

func (s *kv) get(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok
}

func openKV(t *testing.T, path string, rep *Reporter) (*kv, *Log) {
	t.Helper()
	s := newKV()
	l, err := Open(s.options(path, rep))
	if err != nil {
		t.Fatal(err)
	}
	return s, l
}

func TestLogReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	s, l := openKV(t, path, nil)
	for i := range 100 {
		if err := l.Wait(s.set(l, fmt.Sprint("k", i%10), fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	s2, l2 := openKV(t, path, nil)
	defer l2.Close()
	for i := 90; i < 100; i++ {
		if v, _ := s2.get(fmt.Sprint("k", i%10)); v != fmt.Sprint(i) {
			t.Errorf("k%d = %q after reopen, want %d (the last write wins)", i%10, v, i)
		}
	}
	if len(s2.m) != 10 {
		t.Errorf("%d keys after reopen, want 10", len(s2.m))
	}
	// Reopening folds the segments into the snapshot: one empty segment
	// is left.
	segs, _ := filepath.Glob(path + ".wal.*")
	if len(segs) != 1 {
		t.Errorf("segments after reopen: %v, want one", segs)
	}
}

func TestLogCompactKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	s, l := openKV(t, path, nil)
	for i := range 50 {
		s.set(l, fmt.Sprint("a", i), "x")
		if i%7 == 0 {
			if err := l.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	// Kill-like stop: no Close.
	s2, l2 := openKV(t, path, nil)
	defer l2.Close()
	if len(s2.m) != 50 {
		t.Fatalf("%d keys after compactions and reopen, want 50", len(s2.m))
	}
	if st := l.Stats(); st.Snapshots != 8 {
		t.Errorf("snapshots = %d, want 8", st.Snapshots)
	}
}

func TestLogGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	s, l := openKV(t, path, nil)
	defer l.Close()
	var wg sync.WaitGroup
	const writers, each = 16, 50
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := l.Wait(s.set(l, fmt.Sprint(w, "-", i), "v")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := l.Stats()
	if st.Records != writers*each {
		t.Fatalf("records = %d, want %d", st.Records, writers*each)
	}
	// Every record waited for its fsync, yet writers waiting at the same
	// time share one.
	if st.Fsyncs >= st.Records {
		t.Errorf("%d fsyncs for %d records: no group commit", st.Fsyncs, st.Records)
	}
	t.Logf("%d records, %d fsyncs", st.Records, st.Fsyncs)
}

// Under a burst the fsyncs are at least SyncInterval apart, so the
// writers waiting in between share one; every Wait still returns only
// once its record is fsynced, and a record after a quiet spell does not
// wait for the interval behind an fsync long past.
func TestLogSyncInterval(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	s := newKV()
	o := s.options(path, nil)
	const interval = 50 * time.Millisecond
	o.SyncInterval = interval
	l, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	base := l.Stats().Fsyncs
	var wg sync.WaitGroup
	const writers, each = 16, 20
	start := time.Now()
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				seq := s.set(l, fmt.Sprint(w, "-", i), "v")
				if err := l.Wait(seq); err != nil {
					t.Error(err)
					return
				}
				l.mu.Lock()
				synced := l.synced
				l.mu.Unlock()
				if synced < seq {
					t.Errorf("Wait(%d) returned with %d fsynced", seq, synced)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	fsyncs := l.Stats().Fsyncs - base
	// The first fsync comes at once, each later one at least interval
	// after the one before.
	if max := 1 + int64(elapsed/interval); fsyncs > max {
		t.Errorf("%d fsyncs in %v, want at most %d with fsyncs %v apart", fsyncs, elapsed, max, interval)
	}
	if fsyncs >= writers*each/4 {
		t.Errorf("%d fsyncs for %d records: the writers did not share them", fsyncs, writers*each)
	}
	t.Logf("%d records, %d fsyncs in %v", writers*each, fsyncs, elapsed)

	// After a quiet spell of more than the interval, one record is
	// fsynced without waiting for the next interval's turn: the Wait
	// takes less than the interval, every time (it could only take that
	// long if the loop waited).
	for range 5 {
		time.Sleep(2 * interval)
		t0 := time.Now()
		if err := l.Wait(s.set(l, "alone", "v")); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d >= interval {
			t.Logf("a record after a quiet spell waited %v", d)
		} else {
			return
		}
	}
	t.Errorf("a record after a quiet spell waited the interval (%v) five times out of five", interval)
}

// TestLogTornTail: a power cut in the middle of the last record leaves it
// cut short; its Wait never returned, so it is cut off at the next Open,
// not reported as damage.
func TestLogTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	s, l := openKV(t, path, nil)
	for i := range 5 {
		s.set(l, fmt.Sprint("k", i), "v")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(path + ".wal.*")
	if len(segs) != 1 {
		t.Fatalf("segments: %v", segs)
	}
	st, _ := os.Stat(segs[0])
	// A power cut in the middle of the last record.
	if err := os.Truncate(segs[0], st.Size()-3); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	rep := NewReporter(dir, nil, reg)
	s2, l2 := openKV(t, path, rep)
	defer l2.Close()
	if len(s2.m) != 4 {
		t.Errorf("%d keys after a torn last record, want the 4 before it: %v", len(s2.m), s2.m)
	}
	if _, ok := s2.get("k4"); ok {
		t.Error("the torn record was applied")
	}
	if moved, _ := filepath.Glob(segs[0] + CorruptSuffix + "*"); len(moved) != 0 {
		t.Errorf("torn last record moved aside as damage: %v", moved)
	}
	if n, _ := testbin.GatherSum(reg, "paged_state_corruptions_total"); n != 0 {
		t.Errorf("paged_state_corruptions_total = %v, want 0", n)
	}
}

func TestLogCorruptFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, path string)
		keys    int    // keys that survive
		movedOf string // which file is moved aside: "snapshot" or "segment"
	}{
		{"garbage snapshot", func(t *testing.T, path string) {
			write(t, path, []byte("\x00\x01garbage, not a snapshot"))
		}, 3, "snapshot"},
		{"snapshot with a flipped bit", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			b[len(b)/2] ^= 0x10
			write(t, path, b)
		}, 8, "snapshot"}, // the records before the damage are kept
		{"segment with a flipped bit", func(t *testing.T, path string) {
			segs, _ := filepath.Glob(path + ".wal.*")
			b, _ := os.ReadFile(segs[0])
			b[frameHeader+2] ^= 0x01 // inside the first record
			write(t, segs[0], b)
		}, 10, "segment"},
		{"segment with a bad length", func(t *testing.T, path string) {
			segs, _ := filepath.Glob(path + ".wal.*")
			b, _ := os.ReadFile(segs[0])
			b[3] = 0xff
			write(t, segs[0], b)
		}, 10, "segment"},
		{"unreadable segment (a directory)", func(t *testing.T, path string) {
			segs, _ := filepath.Glob(path + ".wal.*")
			os.Remove(segs[0])
			if err := os.Mkdir(path+".wal.00000009", 0o700); err != nil {
				t.Fatal(err)
			}
		}, 10, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state")
			// Ten keys in the snapshot, three more in the segment.
			s, l := openKV(t, path, nil)
			for i := range 10 {
				s.set(l, fmt.Sprint("snap", i), "v")
			}
			if err := l.Compact(); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				s.set(l, fmt.Sprint("seg", i), "v")
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, path)

			reg := prometheus.NewRegistry()
			s2, l2 := openKV(t, path, NewReporter(dir, nil, reg))
			if len(s2.m) != tc.keys {
				t.Errorf("%d keys survive, want %d: %v", len(s2.m), tc.keys, s2.m)
			}
			// It pages on: new writes work and survive.
			if err := l2.Wait(s2.set(l2, "after", "1")); err != nil {
				t.Fatal(err)
			}
			l2.Close()
			s3, l3 := openKV(t, path, nil)
			defer l3.Close()
			if v, _ := s3.get("after"); v != "1" || len(s3.m) != tc.keys+1 {
				t.Errorf("after the damage was moved aside: %d keys, after=%q", len(s3.m), v)
			}
			moved, _ := filepath.Glob(filepath.Join(dir, "*"+CorruptSuffix+"*"))
			if tc.movedOf == "" {
				return
			}
			if len(moved) != 1 {
				t.Fatalf("moved aside: %v, want one file", moved)
			}
			isSeg := strings.Contains(filepath.Base(moved[0]), segmentInfix)
			if isSeg != (tc.movedOf == "segment") {
				t.Errorf("moved aside %s, want the %s", moved[0], tc.movedOf)
			}
			var total float64
			total, _ = testbin.GatherSum(reg, "paged_state_corruptions_total")
			if total != 1 {
				t.Errorf("paged_state_corruptions_total = %v, want 1", total)
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLogWriteFailure: a disk that fills up keeps the state in memory,
// reports the file, and a later snapshot makes everything durable again.
func TestLogWriteFailure(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	reg := prometheus.NewRegistry()
	rep := NewReporter(dir, nil, reg)
	s, l := openKV(t, path, rep)
	if err := l.Wait(s.set(l, "before", "1")); err != nil {
		t.Fatal(err)
	}
	// The disk fills up.
	l.mu.Lock()
	good := l.cur
	l.cur = full
	l.mu.Unlock()
	seq := s.set(l, "during", "1")
	err = l.Wait(seq)
	if !errors.Is(err, ErrNotDurable) {
		t.Fatalf("Wait on a full disk = %v, want ErrNotDurable", err)
	}
	if f := rep.Failing(); len(f) != 1 || f[0].File != "state" {
		t.Fatalf("Failing = %+v, want state", f)
	}
	s.set(l, "during2", "1") // kept in memory only
	if n, _ := testbin.GatherSum(reg, "paged_state_write_failures_total", "file", "state"); n != 1 {
		t.Errorf("paged_state_write_failures_total = %v, want 1", n)
	}
	good.Close()

	// Space is back: the retry writes a snapshot.
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(seq); err != nil {
		t.Fatalf("Wait after recovery: %v", err)
	}
	if f := rep.Failing(); len(f) != 0 {
		t.Errorf("still failing after recovery: %+v", f)
	}
	if err := l.Wait(s.set(l, "after", "1")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	s2, l2 := openKV(t, path, nil)
	defer l2.Close()
	for _, k := range []string{"before", "during", "during2", "after"} {
		if _, ok := s2.get(k); !ok {
			t.Errorf("%s lost", k)
		}
	}
}

// TestOpenDirectoryIsAFile: a file where the state's directory should be
// is moved aside, and the state starts empty.
func TestOpenDirectoryIsAFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "alert-state")
	write(t, dir, []byte("not a directory"))
	reg := prometheus.NewRegistry()
	s, l := openKV(t, filepath.Join(dir, "state"), NewReporter(root, nil, reg))
	defer l.Close()
	if err := l.Wait(s.set(l, "k", "v")); err != nil {
		t.Fatal(err)
	}
	moved, _ := filepath.Glob(dir + CorruptSuffix + "*")
	if len(moved) != 1 {
		t.Fatalf("moved aside: %v", moved)
	}
	if n, _ := testbin.GatherSum(reg, "paged_state_corruptions_total", "file", "alert-state"); n != 1 {
		t.Errorf("paged_state_corruptions_total{file=alert-state} = %v", n)
	}
}

// TestOpenNotWritable: a state directory that cannot be made (here, under
// a file) does not fail Open: the state is kept in memory, the file is
// reported failing with the reason, and Wait says it is not durable.
func TestOpenNotWritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	write(t, file, nil)
	rep := NewReporter(dir, nil, nil)
	s := newKV()
	l, err := Open(s.options(filepath.Join(file, "sub", "state"), rep))
	if err != nil {
		t.Fatalf("Open under a file: %v, want the state in memory", err)
	}
	defer l.Close()
	if err := l.Healthy(); err == nil || !strings.Contains(err.Error(), filepath.Join(file, "sub")) {
		t.Errorf("Healthy() = %v, want an error naming %s", err, filepath.Join(file, "sub"))
	}
	if f := rep.Failing(); len(f) != 1 || f[0].File != "file/sub/state" {
		t.Errorf("Failing = %+v, want file/sub/state", f)
	}
	if err := l.Wait(s.set(l, "k", "v")); !errors.Is(err, ErrNotDurable) {
		t.Errorf("Wait = %v, want ErrNotDurable", err)
	}
	if v, _ := s.get("k"); v != "v" {
		t.Error("the change is not kept in memory")
	}
}

// TestLogSurvivesKill runs a writer in a child process and kills it with
// SIGKILL at random moments: every record the child reported durable is
// there after each kill, and the count only grows.
func TestLogSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	rng := rand.New(rand.NewPCG(1, 2))
	highest := -1
	for round := range 6 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "DURABLE_KILL_HELPER="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var (
			mu   sync.Mutex
			last = -1
			done = make(chan struct{})
		)
		go func() {
			defer close(done)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "durable ")); err == nil {
					mu.Lock()
					last = n
					mu.Unlock()
				}
			}
		}()
		time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-done
		_ = cmd.Wait()
		mu.Lock()
		reported := last
		mu.Unlock()

		s, l := openKV(t, path, nil)
		n, _ := strconv.Atoi(s.m["n"])
		for i := 0; i <= reported; i++ {
			if _, ok := s.m[fmt.Sprint("k", i)]; !ok {
				t.Fatalf("round %d: k%d was reported durable before the kill and is gone", round, i)
			}
		}
		if n < reported || n < highest {
			t.Fatalf("round %d: counter %d after the kill, child reported %d, earlier rounds reached %d", round, n, reported, highest)
		}
		highest = n
		l.Close()
		t.Logf("round %d: killed after %d durable records; %d on disk", round, reported+1, n+1)
	}
	if highest < 10 {
		t.Errorf("the child wrote only %d records in all rounds", highest+1)
	}
}

func TestMain(m *testing.M) {
	if path := os.Getenv("DURABLE_KILL_HELPER"); path != "" {
		killHelper(path)
	}
	os.Exit(m.Run())
}

// killHelper is the child of TestLogSurvivesKill: it writes records and
// reports each one durable until it is killed.
func killHelper(path string) {
	s := newKV()
	o := s.options(path, nil)
	o.CompactBytes = 4 << 10 // compact often, so kills land in compactions too
	l, err := Open(o)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	i := 0
	if v, ok := s.m["n"]; ok {
		i, _ = strconv.Atoi(v)
		i++
	}
	w := bufio.NewWriter(os.Stdout)
	for ; ; i++ {
		s.mu.Lock()
		s.m[fmt.Sprint("k", i)] = strings.Repeat("x", 64)
		s.m["n"] = fmt.Sprint(i)
		l.Append([]byte(fmt.Sprintf("set k%d %s", i, strings.Repeat("x", 64))))
		seq := l.Append([]byte(fmt.Sprintf("set n %d", i)))
		s.mu.Unlock()
		if err := l.Wait(seq); err != nil {
			fmt.Println("wait:", err)
			os.Exit(2)
		}
		fmt.Fprintf(w, "durable %d\n", i)
		w.Flush()
	}
}

func FuzzReplay(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add(AppendFrame(nil, []byte("set a b")), AppendFrame(nil, []byte("a b")))
	f.Add(AppendFrame(AppendFrame(nil, []byte("set a b")), []byte("del a"))[:12], []byte("garbage"))
	f.Fuzz(func(t *testing.T, seg, snap []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state")
		write(t, path, snap)
		write(t, path+".wal.00000001", seg)
		s, l := openKV(t, path, NewReporter(dir, nil, nil))
		if err := l.Wait(s.set(l, "z", "1")); err != nil {
			t.Fatal(err)
		}
		want := len(s.m)
		l.Close()
		s2, l2 := openKV(t, path, nil)
		defer l2.Close()
		if len(s2.m) != want || !bytes.Equal([]byte(s2.m["z"]), []byte("1")) {
			t.Fatalf("reopen: %d keys, want %d", len(s2.m), want)
		}
	})
}
