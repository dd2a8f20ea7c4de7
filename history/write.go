package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
)

// insertRows is how many events one INSERT writes: a statement per event
// costs the driver about as much again as SQLite's own work on the row.
const insertRows = 64

// eventColumns are the columns of an event the writer sets, in the order
// of its statements' values; alertColumns those of an alert's change of
// state, the bulk of the events, whose other columns are NULL: the driver
// binds each value with a call of its own.
var (
	eventColumns = []string{"id", "time", "type", "alertname", "alert", "labels", "grp", "receiver", "integration", "outcome", "user", "details"}
	alertColumns = []string{"id", "time", "type", "alertname", "alert", "details"}
)

// inserter writes events insertRows at a time, and the rest one by one.
type inserter struct {
	many, one *sql.Stmt
	columns   int
	args      []any // the values of many, reused
}

func newInserter(ctx context.Context, conn *sql.Conn, columns []string) (*inserter, error) {
	values := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"
	insert := "INSERT INTO events (" + strings.Join(columns, ", ") + ") VALUES "
	in := &inserter{columns: len(columns)}
	var err error
	if in.many, err = conn.PrepareContext(ctx, insert+strings.TrimSuffix(strings.Repeat(values+", ", insertRows), ", ")); err != nil {
		return nil, err
	}
	if in.one, err = conn.PrepareContext(ctx, insert+values); err != nil {
		in.many.Close()
		return nil, err
	}
	return in, nil
}

// add writes an event's values once insertRows of them wait.
func (in *inserter) add(ctx context.Context, values ...any) error {
	in.args = append(in.args, values...)
	if len(in.args) < insertRows*in.columns {
		return nil
	}
	_, err := in.many.ExecContext(ctx, in.args...)
	in.reset()
	return err
}

// flush writes the events that wait.
func (in *inserter) flush(ctx context.Context) error {
	defer in.reset()
	for i := 0; i < len(in.args); i += in.columns {
		if _, err := in.one.ExecContext(ctx, in.args[i:i+in.columns]...); err != nil {
			return err
		}
	}
	return nil
}

// reset forgets the events that wait.
func (in *inserter) reset() {
	clear(in.args) // the batch's strings are not kept alive
	in.args = in.args[:0]
}

func (in *inserter) close() {
	if in != nil {
		in.many.Close()
		in.one.Close()
	}
}

// writer is the store's side of the file that writes: one connection of
// its own, its statements prepared once, and the ids of the series and
// names already in the file, so that an event costs no lookup. It is used
// under Store.writeMu.
type writer struct {
	conn                             *sql.Conn
	events, alerts                   *inserter
	insertNotice                     *sql.Stmt
	insertSeries, fillSeries, nextID *sql.Stmt
	fillEvents                       *sql.Stmt
	insertName                       *sql.Stmt

	known map[uint64]seriesRef // the series, by fingerprint
	names map[string]int64     // the names, by name
	// filled are the series whose labels a commit added: readers that
	// cached them without labels forget them once it is committed.
	filled []int64

	// event is the id of the event being written. seriesUse and nameUse
	// are the last event that referred to each series and name since the
	// file was read, loaded (the last event then) for the others: once
	// the oldest event of the file is past it, none refers to it any more
	// (unused). Events are deleted by time, not id, so this may keep an
	// unused one a while, never delete one in use.
	event, loaded      int64
	seriesUse, nameUse map[int64]int64
}

type seriesRef struct {
	id        int64
	labeled   bool
	alertname string
}

func newWriter(db *sql.DB) (*writer, error) {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{conn: conn}
	if w.events, err = newInserter(ctx, conn, eventColumns); err == nil {
		w.alerts, err = newInserter(ctx, conn, alertColumns)
	}
	if err != nil {
		w.close()
		return nil, err
	}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&w.insertNotice, "INSERT INTO notices (kind, grp, time, id, receiver, integration, alerts, alertnames, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"},
		{&w.insertSeries, "INSERT INTO series (fingerprint, alertname, labels) VALUES (?, ?, ?)"},
		{&w.fillSeries, "UPDATE series SET labels = ?, alertname = ? WHERE id = ?"},
		{&w.fillEvents, "UPDATE events SET alertname = ? WHERE alertname = '' AND alert = ?"},
		{&w.insertName, "INSERT INTO names (name) VALUES (?)"},
		{&w.nextID, "SELECT coalesce(max(id), 0) + 1 FROM events"},
	} {
		if *p.st, err = conn.PrepareContext(ctx, p.sql); err != nil {
			w.close()
			return nil, err
		}
	}
	if err := w.load(ctx); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// load reads the ids of the series and names in the file.
