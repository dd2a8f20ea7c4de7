package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// scanMargin is how far before start Scan begins to look by id: an event
// is committed at most this long after its time (a batch's events wait a
// second; an evaluation's take its time), so one with a larger id and an
// earlier time than another is never further apart than this.
const scanMargin = time.Hour

// Scan calls fn for every event from start to end (both included), in
// the order they were recorded, which is their time order but for events
// recorded in one batch, without their Labels (Alertname and Fingerprint
// are set): the reader of a whole span, such as the report, reads the
// file once from its first event on, instead of page by page through the
// time index. The event passed to fn is reused: fn keeps what it needs.
//
// types, when given, selects the events of those types.
func (s *Store) Scan(ctx context.Context, start, end time.Time, types []string, fn func(*Event) error) error {
	if s == nil {
		return nil
	}
	typeFilter := ""
	args := []any{start.Add(-scanMargin).UnixMilli(), start.UnixMilli(), end.UnixMilli()}
	if len(types) > 0 {
		typeFilter = " AND +type IN (?" + strings.Repeat(", ?", len(types)-1) + ")"
		for _, t := range types {
			args = append(args, t)
		}
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	// The first id in the span, found by the time index; then the table
	// in id order, each row checked against the span (+time: not the
	// index).
	rows, err := s.db.QueryContext(ctx, `SELECT id, time, type, alertname, fingerprint, group_key, receiver, integration, outcome, user, details
FROM events WHERE id >= coalesce((SELECT id FROM events WHERE time >= ? ORDER BY time LIMIT 1), 1 << 62)
AND +time >= ? AND +time <= ?`+typeFilter+` ORDER BY id`, args...)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer rows.Close()
	var (
		e       Event
		ms      int64
		details sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&e.ID, &ms, &e.Type, &e.Alertname, &e.Fingerprint, &e.GroupKey, &e.Receiver,
			&e.Integration, &e.Outcome, &e.User, &details); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		e.Time = time.UnixMilli(ms).UTC()
		e.Details = json.RawMessage(details)
		if err := fn(&e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// Transitions are how often one alert fired and resolved.
type Transitions struct {
	Fingerprint, Alertname string
	Labels                 map[string]string
	Fired, Resolved        int
}

// CountTransitions counts the firing and resolved events of every alert
// from start to end (both included), in SQLite, without reading the
// events out; each alert comes with its labels.
func (s *Store) CountTransitions(ctx context.Context, start, end time.Time) ([]Transitions, error) {
	if s == nil {
		return nil, nil
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	rows, err := s.db.QueryContext(ctx, `SELECT fingerprint, max(alertname), max(labels), sum(type = 'firing'), sum(type = 'resolved') FROM events
WHERE type IN ('firing', 'resolved') AND time >= ? AND time <= ? AND fingerprint != '' GROUP BY fingerprint ORDER BY fingerprint`,
		start.UnixMilli(), end.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer rows.Close()
	var out []Transitions
	for rows.Next() {
		var (
			t    Transitions
			lbls sql.NullString
		)
		if err := rows.Scan(&t.Fingerprint, &t.Alertname, &lbls, &t.Fired, &t.Resolved); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		if lbls.Valid && lbls.String != "" {
			if err := json.Unmarshal([]byte(lbls.String), &t.Labels); err != nil {
				return nil, fmt.Errorf("history: labels of %s: %w", t.Fingerprint, err)
			}
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return out, nil
}
