package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Transitions are how often one alert fired and resolved.
type Transitions struct {
	Fingerprint, Alertname string
	Labels                 map[string]string
	Fired, Resolved        int
}

// CountTransitions counts the firing and resolved events of every alert
// from start to end (both included), from the time index without reading
// the events; each alert comes with its labels.
func (s *Store) CountTransitions(ctx context.Context, start, end time.Time) ([]Transitions, error) {
	if s == nil {
		return nil, nil
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	// Counted here rather than by GROUP BY, which would have SQLite sort
	// every firing and resolution of the span; and read as one list of
	// numbers (the alert's series id, negative for a resolution), a
	// fraction of the cost of a row each through database/sql.
	counts := map[int64]*Transitions{}
	var (
		ids  []int64
		list sql.NullString
	)
	err := s.db.QueryRowContext(ctx, `SELECT group_concat(CASE type WHEN 'firing' THEN alert ELSE -alert END) FROM events
WHERE time >= ? AND time <= ? AND type IN ('firing', 'resolved') AND alert IS NOT NULL`, start.UnixMilli(), end.UnixMilli()).Scan(&list)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	for v := range strings.SplitSeq(list.String, ",") {
		if v == "" {
			continue
		}
		alert, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("history: counting transitions: %w", err)
		}
		fired := alert > 0
		alert = max(alert, -alert)
		t := counts[alert]
		if t == nil {
			t = &Transitions{}
			counts[alert] = t
			ids = append(ids, alert)
		}
		if fired {
			t.Fired++
		} else {
			t.Resolved++
		}
	}
	series, _, err := s.names.resolve(ctx, s.db, ids, nil)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	out := make([]Transitions, 0, len(ids))
	for _, id := range ids {
		if si := series[id]; si != nil {
			t := counts[id]
			t.Fingerprint, t.Alertname, t.Labels = si.fingerprint, si.alertname, si.labels
			out = append(out, *t)
		}
	}
	return out, nil
}

// Notices calls fn for the notice of every notification and
// acknowledgement event from start to end (both included), from the
// notices table: a narrow row of numbers per page instead of the event
// and its JSON, and a row per group for its acknowledgements and
// resolutions. They come by kind, then group; the notices of a kind and
// group, and the failures, oldest first (by time, then id). The notice
// passed to fn is reused, and its Alertnames shared: fn keeps what it
// needs and changes nothing. The ID of an acknowledgement or resolution,
// read by group, is 0.
func (s *Store) Notices(ctx context.Context, start, end time.Time, fn func(*Notice) error) error {
	if s == nil {
		return nil
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	// The names first, all at once: a report meets most of them.
	names := map[int64]string{}
	err := eachRow(ctx, s.db, "SELECT id, name FROM names", nil, func(rows *sql.Rows) error {
		var (
			id   int64
			name string
		)
		err := rows.Scan(&id, &name)
		names[id] = name
		return err
	})
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	span := []any{start.UnixMilli(), end.UnixMilli()}
	var (
		n                     Notice
		ms, grp               int64
		receiver, integration sql.NullInt64
		alerts, alertIDs      sql.NullInt64
		errText, kind, times  sql.NullString
		lists                 = map[int64][]string{}
	)
	// Pages, with what makes them the same page and who delivered them.
	n = Notice{Kind: NoticePage}
	err = eachRow(ctx, s.db, "SELECT grp, time, id, receiver, integration, alerts, alertnames FROM notices WHERE kind = 'page' AND time >= ? AND time <= ?",
		span, func(rows *sql.Rows) error {
			if err := rows.Scan(&grp, &ms, &n.ID, &receiver, &integration, &alerts, &alertIDs); err != nil {
				return err
			}
			n.Time = time.UnixMilli(ms).UTC()
			n.GroupKey, n.Receiver, n.Integration = names[grp], names[receiver.Int64], names[integration.Int64]
			n.Alerts, n.Alertnames = uint64(alerts.Int64), nil
			if alertIDs.Valid {
				l, ok := lists[alertIDs.Int64]
				if !ok {
					if err := json.Unmarshal([]byte(names[alertIDs.Int64]), &l); err != nil {
						return fmt.Errorf("alert names %d: %w", alertIDs.Int64, err)
					}
					lists[alertIDs.Int64] = l
				}
				n.Alertnames = l
			}
			return fn(&n)
		})
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	// Acknowledgements and resolutions: their times, a row per group (a
	// list of numbers costs a fraction of a row each through
	// database/sql).
	n = Notice{}
	err = eachRow(ctx, s.db, "SELECT kind, grp, group_concat(time) FROM notices WHERE kind IN ('ack', 'resolved') AND time >= ? AND time <= ? GROUP BY kind, grp",
		span, func(rows *sql.Rows) error {
			if err := rows.Scan(&kind, &grp, &times); err != nil {
				return err
			}
			n.Kind, n.GroupKey = NoticeAck, names[grp]
			if kind.String == NoticeResolved {
				n.Kind = NoticeResolved
			}
			for t := range strings.SplitSeq(times.String, ",") {
				ms, err := strconv.ParseInt(t, 10, 64)
				if err != nil {
					return fmt.Errorf("notice times of group %d: %w", grp, err)
				}
				n.Time = time.UnixMilli(ms).UTC()
				if err := fn(&n); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	// Failures, with their errors, and the others, only counted: few.
	err = eachRow(ctx, s.db, "SELECT kind, grp, time, id, receiver, integration, error FROM notices WHERE kind IN ('failed', 'other') AND time >= ? AND time <= ? ORDER BY time, id",
		span, func(rows *sql.Rows) error {
			var id int64
			if err := rows.Scan(&kind, &grp, &ms, &id, &receiver, &integration, &errText); err != nil {
				return err
			}
			n = Notice{ID: id, Kind: NoticeOther, Time: time.UnixMilli(ms).UTC(), GroupKey: names[grp],
				Receiver: names[receiver.Int64], Integration: names[integration.Int64], Error: errText.String}
			if kind.String == NoticeFailed {
				n.Kind = NoticeFailed
			}
			return fn(&n)
		})
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}
