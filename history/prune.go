package history

import (
	"database/sql"
	"time"
)

// prune deletes the events older than the retention and, while the file
// holds more than MaxBytes of events, the oldest ones; it never deletes
// the newest event. Freed pages go back to the file system.
func (s *Store) prune(now time.Time) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	n, err := s.pruneRetention(now)
	if err != nil {
		s.logger.Warn("pruning the history by age failed", "err", err)
	}
	s.metrics.pruned.WithLabelValues("retention").Add(float64(n))
	m, err := s.pruneSize()
	if err != nil {
		s.logger.Warn("pruning the history by size failed", "err", err)
	}
	s.metrics.pruned.WithLabelValues("size").Add(float64(m))
	if n+m > 0 {
		if _, err := s.db.Exec("PRAGMA incremental_vacuum"); err != nil {
			s.logger.Warn("returning the history's free pages failed", "err", err)
		}
		// The file shrinks when the WAL is written back into it.
		if _, err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			s.logger.Warn("checkpointing the history failed", "err", err)
		}
		s.logger.Debug("history pruned", "by_age", n, "by_size", m)
	}
}

func (s *Store) pruneRetention(now time.Time) (int64, error) {
	cutoff := now.Add(-s.opts.Retention).UnixMilli()
	res, err := s.db.Exec(`DELETE FROM events WHERE time < ? AND id < (SELECT max(id) FROM events)`, cutoff)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// usedBytes is the size of the pages that hold data.
func usedBytes(db *sql.DB) (int64, error) {
	var pages, free, size int64
	if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		return 0, err
	}
	if err := db.QueryRow("PRAGMA freelist_count").Scan(&free); err != nil {
		return 0, err
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
		return 0, err
	}
	return (pages - free) * size, nil
}

// pruneSize deletes the oldest events until the data fits in 90 % of
// MaxBytes, estimating the bytes of an event from the file's average.
func (s *Store) pruneSize() (int64, error) {
	var deleted int64
	for range 8 { // the estimate converges in one or two rounds
		used, err := usedBytes(s.db)
		if err != nil || used <= s.opts.MaxBytes {
			return deleted, err
		}
		var count int64
		if err := s.db.QueryRow("SELECT count(*) FROM events").Scan(&count); err != nil || count <= 1 {
			return deleted, err
		}
		target := s.opts.MaxBytes / 10 * 9
		per := max(used/count, 1)
		k := min((used-target)/per+1, count-1)
		res, err := s.db.Exec(`DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY id LIMIT ?)`, k)
		if err != nil {
			return deleted, err
		}
		n, _ := res.RowsAffected()
		deleted += n
		if n == 0 {
			return deleted, nil
		}
	}
	return deleted, nil
}
