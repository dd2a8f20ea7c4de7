package durable

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Log.
type Options struct {
	// Path is the snapshot file. Segments are Path.wal.NNNNNNNN beside
	// it. Required.
	Path string
	// Load reads a snapshot that Snapshot wrote. Called at Open when the
	// snapshot exists. An error marks the snapshot corrupt: it is moved
	// aside and the Log goes on with what Load kept and the segments.
	Load func(r io.Reader) error
	// Replay applies one record of the segments, in the order they were
	// appended. An error marks the record corrupt; replay goes on.
	Replay func(rec []byte) error
	// Snapshot writes the whole state, as Load reads it: everything the
	// records appended so far describe. Required.
	Snapshot func(w io.Writer) error

	// CompactBytes: when the segments since the last snapshot pass this
	// size, a new snapshot replaces them (in the background). Default
	// 8 MiB.
	CompactBytes int64
	// RetryInterval is how often writing is retried after a failure (by
	// writing a snapshot). Default 5s.
	RetryInterval time.Duration
	// SyncInterval is the least time from the end of one fsync to the
	// start of the next; 0 (the default) fsyncs as soon as a record is
	// waited for. With it, a record
	// after a quiet spell is still fsynced at once, but under a burst the
	// records appended meanwhile wait for the next fsync together: at most
	// 1/SyncInterval fsyncs a second. An fsync blocks writes to the file
	// and an OS thread while it lasts, which the waiting saves; what it
	// costs is that a waiter may wait the interval, so it suits a log
	// whose waiters have nothing left to do (meant in milliseconds).
	SyncInterval time.Duration

	Reporter *Reporter
	Logger   *slog.Logger
	// Now is the clock for the names of files moved aside. Default
	// time.Now.
	Now func() time.Time

	// disk, in tests, replaces the file system's writes (osDisk).
	disk disk
}

// ErrNotDurable is returned by Wait while the log cannot be written: the
// state is kept in memory, and the Log retries.
var ErrNotDurable = errors.New("state not written to disk")

// Log is a snapshot plus segments of appended records. Append writes a
// record at once (it survives the process being killed); Wait returns
// once it is fsynced (it survives a power cut). Compaction writes a new
// snapshot and removes the segments it covers.
//
// The caller applies a change to its in-memory state before it appends
// the record of the change, and Snapshot reads that state: then a
// snapshot taken after a segment was closed covers every record of it.
//
// A record that could not be written (or whose segment could not be
// fsynced) is held by nothing on disk until a snapshot taken after it
// is written: synced does not pass it before then, whatever a later
// fsync of another segment says, so that Wait never answers nil for a
// record a crash would lose.
type Log struct {
	opts   Options
	logger *slog.Logger

	mu       sync.Mutex
	cond     *sync.Cond  // signalled when synced, broken or closed change
	cur      segmentFile // the segment appended to; nil when none could be made
	curSeq   int         // its number
	curSize  int64       // bytes of whole records in it
	curTorn  bool        // it may end in part of a record: never append to it again
	appended uint64      // records appended (written or not)
	synced   uint64      // records known on disk (fsynced, or in a snapshot)
	unsaved  uint64      // the last record not in a segment known fsynced; 0 when none
	since    int64       // bytes appended since the last snapshot
	broken   error       // set when a write failed; cleared by the next Compact
	closed   bool
	buf      []byte
	stats    Stats

	syncMu    sync.Mutex // one fsync or rotation at a time
	compactMu sync.Mutex // one snapshot at a time

	kickSync    chan struct{}
	kickCompact chan struct{}
	done        chan struct{}
	wg          sync.WaitGroup
}

