package history

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// MaxLimit is the most events one query returns.
const MaxLimit = 10000

// Query selects events, oldest first. Zero fields select everything.
type Query struct {
	// Matchers select events by their labels, as match[] does in
	// Prometheus's API: an event is selected when all the matchers of
	// one of the sets match its labels (events without labels match only
	// matchers that match the empty value).
	Matchers [][]*labels.Matcher
	// Alertname selects the events of one alert name.
	Alertname string
	// Fingerprint selects the events of one alert.
	Fingerprint string
	// GroupKey selects the events of one notification group
	// (notifications and acknowledgements).
	GroupKey string
	// Types selects events of these types.
	Types []string
	// Start and End bound the events' times, both included.
	Start, End time.Time
	// Limit is the most events returned (at most MaxLimit); 0 means
	// MaxLimit.
	Limit int
	// Cursor continues a previous query after its last event (Page.Next).
	Cursor string
	// NoLabels leaves the events' Labels out (Alertname and Fingerprint
	// stay): a reader of many events that needs the labels of few, such
	// as the report, spares decoding them all. Matchers other than an
	// alertname need the labels: with them it is ignored.
	NoLabels bool
}

// Page is the answer to a Query.
type Page struct {
	Events []Event
	// Next, when not empty, is the cursor of the events that did not fit.
	Next string
}

// cursor is the position after an event: its time and id.
type cursor struct {
	ms int64
	id int64
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.ms, 10) + "." + strconv.FormatInt(c.id, 10)))
}

// ParseCursor checks a cursor from Page.Next.
func ParseCursor(s string) error {
	_, err := parseCursor(s)
	return err
}

func parseCursor(s string) (cursor, error) {
	bad := errors.New("invalid cursor: pass the next value of a previous answer unchanged")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, bad
	}
	ms, id, ok := strings.Cut(string(b), ".")
	if !ok {
		return cursor{}, bad
	}
	var c cursor
	if c.ms, err = strconv.ParseInt(ms, 10, 64); err != nil {
		return cursor{}, bad
	}
	if c.id, err = strconv.ParseInt(id, 10, 64); err != nil || c.id < 0 {
		return cursor{}, bad
	}
	return c, nil
}

// Query returns the events q selects, oldest first.
func (s *Store) Query(ctx context.Context, q Query) (Page, error) {
	if s == nil {
		return Page{}, nil
	}
	limit := q.Limit
	if limit <= 0 || limit > MaxLimit {
		limit = MaxLimit
	}
	var (
		where []string
		args  []any
	)
	alertname := q.Alertname
	rest := q.Matchers
	if len(q.Matchers) == 1 {
		// One set: its alertname="x" is the index's.
		rest = [][]*labels.Matcher{nil}
		for _, m := range q.Matchers[0] {
			if m.Name == labels.AlertName && m.Type == labels.MatchEqual && m.Value != "" && (alertname == "" || alertname == m.Value) {
				alertname = m.Value
				continue
			}
			rest[0] = append(rest[0], m)
		}
		if len(rest[0]) == 0 {
			rest = nil
		}
	}
	if alertname != "" {
		where, args = append(where, "alertname = ?"), append(args, alertname)
	}
	if q.Fingerprint != "" {
		where, args = append(where, "fingerprint = ?"), append(args, q.Fingerprint)
	}
	if q.GroupKey != "" {
		where, args = append(where, "group_key = ?"), append(args, q.GroupKey)
	}
	if len(q.Types) > 0 {
		col := "type"
		if alertname != "" || q.Fingerprint != "" || q.GroupKey != "" {
			// +type: not the type index. The alert's or the group's
			// events are far fewer than a type's, which SQLite cannot
			// know without statistics.
			col = "+type"
		}
		where = append(where, col+" IN (?"+strings.Repeat(", ?", len(q.Types)-1)+")")
		for _, t := range q.Types {
			args = append(args, t)
		}
	}
	if !q.Start.IsZero() {
		where, args = append(where, "time >= ?"), append(args, q.Start.UnixMilli())
	}
	if !q.End.IsZero() {
		where, args = append(where, "time <= ?"), append(args, q.End.UnixMilli())
	}
	if q.Cursor != "" {
		c, err := parseCursor(q.Cursor)
		if err != nil {
			return Page{}, err
		}
		// time >= ? first: a range the time indexes answer (an OR alone
		// would make SQLite scan from the start at every page).
		where = append(where, "time >= ? AND (time > ? OR id > ?)")
		args = append(args, c.ms, c.ms, c.id)
	}
	labelsCol := "labels"
	if q.NoLabels && len(rest) == 0 {
		labelsCol = "NULL"
	}
	stmt := "SELECT id, time, type, alertname, fingerprint, " + labelsCol + ", group_key, receiver, integration, outcome, user, details FROM events"
	if len(where) > 0 {
		stmt += " WHERE " + strings.Join(where, " AND ")
	}
	stmt += " ORDER BY time, id"
	if len(rest) == 0 {
		// Every row is an answer: let SQLite stop.
		stmt += " LIMIT " + strconv.Itoa(limit+1)
	}

	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	rows, err := s.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return Page{}, fmt.Errorf("history: %w", err)
	}
	defer rows.Close()
	var page Page
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return Page{}, fmt.Errorf("history: %w", err)
		}
		if !matches(rest, e.Labels) {
			continue
		}
		if len(page.Events) == limit {
			last := page.Events[limit-1]
			page.Next = cursor{ms: last.Time.UnixMilli(), id: last.ID}.String()
			break
		}
		page.Events = append(page.Events, e)
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("history: %w", err)
	}
	return page, nil
}

// matches tells whether ls matches every matcher of one of the sets (or
// there are none).
func matches(sets [][]*labels.Matcher, ls map[string]string) bool {
	if len(sets) == 0 {
		return true
	}
next:
	for _, ms := range sets {
		for _, m := range ms {
			if !m.Matches(ls[m.Name]) {
				continue next
			}
		}
		return true
	}
	return false
}

func scanEvent(rows *sql.Rows) (Event, error) {
	var (
		e             Event
		ms            int64
		lbls, details sql.NullString
	)
	if err := rows.Scan(&e.ID, &ms, &e.Type, &e.Alertname, &e.Fingerprint, &lbls, &e.GroupKey, &e.Receiver,
		&e.Integration, &e.Outcome, &e.User, &details); err != nil {
		return Event{}, err
	}
	e.Time = time.UnixMilli(ms).UTC()
	if lbls.Valid && lbls.String != "" {
		if err := json.Unmarshal([]byte(lbls.String), &e.Labels); err != nil {
			return Event{}, fmt.Errorf("event %d: labels: %w", e.ID, err)
		}
	}
	if details.Valid && details.String != "" {
		e.Details = json.RawMessage(details.String)
	}
	return e, nil
}
