package durable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/internal/durable/durabletest"
	"github.com/pagedhq/paged/internal/testbin"
)

// fullDisk is a disk that fills up on demand, as a full volume does: a
// new file is still created (there are inodes left), but a write fails
// with ENOSPC after writing what fitted (part of the record), an fsync
// may fail, and a snapshot fails. It keeps how much of each segment was
// fsynced, so that onDisk can tell what a power cut would leave.
type fullDisk struct {
	full atomic.Bool
	// fill and free, when set, fill or free the disk at random moments:
	// each operation fills a free disk with probability fill and frees a
	// full one with probability free.
	fill, free float64
	// stallAfter, when set, blocks attempts (create, replace) after that
	// many while full, until unstall: a test of the retry pace can then
	// stop a loop that never waits.
	stallAfter int
	stall      chan struct{}

	mu       sync.Mutex
	size     map[string]int64 // by segment: bytes written
	synced   map[string]int64 // by segment: bytes fsynced
	creates  int
	replaces int
	stalled  bool
}

func newFullDisk() *fullDisk {
	return &fullDisk{size: map[string]int64{}, synced: map[string]int64{}, stall: make(chan struct{})}
}

// op is called with d.mu held at the start of each operation.
func (d *fullDisk) op() {
	p := d.fill
	if d.full.Load() {
		p = d.free
	}
	if p > 0 && rand.Float64() < p {
		d.full.Store(!d.full.Load())
	}
}

// attempt counts a create or replace; it blocks past stallAfter.
func (d *fullDisk) attempt(n *int) {
	*n++
	if d.stallAfter > 0 && d.full.Load() && d.creates+d.replaces > d.stallAfter && !d.stalled {
		d.mu.Unlock()
		<-d.stall
		d.mu.Lock()
	}
}

func (d *fullDisk) flip(fill, free float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fill, d.free = fill, free
}

func (d *fullDisk) unstall() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stalled {
		d.stalled = true
		close(d.stall)
	}
}

func (d *fullDisk) attempts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.creates + d.replaces
}

var errNoSpace = &os.PathError{Op: "write", Path: "disk", Err: syscall.ENOSPC}

func (d *fullDisk) create(path string) (segmentFile, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.op()
	d.attempt(&d.creates)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o640)
	if err != nil {
		return nil, err
	}
	d.size[path], d.synced[path] = 0, 0
	return &fullFile{d: d, f: f, path: path}, nil
}

func (d *fullDisk) replace(path string, write func(io.Writer) error) error {
	// The snapshot reads the caller's state under its lock, which is
	// held around Append (and so around a segment write): render it
	// before taking the disk's lock.
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.op()
	d.attempt(&d.replaces)
	if d.full.Load() {
		return errNoSpace
	}
	// Renaming is what makes it atomic; the model needs no fsync.
	tmp := path + ".tmp-test"
	if err := os.WriteFile(tmp, b.Bytes(), 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// onDisk returns the keys set on disk now, as a power cut would leave
// them: the snapshot, and of each segment the whole records of what was
// fsynced.
func (d *fullDisk) onDisk(path string) map[string]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	keys := map[string]bool{}
	if b, err := os.ReadFile(path); err == nil {
		_ = ReadFrames(bytes.NewReader(b), func(rec []byte) error {
			k, _, _ := strings.Cut(string(rec), " ")
			keys[k] = true
			return nil
		})
	}
	segs, _ := filepath.Glob(path + segmentInfix + "*")
	sort.Strings(segs)
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if n, ok := d.synced[p]; ok && int64(len(b)) > n {
			b = b[:n]
		}
		_ = ReadFrames(bytes.NewReader(b), func(rec []byte) error {
			f := strings.SplitN(string(rec), " ", 3)
			if len(f) == 3 && f[0] == "set" {
				keys[f[1]] = true
			}
			return nil
		})
	}
	return keys
}

// fullFile is a segment on a fullDisk.
type fullFile struct {
	d    *fullDisk
	f    *os.File
	path string
}

func (f *fullFile) Write(p []byte) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	f.d.op()
	if f.d.full.Load() {
		// What fitted: a record cut short.
		n, _ := f.f.Write(p[:rand.IntN(len(p))])
		f.d.size[f.path] += int64(n)
		return n, errNoSpace
	}
	n, err := f.f.Write(p)
	f.d.size[f.path] += int64(n)
	return n, err
}

func (f *fullFile) Sync() error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	f.d.op()
	if f.d.full.Load() && rand.IntN(3) == 0 {
		return &os.PathError{Op: "sync", Path: f.path, Err: syscall.ENOSPC}
	}
	f.d.synced[f.path] = f.d.size[f.path]
	return nil
}

