package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/pagedhq/paged/internal/durable"
)

// FileName is the history's file under storage.path.
const FileName = "history.db"

// Defaults of Options.
const (
	DefaultRetention     = 30 * 24 * time.Hour
	DefaultMaxBytes      = 1 << 30
	DefaultBatchSize     = 512
	DefaultBatchInterval = time.Second
	DefaultQueueSize     = 1 << 16
	DefaultPruneInterval = time.Minute
	DefaultRetryInterval = 5 * time.Second
)

// readPragmas size each connection's page cache (16 MiB, not SQLite's
// default 2 MiB): the report and the timelines read many pages of a file
// of hundreds of MiB.
const readPragmas = "&_pragma=cache_size(-16384)"

// mmapPragma maps the file into memory for a reader (paged report, paged
// history --storage.path): a page read through the map costs no system
// call. Not in paged run, where an I/O error under a map would be a
// SIGBUS instead of an error the history logs and pages through.
const mmapPragma = "&_pragma=mmap_size(1073741824)"

// Options configure a Store. Open fills the defaults.
type Options struct {
	// Path of the history file. Required.
	Path string
	// Retention is how long an event is kept. Default 30 days.
	Retention time.Duration
	// MaxBytes bounds the file; past it the oldest events are deleted.
	// Default 1 GiB.
	MaxBytes int64
	// BatchSize: a commit is made once this many events wait. Default 512.
	BatchSize int
	// BatchInterval: events wait at most this long for their commit.
	// Default 1s.
	BatchInterval time.Duration
	// QueueSize bounds the events waiting for a commit; past it the
	// oldest are dropped and counted. Default 65536.
	QueueSize int
	// PruneInterval is how often retention and the size bound are
	// applied. Default 1m.
	PruneInterval time.Duration
	// RetryInterval: after a failed commit (a full disk) the next is
	// tried this long after, as the other state files are; meanwhile a
	// Flush answers at once with the failure and the events wait in
	// memory. Default 5s.
	RetryInterval time.Duration
	// Reporter receives a damaged file moved aside and write failures,
	// as for the other state files. Nil: none.
	Reporter *durable.Reporter
	// Logger; nil discards.
	Logger *slog.Logger
	// Registerer receives the history's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Now is the clock of retention; default time.Now.
	Now func() time.Time
}

