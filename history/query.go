package history

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
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
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	sel, err := s.selection(ctx, q)
	if err != nil || sel == nil {
		return Page{}, err
	}
	// With matchers, rows are read limit+1 at a time until enough match:
	// each round goes on after the last row of the one before.
	var page Page
	for {
		stmt, args := sel.statement()
		evs, err := s.read(ctx, stmt, args, q.NoLabels && len(sel.rest) == 0)
		if err != nil {
			return Page{}, fmt.Errorf("history: %w", err)
		}
		for _, e := range evs {
			if !matches(sel.rest, e.Labels) {
				continue
			}
			if len(page.Events) == sel.limit {
				last := page.Events[sel.limit-1]
				page.Next = cursor{ms: last.Time.UnixMilli(), id: last.ID}.String()
				return page, nil
			}
			e.Labels = maps.Clone(e.Labels)
			page.Events = append(page.Events, e)
		}
		if len(evs) <= sel.limit {
			return page, nil
		}
		last := evs[len(evs)-1]
		sel.after = &cursor{ms: last.Time.UnixMilli(), id: last.ID}
	}
}

// selection is what SQLite is asked for a query, and what is left to
// check of each row.
type selection struct {
	where []string
	args  []any
	after *cursor // the events after it
	limit int
	rest  [][]*labels.Matcher // the matchers SQLite does not answer
}

// selection turns q into conditions on the indexed columns; nil when no
// event can match (an alert or a group the file does not know).
func (s *Store) selection(ctx context.Context, q Query) (*selection, error) {
	sel := &selection{limit: q.Limit, rest: q.Matchers}
	if sel.limit <= 0 || sel.limit > MaxLimit {
		sel.limit = MaxLimit
	}
	alertname := q.Alertname
	if len(q.Matchers) == 1 {
		// One set: its alertname="x" is the index's.
		sel.rest = [][]*labels.Matcher{nil}
		for _, m := range q.Matchers[0] {
			if m.Name == labels.AlertName && m.Type == labels.MatchEqual && m.Value != "" && (alertname == "" || alertname == m.Value) {
				alertname = m.Value
				continue
			}
			sel.rest[0] = append(sel.rest[0], m)
		}
		if len(sel.rest[0]) == 0 {
			sel.rest = nil
		}
	}
	if q.Cursor != "" {
		c, err := parseCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		sel.after = &c
	}
	if q.Fingerprint != "" {
		// An alert's events are those of its name (whose index holds
		// their alert) that are about it.
		fp, err := strconv.ParseUint(q.Fingerprint, 16, 64)
		if err != nil {
			return nil, nil // no alert has it
		}
		var (
			id   int64
			name string
		)
		ok, err := s.row(ctx, "SELECT id, alertname FROM series WHERE fingerprint = ?", []any{int64(fp)}, &id, &name)
		if err != nil || !ok || (alertname != "" && alertname != name) {
			return nil, err
		}
		alertname = name
		sel.where, sel.args = append(sel.where, "alert = ?"), append(sel.args, id)
	}
	if alertname != "" || q.Fingerprint != "" {
		sel.where, sel.args = append(sel.where, "alertname = ?"), append(sel.args, alertname)
	}
	if q.GroupKey != "" {
		var id int64
		ok, err := s.row(ctx, "SELECT id FROM names WHERE name = ?", []any{q.GroupKey}, &id)
		if err != nil || !ok {
			return nil, err
		}
		sel.where, sel.args = append(sel.where, "grp = ?"), append(sel.args, id)
	}
	if len(q.Types) > 0 {
		sel.where = append(sel.where, "type IN (?"+strings.Repeat(", ?", len(q.Types)-1)+")")
		rare := true
		for _, t := range q.Types {
			sel.args = append(sel.args, t)
			rare = rare && slices.Contains(rareTypeList, t)
		}
		if rare {
			sel.where = append(sel.where, rareTypes) // their index
		}
	}
	if !q.Start.IsZero() {
		sel.where, sel.args = append(sel.where, "time >= ?"), append(sel.args, q.Start.UnixMilli())
	}
	if !q.End.IsZero() {
		sel.where, sel.args = append(sel.where, "time <= ?"), append(sel.args, q.End.UnixMilli())
	}
	return sel, nil
}

// statement is the SELECT of the selection's next limit+1 events.
func (sel *selection) statement() (string, []any) {
	w, a := sel.where, sel.args
	if sel.after != nil {
		// time >= ? first: a range the time indexes answer (an OR alone
		// would make SQLite scan from the start at every page).
		w = append(slices.Clip(w), "time >= ? AND (time > ? OR id > ?)")
		a = append(slices.Clip(a), sel.after.ms, sel.after.ms, sel.after.id)
	}
	stmt := "SELECT " + readColumns + " FROM events"
	if len(w) > 0 {
		stmt += " WHERE " + strings.Join(w, " AND ")
	}
	return stmt + " ORDER BY time, id LIMIT " + strconv.Itoa(sel.limit+1), a
}

// row scans the one row a query answers into dest; false when there is
// none.
func (s *Store) row(ctx context.Context, query string, args []any, dest ...any) (bool, error) {
	err := s.db.QueryRowContext(ctx, query, args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("history: %w", err)
	}
	return true, nil
}

// readColumns are what read scans.
const readColumns = "id, time, type, alertname, alert, labels, grp, receiver, integration, outcome, user, details"

// read runs a query of readColumns and returns its events with their
// fingerprints, labels (unless noLabels) and group keys. The labels are
// shared with other readers: copy them before handing them out.
func (s *Store) read(ctx context.Context, query string, args []any, noLabels bool) ([]Event, error) {
	type refs struct{ alert, labels, grp sql.NullInt64 }
	var (
		evs             []Event
		rs              []refs
		seriesIDs, gIDs []int64
	)
	err := eachRow(ctx, s.db, query, args, func(rows *sql.Rows) error {
		var (
			e                                               Event
			r                                               refs
			ms                                              int64
			alertname, receiver, integration, outcome, user sql.NullString
			details                                         sql.RawBytes
		)
		if err := rows.Scan(&e.ID, &ms, &e.Type, &alertname, &r.alert, &r.labels, &r.grp, &receiver, &integration, &outcome, &user, &details); err != nil {
			return err
		}
		e.Time = time.UnixMilli(ms).UTC()
		e.Alertname, e.Receiver, e.Integration, e.Outcome, e.User = alertname.String, receiver.String, integration.String, outcome.String, user.String
		if len(details) > 0 {
			e.Details = json.RawMessage(slices.Clone(details))
		}
		for _, id := range []sql.NullInt64{r.alert, r.labels} {
			if id.Valid {
				seriesIDs = append(seriesIDs, id.Int64)
			}
		}
		if r.grp.Valid {
			gIDs = append(gIDs, r.grp.Int64)
		}
		evs, rs = append(evs, e), append(rs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	series, groups, err := s.names.resolve(ctx, s.db, seriesIDs, gIDs)
	if err != nil {
		return nil, err
	}
	for i := range evs {
		e, r := &evs[i], rs[i]
		var ls map[string]string
		if r.alert.Valid {
			if si := series[r.alert.Int64]; si != nil {
				e.Fingerprint, ls = si.fingerprint, si.labels
			}
		}
		if r.labels.Valid {
			ls = nil
			if si := series[r.labels.Int64]; si != nil {
				ls = si.labels
			}
		}
		if !noLabels && len(ls) > 0 {
			e.Labels = ls
		}
		if r.grp.Valid {
			e.GroupKey = groups[r.grp.Int64]
		}
	}
	return evs, nil
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