func (w *writer) load(ctx context.Context) error {
	w.known, w.names = map[uint64]seriesRef{}, map[string]int64{}
	w.seriesUse, w.nameUse = map[int64]int64{}, map[int64]int64{}
	if err := w.conn.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) FROM events").Scan(&w.loaded); err != nil {
		return err
	}
	rows, err := w.conn.QueryContext(ctx, "SELECT id, fingerprint, labels IS NOT NULL, alertname FROM series")
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			r  seriesRef
			fp int64
		)
		if err := rows.Scan(&r.id, &fp, &r.labeled, &r.alertname); err != nil {
			rows.Close()
			return err
		}
		w.known[uint64(fp)] = r
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	rows, err = w.conn.QueryContext(ctx, "SELECT id, name FROM names")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			name string
		)
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		w.names[name] = id
	}
	return rows.Err()
}

func (w *writer) close() {
	w.events.close()
	w.alerts.close()
	for _, st := range []*sql.Stmt{w.insertNotice, w.insertSeries, w.fillSeries, w.fillEvents, w.insertName, w.nextID} {
		if st != nil {
			st.Close()
		}
	}
	w.conn.Close()
}

// insert writes a batch in one transaction. On failure nothing of it is
// in the file, and the ids it had given new series and names are
// forgotten.
func (w *writer) insert(ctx context.Context, batch []Event) (err error) {
	if _, err := w.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	w.filled = w.filled[:0]
	defer func() {
		if err != nil {
			_, _ = w.conn.ExecContext(ctx, "ROLLBACK")
			w.events.reset()
			w.alerts.reset()
			err = errors.Join(err, w.load(ctx))
		}
	}()
	var next int64
	if err := w.nextID.QueryRowContext(ctx).Scan(&next); err != nil {
		return err
	}
	for i := range batch {
		e := &batch[i]
		e.ID, w.event = next, next
		next++
		alert, lbls, err := w.seriesOf(ctx, e)
		if err != nil {
			return err
		}
		alertname := e.Alertname
		if alert.id != 0 {
			// An alert's events carry its name, by which they are found
			// (Query, sweep).
			alertname = alert.alertname
		}
		grp, err := w.name(ctx, e.GroupKey)
		if err != nil {
			return err
		}
		if lbls == 0 && grp == 0 && e.Receiver == "" && e.Integration == "" && e.Outcome == "" && e.User == "" {
			err = w.alerts.add(ctx, e.ID, e.Time.UnixMilli(), e.Type, alertname, nullable(alert.id), text(string(e.Details)))
		} else {
			err = w.events.add(ctx, e.ID, e.Time.UnixMilli(), e.Type, alertname, nullable(alert.id), nullable(lbls), nullable(grp),
				text(e.Receiver), text(e.Integration), text(e.Outcome), text(e.User), text(string(e.Details)))
		}
		if err != nil {
			return err
		}
		if n, ok := NoticeOf(e); ok {
			if err := w.notice(ctx, &n, grp); err != nil {
				return err
			}
		}
	}
	if err := errors.Join(w.events.flush(ctx), w.alerts.flush(ctx)); err != nil {
		return err
	}
	_, err = w.conn.ExecContext(ctx, "COMMIT")
	return err
}