func (o *Options) validate() error {
	var errs []error
	if o.Path == "" {
		errs = append(errs, errors.New("history: a path is required"))
	}
	if o.Retention < 0 {
		errs = append(errs, errors.New("history: retention must not be negative"))
	}
	if o.MaxBytes < 0 {
		errs = append(errs, errors.New("history: max bytes must not be negative"))
	}
	if o.BatchSize < 0 || o.QueueSize < 0 || o.BatchInterval < 0 || o.PruneInterval < 0 {
		errs = append(errs, errors.New("history: batch size, queue size and intervals must not be negative"))
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchInterval == 0 {
		o.BatchInterval = DefaultBatchInterval
	}
	if o.QueueSize == 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.QueueSize < o.BatchSize {
		o.QueueSize = o.BatchSize
	}
	if o.PruneInterval == 0 {
		o.PruneInterval = DefaultPruneInterval
	}
	if o.RetryInterval == 0 {
		o.RetryInterval = DefaultRetryInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Store is the event history. Its methods are safe for concurrent use,
// and a nil *Store records nothing and finds nothing, so that a paged
// whose history could not be opened pages all the same.
type Store struct {
	opts     Options
	logger   *slog.Logger
	metrics  *metrics
	readOnly bool

	dbMu sync.RWMutex // guards db and w against their replacement after a corruption
	db   *sql.DB
	w    *writer // nil when read-only

	names names // what readers know of the series and names

	mu      sync.Mutex
	queue   []Event
	waiters []chan error
	wake    chan struct{}

	done    chan struct{}
	stopped chan struct{}
	close   sync.Once

	// writeMu makes the writer's connection, whose transactions are its
	// BEGIN and COMMIT, one caller's at a time: commits and pruning.
	writeMu sync.Mutex

	// the writer's goroutine's own
	lastPrune time.Time
	failing   bool
	lastErr   error     // of the last commit, while failing
	lastTry   time.Time // of the last commit, while failing (the machine's clock, not Now: a pace)
}

// Open opens (or creates) the history file and starts the goroutine that
// commits events; Close stops it. A file that SQLite finds damaged is
// moved aside (<file>.corrupt.<unix seconds>, its WAL beside it) and a
// new one started; so is a file of the first schema (<file>.v1.<unix
// seconds>, with a warning). An error means there is no history at all
// (the directory cannot be written, for one): the caller goes on without.
func Open(opts Options) (*Store, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	if err := os.MkdirAll(filepath.Dir(opts.Path), 0o750); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	s := &Store{
		opts:    opts,
		logger:  opts.Logger,
		metrics: newMetrics(opts.Registerer),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	db, w, err := s.openFile(nil)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", opts.Path, err)
	}
	s.db, s.w = db, w
	s.metrics.size = s.fileSize
	go s.run()
	return s, nil
}

// OpenReadOnly opens a history file to read it (paged history
// --storage.path), beside a paged that may be writing it.
func OpenReadOnly(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)"+readPragmas+mmapPragma)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", path, err)
	}
	version, err := schemaOf(db)
	if err == nil && version != schemaVersion {
		err = fmt.Errorf("the file has schema version %d, this paged reads version %d", version, schemaVersion)
		if version == 1 {
			err = errors.New("the file has schema version 1, written by an earlier paged: paged run moves it aside and starts a new one; read it with the sqlite3 command")
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("history: %s: %w", path, err)
	}
	s := &Store{opts: Options{Path: path, Logger: slog.New(slog.DiscardHandler)}, db: db, readOnly: true, metrics: newMetrics(nil)}
	s.logger = s.opts.Logger
	return s, nil
}

// openWritable opens path in WAL mode with the schema in place and
// checks that SQLite can read all of it.
func openWritable(path string) (*sql.DB, error) {
	// auto_vacuum must precede the first table: deleted events then give
	// their pages back to the file system (incremental_vacuum in prune).
	// temp_store(memory): the statement journal of an INSERT of many rows
	// (writer) stays in memory instead of a temporary file written page
	// by page.
	dsn := "file:" + path + "?_pragma=auto_vacuum(incremental)&_pragma=busy_timeout(5000)" +
		"&_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_pragma=temp_store(memory)" + readPragmas + "&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	if err := initDB(db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func initDB(db *sql.DB) error {
	var check string
	if err := db.QueryRow("PRAGMA quick_check").Scan(&check); err != nil {
		return err
	}
	if check != "ok" {
		return corruptError{check}
	}
	version, err := schemaOf(db)
	switch {
	case err != nil:
		return err
	case version == 1:
		return errSchemaV1
	case version > schemaVersion:
		return fmt.Errorf("history file has schema version %d, newer than this paged's %d", version, schemaVersion)
	}
	if _, err := db.Exec(schema); err != nil {
		return err
	}
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
	return err
}

// openFile opens the history file for writing. A file found damaged,
// now or by the error that made the caller reopen it (damaged: when it
// is a corruption), is moved aside and a new one started; so is a file of
// schema version 1, with a log line.
func (s *Store) openFile(damaged error) (*sql.DB, *writer, error) {
	var (
		db  *sql.DB
		err = damaged
	)
	if err == nil || !isCorrupt(err) {
		db, err = openWritable(s.opts.Path)
	}
	if errors.Is(err, errSchemaV1) {
		var moved string
		if moved, err = moveAsideV1(s.opts.Path, s.opts.Now()); err != nil {
			return nil, nil, fmt.Errorf("moving a history file of schema version 1 aside: %w", err)
		}
		s.logger.Warn("the history file was written by an earlier paged (schema version 1): it is moved aside, where the sqlite3 command reads it, and a new one started",
			"file", s.opts.Path, "moved_to", moved)
		db, err = openWritable(s.opts.Path)
	}
	if err != nil && isCorrupt(err) {
		db, err = s.recover(err)
	}
	if err != nil {
		return nil, nil, err
	}
	w, err := newWriter(db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, w, nil
}

// corruptError is what PRAGMA quick_check found.
type corruptError struct{ check string }

func (e corruptError) Error() string {
	return "database is damaged: " + strings.ReplaceAll(e.check, "\n", "; ")
}

// isCorrupt tells whether err says the file is not (or no longer) a
// database SQLite can read.
func isCorrupt(err error) bool {
	if errors.As(err, new(corruptError)) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

// recover moves the damaged file aside with its WAL and opens a new one.
func (s *Store) recover(reason error) (*sql.DB, error) {
	path := s.opts.Path
	moved, err := durable.MoveAside(path, s.opts.Now())
	if err != nil {
		return nil, fmt.Errorf("moving the damaged file aside: %w (it was: %v)", err, reason)
	}
	// SQLite finds a database's WAL by its name: keep them together so
	// that the moved file opens as it was. The shared-memory index is
	// rebuilt from the WAL.
	if _, err := os.Stat(path + "-wal"); err == nil {
		_ = os.Rename(path+"-wal", moved+"-wal")
	}
	_ = os.Remove(path + "-shm")
	s.opts.Reporter.Corrupted(path, moved, reason)
	s.metrics.corruptions.Inc()
	return openWritable(path)
}

// Record queues events for the next commit; it never blocks. Events
// without a time get the store's clock.
func (s *Store) Record(events ...Event) {
	if s == nil || s.readOnly || len(events) == 0 {
		return
	}
	s.mu.Lock()
	s.queue = slices.Grow(s.queue, len(events))
	for _, e := range events {
		if e.Time.IsZero() {
			e.Time = s.opts.Now()
		}
		e.normalize()
		s.queue = append(s.queue, e)
	}
	if over := len(s.queue) - s.opts.QueueSize; over > 0 {
		clear(s.queue[:over])
		s.queue = s.queue[over:]
		s.metrics.dropped.Add(float64(over))
	}
	full := len(s.queue) >= s.opts.BatchSize
	s.mu.Unlock()
	if full {
		s.poke()
	}
}

func (s *Store) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Flush commits the events recorded before it and returns once they are
// in the file (or ctx ends): the barrier a writer calls before it acts
// on what they say. Events recorded together by concurrent writers share
// one commit.
func (s *Store) Flush(ctx context.Context) error {
	if s == nil || s.readOnly {
		return nil
	}
	ch := make(chan error, 1)
	s.mu.Lock()
	s.waiters = append(s.waiters, ch)
	s.mu.Unlock()
	s.poke()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stopped:
		return errors.New("history: closed")
	}
}

// Close commits what is queued and closes the file.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	if s.readOnly {
		return s.db.Close()
	}
	s.close.Do(func() { close(s.done) })
	<-s.stopped
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.w != nil {
		s.w.close()
	}
	return s.db.Close()
}

