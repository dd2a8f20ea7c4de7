package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxNames bounds the series and names readers keep decoded; past it
// they start again from none.
const maxNames = 1 << 17

// names are the series and names readers have met, decoded once: events
// and notices refer to them by id, and a label set is read and decoded
// once for all its events. A series or a name is never changed but by
// the writer filling the labels of a series known by its fingerprint
// only (forget), nor its id given to another (AUTOINCREMENT).
type names struct {
	mu     sync.Mutex
	series map[int64]*seriesInfo
	names  map[int64]string
}

type seriesInfo struct {
	fingerprint string // 16 hex digits
	alertname   string
	labels      map[string]string // shared: copy before handing out
}

func (n *names) reset() {
	n.mu.Lock()
	n.series, n.names = nil, nil
	n.mu.Unlock()
}

// forget drops series whose labels the writer filled.
func (n *names) forget(ids []int64) {
	if len(ids) == 0 {
		return
	}
	n.mu.Lock()
	for _, id := range ids {
		delete(n.series, id)
	}
	n.mu.Unlock()
}

// resolve returns the series and names of these ids, reading those it
// has not met; an id the file lacks is nil or empty in the maps.
func (n *names) resolve(ctx context.Context, db *sql.DB, seriesIDs, nameIDs []int64) (map[int64]*seriesInfo, map[int64]string, error) {
	series, names := make(map[int64]*seriesInfo, len(seriesIDs)), make(map[int64]string, len(nameIDs))
	var missingS, missingN []int64
	n.mu.Lock()
	for _, id := range seriesIDs {
		if si, ok := n.series[id]; ok {
			series[id] = si
		} else if _, dup := series[id]; !dup {
			series[id] = nil
			missingS = append(missingS, id)
		}
	}
	for _, id := range nameIDs {
		if name, ok := n.names[id]; ok {
			names[id] = name
		} else if _, dup := names[id]; !dup {
			names[id] = ""
			missingN = append(missingN, id)
		}
	}
	n.mu.Unlock()
	if len(missingS) > 0 {
		err := byIDs(ctx, db, "SELECT id, fingerprint, alertname, labels FROM series WHERE id IN ", missingS, func(rows *sql.Rows) error {
			var (
				id, fp int64
				si     seriesInfo
				ls     sql.RawBytes
			)
			if err := rows.Scan(&id, &fp, &si.alertname, &ls); err != nil {
				return err
			}
			si.fingerprint = fmt.Sprintf("%016x", uint64(fp))
			if len(ls) > 0 {
				if err := json.Unmarshal(ls, &si.labels); err != nil {
					return fmt.Errorf("labels of series %d: %w", id, err)
				}
			}
			series[id] = &si
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if len(missingN) > 0 {
		err := byIDs(ctx, db, "SELECT id, name FROM names WHERE id IN ", missingN, func(rows *sql.Rows) error {
			var (
				id   int64
				name string
			)
			if err := rows.Scan(&id, &name); err != nil {
				return err
			}
			names[id] = name
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if len(missingS)+len(missingN) > 0 {
		n.mu.Lock()
		if n.series == nil || len(n.series)+len(n.names) > maxNames {
			n.series, n.names = map[int64]*seriesInfo{}, map[int64]string{}
		}
		for _, id := range missingS {
			if si := series[id]; si != nil {
				n.series[id] = si
			}
		}
		for _, id := range missingN {
			if name := names[id]; name != "" {
				n.names[id] = name
			}
		}
		n.mu.Unlock()
	}
	return series, names, nil
}

// byIDs runs query (ending in "IN ") for ids, a few hundred at a time,
// and calls fn for each row.
func byIDs(ctx context.Context, db *sql.DB, query string, ids []int64, fn func(*sql.Rows) error) error {
	for part := range slices.Chunk(ids, maxIDList) {
		if err := eachRow(ctx, db, query+idList(part), nil, fn); err != nil {
			return err
		}
	}
	return nil
}

// maxIDList is the most ids an idList holds, well within SQLite's limit
// on the length of a statement.
const maxIDList = 500

// idList writes ids as an SQL list, "(1,2,3)".
func idList(ids []int64) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	b.WriteByte(')')
	return b.String()
}

// eachRow runs a query and calls fn for each row.
func eachRow(ctx context.Context, db *sql.DB, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