// text is s, or NULL when it is empty: a column that does not apply to
// an event is NULL.
func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullable is the id of a series or a name, or NULL for none (0): ids
// start at 1.
func nullable(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// seriesOf returns the series of the alert an event is about (its
// fingerprint: given, or that of the labels of an alert's state change)
// and the id of the series of its labels when they are not that alert's
// (a notification's common labels), adding those the file lacks. An id
// of 0 is none: series ids start at 1.
func (w *writer) seriesOf(ctx context.Context, e *Event) (alert seriesRef, lbls int64, err error) {
	var fp, lfp uint64
	hasFP := false
	if len(e.Labels) > 0 {
		lfp = model.LabelsToSignature(e.Labels)
	}
	switch {
	case e.Fingerprint != "":
		// A fingerprint that is not Alertmanager's 16 hex digits is none.
		fp, err = strconv.ParseUint(e.Fingerprint, 16, 64)
		hasFP = err == nil
	case len(e.Labels) > 0 && e.Type != TypeNotification && e.Type != TypeAck && e.Type != TypeSilence:
		fp, hasFP = lfp, true
	}
	if hasFP {
		var ls map[string]string
		if len(e.Labels) > 0 && lfp == fp {
			ls = e.Labels
		}
		if alert, err = w.series(ctx, fp, e.Alertname, ls); err != nil || ls != nil || len(e.Labels) == 0 {
			return alert, 0, err
		}
	}
	if len(e.Labels) == 0 {
		return alert, 0, nil
	}
	r, err := w.series(ctx, lfp, e.Labels[model.AlertNameLabel], e.Labels)
	return alert, r.id, err
}

// series is the series with fingerprint fp, added when the file lacks
// it; ls, when known, are its labels.
func (w *writer) series(ctx context.Context, fp uint64, alertname string, ls map[string]string) (seriesRef, error) {
	r, ok := w.known[fp]
	if ok && (r.labeled || ls == nil) {
		w.seriesUse[r.id] = w.event
		return r, nil
	}
	var lsText any
	if ls != nil {
		b, err := json.Marshal(ls)
		if err != nil {
			return seriesRef{}, err
		}
		lsText = string(b)
	}
	if ok {
		// Known by its fingerprint only until now; its events get its
		// name if they had none.
		if r.alertname == "" {
			r.alertname = alertname
			if _, err := w.fillEvents.ExecContext(ctx, alertname, r.id); err != nil {
				return seriesRef{}, err
			}
		}
		if _, err := w.fillSeries.ExecContext(ctx, lsText, r.alertname, r.id); err != nil {
			return seriesRef{}, err
		}
		r.labeled = true
		w.known[fp] = r
		w.filled = append(w.filled, r.id)
		w.seriesUse[r.id] = w.event
		return r, nil
	}
	res, err := w.insertSeries.ExecContext(ctx, int64(fp), alertname, lsText)
	if err != nil {
		return seriesRef{}, err
	}
	r = seriesRef{labeled: ls != nil, alertname: alertname}
	if r.id, err = res.LastInsertId(); err != nil {
		return seriesRef{}, err
	}
	w.known[fp] = r
	w.seriesUse[r.id] = w.event
	return r, nil
}

// notice writes the notice of an event whose group key is the name grp
// (0 for none: it is part of the notices' key, which cannot be NULL).
func (w *writer) notice(ctx context.Context, n *Notice, grp int64) error {
	var alerts, names any
	if n.Kind == NoticePage {
		alerts = int64(n.Alerts)
	}
	receiver, err := w.name(ctx, n.Receiver)
	if err != nil {
		return err
	}
	integration, err := w.name(ctx, n.Integration)
	if err != nil {
		return err
	}
	if len(n.Alertnames) > 0 {
		b, err := json.Marshal(n.Alertnames)
		if err != nil {
			return err
		}
		id, err := w.name(ctx, string(b))
		if err != nil {
			return err
		}
		names = id
	}
	_, err = w.insertNotice.ExecContext(ctx, n.Kind, grp, n.Time.UnixMilli(), n.ID, nullable(receiver), nullable(integration), alerts, names, text(n.Error))
	return err
}

// name is the id of a name (a group key, a receiver, an integration, a
// list of alert names), added when the file lacks it; 0 for none.
func (w *writer) name(ctx context.Context, name string) (int64, error) {
	if name == "" {
		return 0, nil
	}
	id, ok := w.names[name]
	if !ok {
		res, err := w.insertName.ExecContext(ctx, name)
		if err != nil {
			return 0, err
		}
		if id, err = res.LastInsertId(); err != nil {
			return 0, err
		}
		w.names[name] = id
	}
	w.nameUse[id] = w.event
	return id, nil
}

// unused forgets the series and names no event from the oldest on
// refers to, and returns their ids, for the caller to delete them.
func (w *writer) unused(oldest int64) (series, names []int64) {
	last := func(use map[int64]int64, id int64) int64 {
		if e, ok := use[id]; ok {
			return e
		}
		return w.loaded
	}
	for fp, r := range w.known {
		if last(w.seriesUse, r.id) < oldest {
			series = append(series, r.id)
			delete(w.known, fp)
			delete(w.seriesUse, r.id)
		}
	}
	for name, id := range w.names {
		if last(w.nameUse, id) < oldest {
			names = append(names, id)
			delete(w.names, name)
			delete(w.nameUse, id)
		}
	}
	return series, names
}
