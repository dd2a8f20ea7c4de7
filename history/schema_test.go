package history

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
)

// schemaV1 is the first schema, as paged wrote it before version 2.
const schemaV1 = `
CREATE TABLE events (
	id          INTEGER PRIMARY KEY,
	time        INTEGER NOT NULL,
	type        TEXT NOT NULL,
	alertname   TEXT NOT NULL DEFAULT '',
	fingerprint TEXT NOT NULL DEFAULT '',
	labels      TEXT,
	group_key   TEXT NOT NULL DEFAULT '',
	receiver    TEXT NOT NULL DEFAULT '',
	integration TEXT NOT NULL DEFAULT '',
	outcome     TEXT NOT NULL DEFAULT '',
	user        TEXT NOT NULL DEFAULT '',
	details     TEXT
);
CREATE INDEX events_alertname_time ON events (alertname, time);
CREATE INDEX events_fingerprint_time ON events (fingerprint, time);
CREATE INDEX events_type_time ON events (type, time);
CREATE INDEX events_time ON events (time);
INSERT INTO events (time, type, alertname, fingerprint, labels) VALUES (1772366400000, 'firing', 'Old', '0123456789abcdef', '{"alertname":"Old"}');
PRAGMA user_version = 1;
`

// A file of the first schema is moved aside, where the sqlite3 command
// still reads its events, with a log line saying so; a new file is
// started and written. Read-only, it is refused with the reason.
func TestSchemaV1MovedAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schemaV1); err != nil {
		t.Fatal(err)
	}
	db.Close()

	if _, err := OpenReadOnly(path); err == nil || !strings.Contains(err.Error(), "schema version 1") {
		t.Errorf("read-only open of a version 1 file: %v", err)
	}

	var logs bytes.Buffer
	s := open(t, Options{Path: path, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	moved, err := filepath.Glob(path + v1Suffix + "*")
	if err != nil || len(moved) != 1 || strings.HasSuffix(moved[0], "-wal") {
		t.Fatalf("moved aside: %v %v", moved, err)
	}
	if line := logs.String(); !strings.Contains(line, "level=WARN") || !strings.Contains(line, "schema version 1") || !strings.Contains(line, moved[0]) {
		t.Errorf("log: %s", line)
	}
	old, err := sql.Open("sqlite", "file:"+moved[0]+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	var name string
	if err := old.QueryRow("SELECT alertname FROM events").Scan(&name); err != nil || name != "Old" {
		t.Errorf("the moved file's event: %q, %v", name, err)
	}

	if v, err := schemaOf(s.db); err != nil || v != schemaVersion {
		t.Errorf("new file: schema version %d, %v", v, err)
	}
	s.Record(alert(TypeFiring, "New", "a", t0))
	flush(t, s)
	if got := kinds(query(t, s, Query{}).Events); got != "firing:New" {
		t.Errorf("new file holds %q", got)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

// events_v gives the events as the first schema had them, for the
// sqlite3 command: the labels, fingerprint and group key joined back.
func TestEventsView(t *testing.T) {
	s := open(t, Options{})
	ls := map[string]string{"alertname": "KV", "instance": "a"}
	s.Record(
		Event{Time: t0, Type: TypeFiring, Labels: ls},
		Event{Time: t0.Add(1), Type: TypeNotification, Labels: map[string]string{"alertname": "KV"}, GroupKey: "{}:{alertname=\"KV\"}",
			Receiver: "oncall", Integration: "slack", Outcome: OutcomeSent},
	)
	flush(t, s)
	rows, err := s.db.Query("SELECT at, type, alertname, coalesce(fingerprint, ''), labels, coalesce(group_key, ''), coalesce(receiver, '') FROM events_v ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var at, typ, name, fp, lbls, group, receiver string
		if err := rows.Scan(&at, &typ, &name, &fp, &lbls, &group, &receiver); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{at, typ, name, fp, lbls, group, receiver}, " "))
	}
	want := []string{
		"2026-03-01T12:00:00.000Z firing KV " + Fingerprint(ls) + ` {"alertname":"KV","instance":"a"}  `,
		`2026-03-01T12:00:00.000Z notification KV  {"alertname":"KV"} {}:{alertname="KV"} oncall`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events_v:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The queries that must stay fast use the indexes meant for them: one
// alert's events through its name's index, the rare types through theirs,
// a group's through the group's, a span through time; and the report's
// notices without sorting them.
func TestQueryPlans(t *testing.T) {
	s := open(t, Options{})
	s.Record(alert(TypeFiring, "A", "a", t0), Event{Time: t0, Type: TypeNotification, GroupKey: "g", Outcome: OutcomeSent})
	flush(t, s)
	fp := Fingerprint(map[string]string{"alertname": "A", "instance": "a"})
	plan := func(t *testing.T, q string, args ...any) string {
		t.Helper()
		rows, err := s.db.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, "; ")
	}
	for name, c := range map[string]struct {
		q         Query
		uses, not string
	}{
		"one alert":      {q: Query{Fingerprint: fp}, uses: "events_alertname_time (alertname=? AND time>? AND time<?)"},
		"alert name":     {q: Query{Alertname: "A"}, uses: "events_alertname_time (alertname=? AND time>? AND time<?)"},
		"silences":       {q: Query{Types: []string{TypeSilence}}, uses: "events_rare_time"},
		"group":          {q: Query{GroupKey: "g"}, uses: "events_grp_time"},
		"span":           {q: Query{}, uses: "events_time (time>? AND time<?)"},
		"common type":    {q: Query{Types: []string{TypeFiring}}, uses: "events_time (time>? AND time<?)", not: "events_rare_time"},
		"matcher":        {q: Query{Matchers: sets(labels.MustNewMatcher(labels.MatchEqual, "instance", "a"))}, uses: "events_time"},
		"after a cursor": {q: Query{Alertname: "A", Cursor: cursor{ms: 1, id: 1}.String()}, uses: "events_alertname_time"},
	} {
		t.Run(name, func(t *testing.T) {
			c.q.Start, c.q.End = t0.Add(-1), t0.Add(1)
			sel, err := s.selection(context.Background(), c.q)
			if err != nil || sel == nil {
				t.Fatalf("selection: %v %v", sel, err)
			}
			stmt, args := sel.statement()
			p := plan(t, stmt, args...)
			if !strings.Contains(p, c.uses) || (c.not != "" && strings.Contains(p, c.not)) || strings.Contains(p, "TEMP B-TREE FOR ORDER BY") {
				t.Errorf("plan %q, want %q without a sort of all rows", p, c.uses)
			}
		})
	}
	for _, c := range []struct{ q, uses string }{
		{"SELECT grp, time, id, receiver, integration, alerts, alertnames FROM notices WHERE kind = 'page' AND time >= ? AND time <= ?", "SEARCH notices USING PRIMARY KEY (kind=?)"},
		{"SELECT kind, grp, group_concat(time) FROM notices WHERE kind IN ('ack', 'resolved') AND time >= ? AND time <= ? GROUP BY kind, grp", "SEARCH notices USING PRIMARY KEY (kind=?)"},
	} {
		if p := plan(t, c.q, 0, 1); !strings.Contains(p, c.uses) || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("notices: plan %q, want %q without a sort", p, c.uses)
		}
	}
	if p := plan(t, "SELECT id FROM events WHERE time >= ? AND time <= ? AND type IN ('firing', 'resolved') AND alert IS NOT NULL", 0, 1); !strings.Contains(p, "COVERING INDEX events_time") {
		t.Errorf("transitions: plan %q, want the time index alone", p)
	}
}