func (f *fullFile) Truncate(size int64) error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if err := f.f.Truncate(size); err != nil {
		return err
	}
	f.d.size[f.path] = size
	f.d.synced[f.path] = min(f.d.synced[f.path], size)
	return nil
}

func (f *fullFile) Close() error { return f.f.Close() }

// TestLogAcksOnlyWhatIsOnDisk: writers append and wait while the disk
// fills up and frees again at random moments and a caller compacts
// throughout. Whenever Wait answers nil, the record is on disk at that
// moment (in the snapshot, or in an fsynced segment before any damage),
// so it would survive a crash; a record that could not be written is
// answered ErrNotDurable. Run it with -race and -count=50.
func TestLogAcksOnlyWhatIsOnDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	d := newFullDisk()
	s := newKV()
	o := s.options(path, NewReporter(dir, nil, nil))
	o.disk = d
	o.CompactBytes = 2 << 10
	o.RetryInterval = time.Millisecond
	l, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	d.flip(0.02, 0.2)

	// A caller compacts every few records, at whatever moment that is.
	stop, kick := make(chan struct{}), make(chan struct{}, 1)
	var compactor sync.WaitGroup
	compactor.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-kick:
				_ = l.Compact()
			}
		}
	})
	var acked, refused atomic.Int64
	var writers sync.WaitGroup
	for w := range 8 {
		writers.Go(func() {
			for i := range 100 {
				k := fmt.Sprintf("w%d-%d", w, i)
				if i%4 == 0 {
					select {
					case kick <- struct{}{}:
					default:
					}
				}
				err := l.Wait(s.set(l, k, "v"))
				if err != nil {
					if !errors.Is(err, ErrNotDurable) {
						t.Errorf("Wait(%s) = %v, want nil or ErrNotDurable", k, err)
					}
					refused.Add(1)
					// A broken log refuses at once: retry, and go on
					// once it is written again.
					for l.Healthy() != nil {
						_ = l.Compact()
					}
					continue
				}
				acked.Add(1)
				if !d.onDisk(path)[k] {
					t.Errorf("Wait(%s) answered nil, but the record is not on disk", k)
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	compactor.Wait()
	d.flip(0, 0)
	d.full.Store(false)
	if err := l.Close(); err != nil && !errors.Is(err, ErrNotDurable) {
		t.Fatal(err)
	}
	if acked.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("%d records acknowledged, %d refused: the test did not reach both", acked.Load(), refused.Load())
	}
	t.Logf("%d acknowledged, %d refused", acked.Load(), refused.Load())
}

// countWarnings counts the warnings a logger writes.
type countWarnings struct {
	slog.Handler
	n *atomic.Int64
}

func (countWarnings) Enabled(context.Context, slog.Level) bool { return true }

func (c countWarnings) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		c.n.Add(1)
	}
	return nil
}

// TestLogRetriesEveryInterval: on a disk that stays full, the log tries
// to write once every RetryInterval, with one warning each, and does not
// leave a new segment behind each time; once space is back, the next
// attempt writes everything.
func TestLogRetriesEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state")
		d := newFullDisk()
		d.stallAfter = 200
		var warnings atomic.Int64
		s := newKV()
		o := s.options(path, nil)
		o.disk = d
		o.RetryInterval = 5 * time.Second
		o.Logger = slog.New(countWarnings{slog.DiscardHandler, &warnings})
		l, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Wait(s.set(l, "before", "1")); err != nil {
			t.Fatal(err)
		}

		d.full.Store(true)
		base := d.attempts()
		segsBefore, _ := filepath.Glob(path + segmentInfix + "*")
		seq := s.set(l, "during", "1")
		_ = l.Wait(seq)
		const minutes = 1
		time.Sleep(minutes * time.Minute)
		synctest.Wait()
		attempts := d.attempts() - base
		segs, _ := filepath.Glob(path + segmentInfix + "*")
		d.mu.Lock()
		created := d.creates
		d.mu.Unlock()
		// One attempt every 5 s: 12 in the minute (a snapshot each, and
		// the segment the first one opens).
		if max := minutes*12 + 1; attempts > max {
			t.Errorf("%d write attempts in %d minute on a full disk, want at most %d (one every 5s)", attempts, minutes, max)
		}
		if attempts < minutes*12-1 {
			t.Errorf("%d write attempts in %d minute on a full disk, want one every 5s", attempts, minutes)
		}
		if n := warnings.Load(); n > int64(attempts) || n > minutes*12+1 {
			t.Errorf("%d warnings for %d attempts", n, attempts)
		}
		if len(segs) > len(segsBefore)+1 {
			t.Errorf("%d segments after a minute on a full disk (%d before, %d created): a new one per attempt", len(segs), len(segsBefore), created)
		}
		t.Logf("%d attempts, %d warnings, segments %d -> %d in %d minute", attempts, warnings.Load(), len(segsBefore), len(segs), minutes)
		if t.Failed() {
			d.unstall()
			l.Close()
			return
		}

		// Space is back: within one interval everything is on disk.
		d.full.Store(false)
		time.Sleep(o.RetryInterval)
		synctest.Wait()
		if err := l.Healthy(); err != nil {
			t.Errorf("still failing %v after space came back: %v", o.RetryInterval, err)
		}
		if err := l.Wait(seq); err != nil {
			t.Errorf("Wait after recovery: %v", err)
		}
		if !d.onDisk(path)["during"] {
			t.Error("the record kept in memory is not on disk after recovery")
		}
		d.unstall()
		l.Close()
	})
}