const (
	frameHeader  = 8
	maxRecord    = 256 << 20
	segmentInfix = ".wal."
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Open loads the snapshot and the segments, writes a fresh snapshot of
// what was loaded, and starts a new segment. A file that cannot be read
// or parsed is moved aside and reported; a record cut short at the end
// of the last segment (a write that failed or was interrupted, which no
// Wait answered) is cut off. A directory that cannot be written (a full
// disk, a read-only mount) does not fail Open: the Log starts with what
// it loaded in memory, reported failing, and retries every RetryInterval
// (a pod restarted on a full volume must still page). Open fails when the
// directory cannot be read.
func Open(o Options) (*Log, error) {
	if o.Path == "" || o.Snapshot == nil {
		return nil, errors.New("durable: Path and Snapshot are required")
	}
	if o.Load == nil {
		o.Load = func(io.Reader) error { return nil }
	}
	if o.Replay == nil {
		o.Replay = func([]byte) error { return nil }
	}
	if o.CompactBytes <= 0 {
		o.CompactBytes = 8 << 20
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.disk == nil {
		o.disk = osDisk{}
	}
	dir := filepath.Dir(o.Path)
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		// Something else took the directory's place: keep it, aside.
		to, merr := MoveAside(dir, o.Now())
		if merr != nil {
			return nil, fmt.Errorf("state directory %s is not a directory and cannot be moved aside: %w", dir, merr)
		}
		o.Reporter.Corrupted(dir, to, errors.New("not a directory"))
	}
	l := &Log{
		opts:        o,
		logger:      o.Logger,
		kickSync:    make(chan struct{}, 1),
		kickCompact: make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	l.cond = sync.NewCond(&l.mu)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		// Nothing there to load.
		l.start(fmt.Errorf("state directory %s cannot be created: %w", dir, err))
		return l, nil
	}

	l.loadSnapshot()
	segs, err := l.segments()
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", o.Path, err)
	}
	tail := tailSegment(segs)
	for i, s := range segs {
		l.replaySegment(s.path, i == tail)
	}
	last := 0
	if len(segs) > 0 {
		last = segs[len(segs)-1].seq
	}
	l.curSeq = last
	l.start(l.fresh(last + 1))
	return l, nil
}

// fresh starts clean: one empty segment, and one snapshot of what loaded.
func (l *Log) fresh(seq int) error {
	f, err := l.newSegment(seq)
	if err != nil {
		return err
	}
	l.cur, l.curSeq = f, seq
	return l.writeSnapshot(seq)
}

// start starts the loops. err is why Open could not write: the Log then
// starts broken, which reports it and has the loop retry.
func (l *Log) start(err error) {
	if err != nil {
		l.mu.Lock()
		l.failLocked(fmt.Errorf("state %s is not writable: %w", l.opts.Path, err))
		l.mu.Unlock()
	}
	l.wg.Add(2)
	go l.syncLoop()
	go l.compactLoop()
	l.opts.Reporter.track(l)
}

func (l *Log) loadSnapshot() {
	p := l.opts.Path
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err == nil {
		err = l.opts.Load(bytes.NewReader(b))
	}
	if err != nil {
		l.moveAside(p, err)
	}
}

func (l *Log) moveAside(p string, reason error) {
	to, err := MoveAside(p, l.opts.Now())
	if err != nil {
		l.logger.Error("moving a corrupt state file aside failed", "file", p, "err", err)
		to = ""
	}
	l.opts.Reporter.Corrupted(p, to, reason)
}

type segment struct {
	path string
	seq  int
}