// run is the writer: it commits the queue when it is full, when a Flush
// asks, and every BatchInterval; and it prunes every PruneInterval.
func (s *Store) run() {
	defer close(s.stopped)
	t := time.NewTicker(s.opts.BatchInterval)
	defer t.Stop()
	for {
		select {
		case <-s.wake:
		case <-t.C:
		case <-s.done:
			s.lastTry = time.Time{} // a last try, failing or not
			s.commitQueued()
			return
		}
		s.commitQueued()
		if now := s.opts.Now(); now.Sub(s.lastPrune) >= s.opts.PruneInterval {
			s.lastPrune = now
			s.prune(now)
		}
	}
}

// commitQueued commits the queue in one transaction and answers the
// waiters. On failure the events go back to the front of the queue (the
// queue's bound still holds) and are tried again.
func (s *Store) commitQueued() {
	if s.failing && time.Since(s.lastTry) < s.opts.RetryInterval {
		// Not yet time to try again: whoever waits for a commit hears
		// of the failure now, not at the next try (the engine would
		// hold every evaluation's notifications that long).
		s.mu.Lock()
		waiters := s.waiters
		s.waiters = nil
		s.mu.Unlock()
		for _, w := range waiters {
			w <- s.lastErr
		}
		return
	}
	s.mu.Lock()
	batch, waiters := s.queue, s.waiters
	s.queue, s.waiters = nil, nil
	s.mu.Unlock()
	if len(batch) == 0 {
		for _, w := range waiters {
			w <- nil
		}
		return
	}
	err := s.insert(batch)
	if err != nil && (isCorrupt(err) || errors.Is(err, errNoWriter)) {
		err = s.reopen(err)
		if err == nil {
			err = s.insert(batch)
		}
	}
	if err != nil {
		s.metrics.writeFailures.Inc()
		s.opts.Reporter.WriteFailed(s.opts.Path, err, s.opts.Now())
		if !s.failing {
			s.logger.Error("writing the history failed; events are kept in memory and the write retried", "file", s.opts.Path, "err", err)
		}
		s.failing, s.lastErr, s.lastTry = true, err, time.Now()
		s.mu.Lock()
		s.queue = append(batch, s.queue...)
		if over := len(s.queue) - s.opts.QueueSize; over > 0 {
			s.queue = s.queue[over:]
			s.metrics.dropped.Add(float64(over))
		}
		s.mu.Unlock()
	} else {
		if s.failing {
			s.opts.Reporter.WriteRecovered(s.opts.Path)
			s.failing, s.lastErr = false, nil
		}
		s.metrics.commits.Inc()
		s.metrics.events.Add(float64(len(batch)))
	}
	for _, w := range waiters {
		w <- err
	}
}

// reopen replaces the file's handle after an error that said the file
// is damaged (it is moved aside) or that the last reopening failed.
func (s *Store) reopen(reason error) error {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.w != nil {
		s.w.close()
		s.w = nil
	}
	s.db.Close()
	db, w, err := s.openFile(reason)
	if err != nil {
		// Keep a handle that fails cleanly until the next try.
		s.db, _ = sql.Open("sqlite", "file:"+s.opts.Path+"?mode=ro")
		return err
	}
	s.db, s.w = db, w
	s.names.reset()
	return nil
}

// insert commits a batch; errNoWriter when the file could not be
// opened again after a corruption.
func (s *Store) insert(batch []Event) error {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.w == nil {
		return errNoWriter
	}
	if err := s.w.insert(context.Background(), batch); err != nil {
		return err
	}
	s.names.forget(s.w.filled)
	return nil
}

var errNoWriter = errors.New("the history file could not be opened again")

// fileSize is the size of the history file and its WAL.
func (s *Store) fileSize() float64 {
	var n int64
	for _, p := range []string{s.opts.Path, s.opts.Path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return float64(n)
}