// appendTorn appends the first part of a record to a segment, as a write
// that failed (ENOSPC) or was interrupted leaves it.
func appendTorn(t *testing.T, seg string, rec string) {
	t.Helper()
	b := AppendFrame(nil, []byte(rec))
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b[:frameHeader+3]); err != nil {
		t.Fatal(err)
	}
}

// TestLogCutsTornTail: a record cut short at the end of the last segment
// is the write that failed or was interrupted (its Wait never returned):
// the next Open cuts it off, keeps every record before it and reports no
// damage.
func TestLogCutsTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	s, l := openKV(t, path, nil)
	for i := range 5 {
		if err := l.Wait(s.set(l, fmt.Sprint("k", i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	segs, _ := filepath.Glob(path + segmentInfix + "*")
	appendTorn(t, segs[len(segs)-1], "set k5 v")

	reg := prometheus.NewRegistry()
	rep := NewReporter(dir, nil, reg)
	s2, l2 := openKV(t, path, rep)
	if len(s2.m) != 5 {
		t.Errorf("%d keys after reopening, want the 5 written before the torn record: %v", len(s2.m), s2.m)
	}
	if moved, _ := filepath.Glob(filepath.Join(dir, "*"+CorruptSuffix+"*")); len(moved) != 0 {
		t.Errorf("moved aside as corrupt: %v", moved)
	}
	if n, _ := testbin.GatherSum(reg, "paged_state_corruptions_total"); n != 0 {
		t.Errorf("paged_state_corruptions_total = %v, want 0", n)
	}
	if err := l2.Wait(s2.set(l2, "after", "1")); err != nil {
		t.Fatal(err)
	}
	l2.Close()
	s3, l3 := openKV(t, path, rep)
	defer l3.Close()
	if len(s3.m) != 6 {
		t.Errorf("%d keys after a record appended behind the cut, want 6: %v", len(s3.m), s3.m)
	}
	if n, _ := testbin.GatherSum(reg, "paged_state_corruptions_total"); n != 0 {
		t.Errorf("paged_state_corruptions_total = %v after the second reopen, want 0", n)
	}
}

// TestLogTornOlderSegment: a record cut short in a segment that others
// follow is not an interrupted last write: it is damage, moved aside and
// reported, and the records before it and in the later segments are kept.
func TestLogTornOlderSegment(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	var seg1, seg2 []byte
	for i := range 3 {
		seg1 = AppendFrame(seg1, []byte(fmt.Sprintf("set a%d v", i)))
		seg2 = AppendFrame(seg2, []byte(fmt.Sprintf("set b%d v", i)))
	}
	seg1 = append(seg1, AppendFrame(nil, []byte("set torn v"))[:frameHeader+2]...)
	write(t, path+".wal.00000001", seg1)
	write(t, path+".wal.00000002", seg2)
	reg := prometheus.NewRegistry()
	s, l := openKV(t, path, NewReporter(dir, nil, reg))
	defer l.Close()
	if len(s.m) != 6 {
		t.Errorf("%d keys, want the 6 whole records: %v", len(s.m), s.m)
	}
	if n, _ := testbin.GatherSum(reg, "paged_state_corruptions_total", "file", "state.wal.00000001"); n != 1 {
		t.Errorf("paged_state_corruptions_total{file=state.wal.00000001} = %v, want 1", n)
	}
}

// TestOpenOnFullDisk: a restart on a full disk loads what is there (a
// torn last record cut off in place), keeps working in memory with the
// file reported failing, and writes everything once space is back.
func TestOpenOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	s, l := openKV(t, path, nil)
	for i := range 5 {
		if err := l.Wait(s.set(l, fmt.Sprint("k", i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	segs, _ := filepath.Glob(path + segmentInfix + "*")
	last := segs[len(segs)-1]
	whole, _ := os.Stat(last)
	appendTorn(t, last, "set k5 v")

	d := newFullDisk()
	d.full.Store(true)
	reg := prometheus.NewRegistry()
	rep := NewReporter(dir, nil, reg)
	s2 := newKV()
	o := s2.options(path, rep)
	o.disk = d
	l2, err := Open(o)
	if err != nil {
		t.Fatalf("Open on a full disk: %v, want the state in memory", err)
	}
	defer l2.Close()
	if len(s2.m) != 5 {
		t.Errorf("%d keys on a full disk, want 5: %v", len(s2.m), s2.m)
	}
	if fi, err := os.Stat(last); err != nil || fi.Size() != whole.Size() {
		t.Errorf("the torn record is not cut off in place: %v, %v bytes, want %d", err, fi, whole.Size())
	}
	if l2.Healthy() == nil {
		t.Error("Healthy() = nil on a full disk")
	}
	if f := rep.Failing(); len(f) != 1 || f[0].File != "state" || !strings.Contains(f[0].Err, "no space left") {
		t.Errorf("Failing = %+v, want state with its reason", f)
	}
	if n, _ := testbin.GatherSum(reg, "paged_state_corruptions_total"); n != 0 {
		t.Errorf("paged_state_corruptions_total = %v, want 0", n)
	}
	seq := s2.set(l2, "during", "1")
	if err := l2.Wait(seq); !errors.Is(err, ErrNotDurable) {
		t.Errorf("Wait on a full disk = %v, want ErrNotDurable", err)
	}

	d.full.Store(false)
	if err := l2.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := l2.Wait(seq); err != nil {
		t.Errorf("Wait once space is back: %v", err)
	}
	if f := rep.Failing(); len(f) != 0 {
		t.Errorf("Failing = %+v once space is back", f)
	}
	if k := d.onDisk(path); len(k) != 6 || !k["during"] {
		t.Errorf("on disk once space is back: %v, want k0-k4 and during", k)
	}
}

// TestOpenOnReadOnlyDisk: the same on a real read-only mount (a tmpfs;
// skipped where mounting is not allowed).
func TestOpenOnReadOnlyDisk(t *testing.T) {
	disk := durabletest.Mount(t, 1<<20)
	path := filepath.Join(disk.Dir, "state")
	s, l := openKV(t, path, nil)
	for i := range 5 {
		if err := l.Wait(s.set(l, fmt.Sprint("k", i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	disk.ReadOnly(true)
	rep := NewReporter(disk.Dir, nil, nil)
	s2 := newKV()
	l2, err := Open(s2.options(path, rep))
	if err != nil {
		t.Fatalf("Open on a read-only disk: %v", err)
	}
	if len(s2.m) != 5 {
		t.Errorf("%d keys on a read-only disk, want 5", len(s2.m))
	}
	if f := rep.Failing(); len(f) != 1 || !strings.Contains(f[0].Err, "read-only") {
		t.Errorf("Failing = %+v, want state, read-only", f)
	}
	seq := s2.set(l2, "during", "1")
	if err := l2.Wait(seq); !errors.Is(err, ErrNotDurable) {
		t.Errorf("Wait on a read-only disk = %v, want ErrNotDurable", err)
	}
	disk.ReadOnly(false)
	if err := l2.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := l2.Wait(seq); err != nil {
		t.Errorf("Wait once writable: %v", err)
	}
	l2.Close()
	s3, l3 := openKV(t, path, nil)
	defer l3.Close()
	if len(s3.m) != 6 {
		t.Errorf("%d keys after reopening, want 6", len(s3.m))
	}
}

// TestOpenOnFullTmpfs: a restart on a real full tmpfs (skipped where
// mounting is not allowed).
func TestOpenOnFullTmpfs(t *testing.T) {
	disk := durabletest.Mount(t, 1<<20)
	path := filepath.Join(disk.Dir, "state")
	s, l := openKV(t, path, nil)
	for i := range 5 {
		if err := l.Wait(s.set(l, fmt.Sprint("k", i), strings.Repeat("v", 100))); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	disk.Fill()
	rep := NewReporter(disk.Dir, nil, nil)
	s2 := newKV()
	l2, err := Open(s2.options(path, rep))
	if err != nil {
		t.Fatalf("Open on a full disk: %v", err)
	}
	defer l2.Close()
	if len(s2.m) != 5 {
		t.Errorf("%d keys on a full disk, want 5", len(s2.m))
	}
	if f := rep.Failing(); len(f) != 1 || !strings.Contains(f[0].Err, "no space left") {
		t.Errorf("Failing = %+v, want state, no space left", f)
	}
	seq := s2.set(l2, "during", "1")
	if err := l2.Wait(seq); !errors.Is(err, ErrNotDurable) {
		t.Errorf("Wait on a full disk = %v, want ErrNotDurable", err)
	}
	disk.Free()
	if err := l2.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := l2.Wait(seq); err != nil {
		t.Errorf("Wait once space is back: %v", err)
	}
}
