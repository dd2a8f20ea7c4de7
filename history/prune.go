package history

import (
	"context"
	"errors"
	"slices"
	"time"
)

// prune deletes the events older than the retention and, while the file
// holds more than MaxBytes of events, the oldest ones; it never deletes
// the newest event. Their notices go with them, and the series and names
// left without events. Freed pages go back to the file system.
func (s *Store) prune(now time.Time) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.w == nil {
		return
	}
	ctx := context.Background()
	n, err := s.pruneRetention(ctx, now)
	if err != nil {
		s.logger.Warn("pruning the history by age failed", "err", err)
	}
	s.metrics.pruned.WithLabelValues("retention").Add(float64(n))
	m, err := s.pruneSize(ctx)
	if err != nil {
		s.logger.Warn("pruning the history by size failed", "err", err)
	}
	s.metrics.pruned.WithLabelValues("size").Add(float64(m))
	if n+m == 0 {
		return
	}
	if err := s.sweep(ctx); err != nil {
		s.logger.Warn("deleting the history's unused series and names failed", "err", err)
	}
	if _, err := s.w.conn.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		s.logger.Warn("returning the history's free pages failed", "err", err)
	}
	// The file shrinks when the WAL is written back into it.
	if _, err := s.w.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		s.logger.Warn("checkpointing the history failed", "err", err)
	}
	s.logger.Debug("history pruned", "by_age", n, "by_size", m)
}

// deleteEvents deletes the events cond selects and their notices, in one
// transaction; it returns the events deleted.
func (s *Store) deleteEvents(ctx context.Context, cond string, args ...any) (n int64, err error) {
	conn := s.w.conn
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(ctx, "ROLLBACK")
		}
	}()
	if _, err := conn.ExecContext(ctx, "DELETE FROM notices WHERE id IN (SELECT id FROM events WHERE "+cond+")", args...); err != nil {
		return 0, err
	}
	res, err := conn.ExecContext(ctx, "DELETE FROM events WHERE "+cond, args...)
	if err != nil {
		return 0, err
	}
	if n, err = res.RowsAffected(); err != nil {
		return 0, err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return n, err
}

func (s *Store) pruneRetention(ctx context.Context, now time.Time) (int64, error) {
	cutoff := now.Add(-s.opts.Retention).UnixMilli()
	return s.deleteEvents(ctx, "time < ? AND id < (SELECT max(id) FROM events)", cutoff)
}

// usedBytes is the size of the pages that hold data.
func (s *Store) usedBytes(ctx context.Context) (int64, error) {
	var pages, free, size int64
	for _, p := range []struct {
		pragma string
		v      *int64
	}{{"page_count", &pages}, {"freelist_count", &free}, {"page_size", &size}} {
		if err := s.w.conn.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(p.v); err != nil {
			return 0, err
		}
	}
	return (pages - free) * size, nil
}

// pruneSize deletes the oldest events until the data fits in 90 % of
// MaxBytes, estimating the bytes of an event from the file's average.
func (s *Store) pruneSize(ctx context.Context) (int64, error) {
	var deleted int64
	for range 8 { // the estimate converges in one or two rounds
		used, err := s.usedBytes(ctx)
		if err != nil || used <= s.opts.MaxBytes {
			return deleted, err
		}
		var count int64
		if err := s.w.conn.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&count); err != nil || count <= 1 {
			return deleted, err
		}
		target := s.opts.MaxBytes / 10 * 9
		per := max(used/count, 1)
		k := min((used-target)/per+1, count-1)
		var last int64
		if err := s.w.conn.QueryRowContext(ctx, "SELECT id FROM events ORDER BY id LIMIT 1 OFFSET ?", k-1).Scan(&last); err != nil {
			return deleted, err
		}
		n, err := s.deleteEvents(ctx, "id <= ?", last)
		deleted += n
		if err != nil || n == 0 {
			return deleted, err
		}
	}
	return deleted, nil
}

// sweep deletes the series and names no event refers to any more, as
// the writer counts them: without reading the events.
func (s *Store) sweep(ctx context.Context) (err error) {
	conn := s.w.conn
	var oldest int64
	if err := conn.QueryRowContext(ctx, "SELECT coalesce(min(id), 0) FROM events").Scan(&oldest); err != nil {
		return err
	}
	series, names := s.w.unused(oldest)
	if len(series)+len(names) == 0 {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return errors.Join(err, s.w.load(ctx))
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(ctx, "ROLLBACK")
			err = errors.Join(err, s.w.load(ctx)) // it forgot them
		}
	}()
	for _, d := range []struct {
		table string
		ids   []int64
	}{{"series", series}, {"names", names}} {
		for ids := range slices.Chunk(d.ids, maxIDList) {
			if _, err := conn.ExecContext(ctx, "DELETE FROM "+d.table+" WHERE id IN "+idList(ids)); err != nil {
				return err
			}
		}
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}
