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
type Log struct {
	opts   Options
	logger *slog.Logger

	mu       sync.Mutex
	cond     *sync.Cond // signalled when synced, broken or closed change
	cur      *os.File   // the segment appended to; nil while broken
	curSeq   int        // its number
	appended uint64     // records appended (written or not)
	synced   uint64     // records known fsynced
	since    int64      // bytes appended since the last snapshot
	broken   error      // set when a write failed; cleared by a snapshot
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
// or parsed is moved aside and reported; Open fails only when the
// directory cannot be written.
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
	dir := filepath.Dir(o.Path)
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		// Something else took the directory's place: keep it, aside.
		to, merr := MoveAside(dir, o.Now())
		if merr != nil {
			return nil, fmt.Errorf("state directory %s is not a directory and cannot be moved aside: %w", dir, merr)
		}
		o.Reporter.Corrupted(dir, to, errors.New("not a directory"))
	}
	if err := CheckWritable(dir); err != nil {
		return nil, err
	}
	l := &Log{
		opts:        o,
		logger:      o.Logger,
		kickSync:    make(chan struct{}, 1),
		kickCompact: make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	l.cond = sync.NewCond(&l.mu)

	l.loadSnapshot()
	segs, err := l.segments()
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", o.Path, err)
	}
	for _, s := range segs {
		l.replaySegment(s.path)
	}
	last := 0
	if len(segs) > 0 {
		last = segs[len(segs)-1].seq
	}
	// Start clean: one snapshot of what loaded, one empty segment.
	if err := l.openSegment(last + 1); err != nil {
		return nil, fmt.Errorf("state %s is not writable: %w", o.Path, err)
	}
	if err := l.writeSnapshot(last + 1); err != nil {
		l.cur.Close()
		return nil, fmt.Errorf("state %s is not writable: %w", o.Path, err)
	}
	l.wg.Add(2)
	go l.syncLoop()
	go l.compactLoop()
	o.Reporter.track(l)
	return l, nil
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

// replaySegment applies the records of one segment. A segment that ends
// in a torn or damaged record, or holds a record Replay refuses, is moved
// aside once read: the snapshot Open writes next holds what it could read.
func (l *Log) replaySegment(p string) {
	f, err := os.Open(p)
	if err != nil {
		l.moveAside(p, err)
		return
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var bad error
	for n := 0; ; n++ {
		rec, err := readFrame(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			bad = fmt.Errorf("record %d: %w", n, err)
			break
		}
		if err := l.opts.Replay(rec); err != nil && bad == nil {
			bad = fmt.Errorf("record %d: %w", n, err)
		}
	}
	if bad != nil {
		f.Close()
		l.moveAside(p, bad)
	}
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

// openSegment creates segment seq and makes it the one appended to.
func (l *Log) openSegment(seq int) error {
	f, err := os.OpenFile(l.segmentPath(seq), os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(l.opts.Path)); err != nil {
		f.Close()
		return err
	}
	l.cur, l.curSeq = f, seq
	return nil
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
		return seq
	}
	l.buf = AppendFrame(l.buf[:0], rec)
	if _, err := l.cur.Write(l.buf); err != nil {
		l.failLocked(err)
		return seq
	}
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

// failLocked marks the log broken after a failed write: nothing more is
// appended until a snapshot succeeds.
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
		if d := l.opts.SyncInterval - time.Since(last); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-l.done:
				t.Stop()
				return
			case <-t.C:
			}
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
		l.failLocked(err)
		return
	}
	if target > l.synced && l.broken == nil {
		l.synced = target
	}
	l.cond.Broadcast()
}

func (l *Log) compactLoop() {
	defer l.wg.Done()
	retry := time.NewTicker(l.opts.RetryInterval)
	defer retry.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-l.kickCompact:
		case <-retry.C:
			if l.Healthy() == nil {
				continue
			}
		}
		if err := l.Compact(); err != nil {
			l.logger.Warn("writing state snapshot failed; retrying", "file", l.opts.Path, "err", err)
		}
	}
}

// Compact starts a new segment, writes a snapshot of the state and
// removes the segments before the new one. After a write failure it is
// also how the log recovers: the snapshot holds what the lost records
// held.
func (l *Log) Compact() error {
	l.compactMu.Lock()
	defer l.compactMu.Unlock()

	// Rotate: records appended from now on go to the new segment, and
	// the snapshot below, taken after, covers every older one.
	l.syncMu.Lock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.syncMu.Unlock()
		return nil
	}
	old, next := l.cur, l.curSeq+1
	upTo := l.appended
	f, err := os.OpenFile(l.segmentPath(next), os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o640)
	if err != nil {
		l.failLocked(err)
		l.mu.Unlock()
		l.syncMu.Unlock()
		return err
	}
	l.cur, l.curSeq, l.since = f, next, 0
	wasBroken := l.broken
	l.broken = nil
	l.mu.Unlock()
	if old != nil {
		if wasBroken == nil {
			if err := old.Sync(); err != nil {
				wasBroken = err
			}
		}
		old.Close()
	}
	l.syncMu.Unlock()

	if err := l.writeSnapshot(next); err != nil {
		l.mu.Lock()
		l.failLocked(err)
		l.mu.Unlock()
		return err
	}
	l.mu.Lock()
	l.stats.Snapshots++
	if upTo > l.synced {
		l.synced = upTo // the snapshot holds them
	}
	l.cond.Broadcast()
	l.mu.Unlock()
	if wasBroken != nil {
		l.opts.Reporter.WriteRecovered(l.opts.Path)
	}
	return nil
}

// writeSnapshot writes the snapshot atomically, then removes the segments
// numbered below keep.
func (l *Log) writeSnapshot(keep int) error {
	err := writeAtomic(l.opts.Path, func(f *os.File) error {
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