// segments lists the segments beside the snapshot, in order.
func (l *Log) segments() ([]segment, error) {
	dir, base := filepath.Split(l.opts.Path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	prefix := base + segmentInfix
	var out []segment
	for _, e := range ents {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || e.IsDir() {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n <= 0 {
			continue // a segment moved aside, or not ours
		}
		out = append(out, segment{path: filepath.Join(dir, name), seq: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out, nil
}

func (l *Log) segmentPath(seq int) string {
	return fmt.Sprintf("%s%s%08d", l.opts.Path, segmentInfix, seq)
}

// tailSegment returns the index of the last segment that holds anything
// (-1 when none does): where a write that failed or was interrupted
// leaves its part of a record. The empty segments after it are what
// retries on a full disk opened.
func tailSegment(segs []segment) int {
	for i := len(segs) - 1; i >= 0; i-- {
		if fi, err := os.Stat(segs[i].path); err != nil || fi.Size() > 0 {
			return i
		}
	}
	return -1
}

// replaySegment applies the records of one segment. A segment that holds
// a damaged record, or a record Replay refuses, is moved aside once read:
// the snapshot Open writes next holds what it could read. A record cut
// short at the end of the tail segment is no damage: it is the last
// write, which failed (a full disk) or was interrupted (a crash, a power
// cut) before any Wait answered for it. It is cut off.
func (l *Log) replaySegment(p string, tail bool) {
	f, err := os.Open(p)
	if err != nil {
		l.moveAside(p, err)
		return
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var (
		bad  error
		good int64 // bytes of the whole records read
	)
	for n := 0; ; n++ {
		rec, err := readFrame(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			if tail && bad == nil && errors.Is(err, errTorn) {
				l.cutTail(p, good, err)
				return
			}
			bad = fmt.Errorf("record %d: %w", n, err)
			break
		}
		good += frameHeader + int64(len(rec))
		if err := l.opts.Replay(rec); err != nil && bad == nil {
			bad = fmt.Errorf("record %d: %w", n, err)
		}
	}
	if bad != nil {
		f.Close()
		l.moveAside(p, bad)
	}
}

// cutTail cuts segment p to its first size bytes, the whole records
// before a record cut short. Where the disk cannot be written the part
// stays; it is read the same way at the next Open.
func (l *Log) cutTail(p string, size int64, why error) {
	if err := os.Truncate(p, size); err != nil {
		l.logger.Warn("a record cut short at the end of a state segment is skipped; it cannot be cut off", "file", absPath(p), "record", why, "err", err)
		return
	}
	l.logger.Info("cut off a record cut short at the end of a state segment (a write that failed or was interrupted)", "file", absPath(p), "record", why)
}

// errTorn is a frame cut short: the end of a write that did not finish.
var errTorn = errors.New("record cut short (torn write)")

func readFrame(r *bufio.Reader) ([]byte, error) {
	var h [frameHeader]byte
	n, err := io.ReadFull(r, h[:])
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %d of %d header bytes", errTorn, n, frameHeader)
	}
	size := binary.LittleEndian.Uint32(h[0:4])
	sum := binary.LittleEndian.Uint32(h[4:8])
	if size == 0 || size > maxRecord {
		return nil, fmt.Errorf("bad record length %d", size)
	}
	rec := make([]byte, size)
	if n, err := io.ReadFull(r, rec); err != nil {
		return nil, fmt.Errorf("%w: %d of %d bytes", errTorn, n, size)
	}
	if crc32.Checksum(rec, castagnoli) != sum {
		return nil, errors.New("checksum mismatch")
	}
	return rec, nil
}

// AppendFrame appends rec framed as the segments frame it, for callers
// that write framed files of their own (snapshots).
func AppendFrame(dst, rec []byte) []byte {
	var h [frameHeader]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(rec)))
	binary.LittleEndian.PutUint32(h[4:8], crc32.Checksum(rec, castagnoli))
	return append(append(dst, h[:]...), rec...)
}

// ReadFrames calls f for each framed record of r (as AppendFrame writes
// them) until the end, a damaged frame or an error of f.
func ReadFrames(r io.Reader, f func(rec []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 0; ; n++ {
		rec, err := readFrame(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("record %d: %w", n, err)
		}
		if err := f(rec); err != nil {
			return fmt.Errorf("record %d: %w", n, err)
		}
	}
}

// newSegment creates segment seq, and the directory if it is missing (a
// retry after the directory could not be made at Open).
func (l *Log) newSegment(seq int) (segmentFile, error) {
	if err := os.MkdirAll(filepath.Dir(l.opts.Path), 0o750); err != nil {
		return nil, err
	}
	return l.opts.disk.create(l.segmentPath(seq))
}

// Append writes rec to the current segment and returns its sequence
// number for Wait. rec must not be empty. While the log cannot be
// written, the record is not written (the caller's memory has the state;
// the next snapshot will hold it).
func (l *Log) Append(rec []byte) uint64 {
	if len(rec) == 0 {
		panic("durable: empty record")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.appended++
	seq := l.appended
	if l.closed || l.broken != nil || l.cur == nil {
		l.unsaved = seq // only a snapshot can hold it now
		return seq
	}
	l.buf = AppendFrame(l.buf[:0], rec)
	if _, err := l.cur.Write(l.buf); err != nil {
		l.unsaved = seq
		l.cutLocked()
		l.failLocked(err)
		return seq
	}
	l.curSize += int64(len(l.buf))
	l.since += int64(len(l.buf))
	l.stats.Records++
	l.stats.Bytes += int64(len(l.buf))
	if l.since >= l.opts.CompactBytes {
		select {
		case l.kickCompact <- struct{}{}:
		default:
		}
	}
	return seq
}

// cutLocked removes what a failed write left of its record at the end of
// the segment (on a full disk, the part that fitted): a record appended
// behind a torn one could not be read. A segment that cannot be cut is
// not appended to again.
func (l *Log) cutLocked() {
	if err := l.cur.Truncate(l.curSize); err != nil {
		l.curTorn = true
	}
}

// failLocked marks the log broken after a failed write: nothing more is
// appended until the next Compact.
func (l *Log) failLocked(err error) {
	if l.broken == nil {
		l.opts.Reporter.WriteFailed(l.opts.Path, err, l.opts.Now())
	}
	l.broken = err
	l.cond.Broadcast()
	select {
	case l.kickCompact <- struct{}{}:
	default:
	}
}

// Wait returns once record seq is fsynced. It returns ErrNotDurable
// (wrapped with the cause) while the log cannot be written.
func (l *Log) Wait(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.synced < seq {
		if l.broken != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotDurable, l.opts.Path, l.broken)
		}
		if l.closed {
			return fmt.Errorf("%w: %s: closed", ErrNotDurable, l.opts.Path)
		}
		select {
		case l.kickSync <- struct{}{}:
		default:
		}
		l.cond.Wait()
	}
	return nil
}

// Sync waits until every record appended so far is fsynced.
func (l *Log) Sync() error {
	l.mu.Lock()
	seq := l.appended
	l.mu.Unlock()
	return l.Wait(seq)
}

// Stats count a Log's work since Open.
type Stats struct {
	Records   int64 // records written to segments
	Bytes     int64 // bytes written to segments, frames included
	Fsyncs    int64 // fsyncs of segments
	Snapshots int64 // snapshots written after Open
}

// Stats returns the counts so far.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Healthy reports the current write error, nil when the log is written.
func (l *Log) Healthy() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broken
}

func (l *Log) syncLoop() {
	defer l.wg.Done()
	var last time.Time // when the last fsync ended
	for {
		select {
		case <-l.done:
			return
		case <-l.kickSync:
		}
		if d := l.opts.SyncInterval - time.Since(last); d > 0 && !l.pause(d) {
			return
		}
		l.syncOnce()
		last = time.Now()
	}
}

// syncOnce fsyncs the current segment and advances synced to what was
// appended before the fsync began.
func (l *Log) syncOnce() {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	target, f := l.appended, l.cur
	if l.broken != nil || f == nil {
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	err := f.Sync()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Fsyncs++
	if err != nil {
		// What the segment holds may never reach the disk, whatever a
		// later fsync answers: only a snapshot holds it now.
		l.unsaved = max(l.unsaved, target)
		l.curTorn = true
		l.failLocked(err)
		return
	}
	// Not past a record that no fsynced segment holds: before the
	// snapshot that holds it is written, an fsync of this segment says
	// nothing about it.
	if target > l.synced && l.unsaved <= l.synced {
		l.synced = target
	}
	l.cond.Broadcast()
}

// compactLoop compacts when the segments pass CompactBytes, and retries
// after a failed write: once every RetryInterval, not at once, since what
// failed (a full disk, a read-only mount) does not pass in a moment, and
// each attempt logs a warning.
func (l *Log) compactLoop() {
	defer l.wg.Done()
	for {
		select {
		case <-l.done:
			return
		case <-l.kickCompact:
		}
		if l.Healthy() != nil {
			if !l.pause(l.opts.RetryInterval) {
				return
			}
			if l.Healthy() == nil {
				continue // a caller's Compact got there first
			}
		}
		if err := l.Compact(); err != nil {
			l.logger.Warn("writing state snapshot failed; retrying", "file", l.opts.Path, "every", l.opts.RetryInterval, "err", err)
		}
	}
}

// pause waits d; false when the log closes first.
func (l *Log) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.done:
		return false
	case <-t.C:
		return true
	}
}

// Compact starts a new segment, writes a snapshot of the state and
// removes the segments before the new one. After a write failure it is
// also how the log recovers: the snapshot holds what the lost records
// held.
func (l *Log) Compact() error {
	l.compactMu.Lock()
	defer l.compactMu.Unlock()
	upTo, keep, ok, err := l.rotate()
	if !ok {
		return err
	}
	if err := l.writeSnapshot(keep); err != nil {
		l.mu.Lock()
		l.failLocked(err)
		l.mu.Unlock()
		return err
	}
	l.mu.Lock()
	l.stats.Snapshots++
	l.synced = max(l.synced, upTo) // the snapshot holds them
	if l.unsaved <= upTo {
		l.unsaved = 0
	}
	healthy := l.broken == nil
	l.cond.Broadcast()
	l.mu.Unlock()
	if healthy {
		l.opts.Reporter.WriteRecovered(l.opts.Path)
	}
	return nil
}

// rotate readies a Compact: the records appended from now on go to a
// fresh segment, so that the snapshot taken next holds every record of
// the older ones. It returns the last record appended so far (which that
// snapshot holds) and the segment to keep; ok is false when the log is
// closed or no segment could be made.
//
// After a failed write the current segment is kept when it is empty and
// whole: appending to it is as good as to a new one, and retries on a
// full disk then leave no trail of segments. (One that holds records is
// not: the snapshot may hold changes its records predate, which replaying
// them after the snapshot would undo.)
func (l *Log) rotate() (upTo uint64, keep int, ok bool, err error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, 0, false, nil
	}
	// While broken nothing is written, so cur stays as seen here.
	if l.broken != nil && l.cur != nil && l.curSize == 0 && !l.curTorn {
		upTo, keep = l.appended, l.curSeq
		l.broken = nil
		l.mu.Unlock()
		return upTo, keep, true, nil
	}
	next := l.curSeq + 1
	l.mu.Unlock()

	// A new file and a directory fsync: outside the lock Append takes.
	f, err := l.newSegment(next)
	if err != nil {
		l.mu.Lock()
		l.failLocked(err)
		l.mu.Unlock()
		return 0, 0, false, err
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		f.Close()
		return 0, 0, false, nil
	}
	old, oldTorn := l.cur, l.curTorn
	upTo = l.appended
	l.cur, l.curSeq, l.curSize, l.curTorn, l.since = f, next, 0, false, 0
	// Appends go on, to the new segment; the snapshot holds the rest.
	l.broken = nil
	l.mu.Unlock()
	if old != nil {
		// Its records are on disk once it is fsynced, and a torn one is
		// not trusted: then only the snapshot holds them. syncMu keeps
		// syncOnce from counting them in the meantime.
		if oldTorn || old.Sync() != nil {
			l.mu.Lock()
			l.unsaved = max(l.unsaved, upTo)
			l.mu.Unlock()
		}
		old.Close()
	}
	return upTo, next, true, nil
}

// writeSnapshot writes the snapshot atomically, then removes the segments
// numbered below keep.
func (l *Log) writeSnapshot(keep int) error {
	err := l.opts.disk.replace(l.opts.Path, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 256<<10)
		if err := l.opts.Snapshot(w); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return err
	}
	segs, err := l.segments()
	if err != nil {
		return nil // the next snapshot removes them
	}
	removed := false
	for _, s := range segs {
		if s.seq < keep {
			if os.Remove(s.path) == nil {
				removed = true
			}
		}
	}
	if removed {
		_ = syncDir(filepath.Dir(l.opts.Path))
	}
	return nil
}

// Close fsyncs the current segment and stops the log. Records appended
// after Close are not written.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	serr := l.Sync()
	l.mu.Lock()
	l.closed = true
	f := l.cur
	l.cur = nil
	l.cond.Broadcast()
	l.mu.Unlock()
	close(l.done)
	l.wg.Wait()
	l.opts.Reporter.untrack(l)
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if f != nil {
		if err := f.Close(); err != nil && serr == nil {
			serr = err
		}
	}
	return serr
}
