package history

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"
)

// schemaVersion is PRAGMA user_version of a history file.
//
// Version 1 kept each event's labels as JSON and its fingerprint as text,
// with four indexes; at a million events a write cost 112 µs of CPU and
// the report read most of the file row by row. Version 2 keeps each label
// set once (series) and each group key, receiver, integration and list of
// alert names once (names), two indexes on the bulk of the events, and a
// narrow row of numbers per notification and acknowledgement for the
// report (notices). A version 1 file is moved aside (moveAsideV1), not
// converted.
const schemaVersion = 2

// schema is version 2. docs/history.md describes it for the users of the
// sqlite3 command; events_v is the events with their labels, fingerprint
// and group key joined back, as version 1 had them.
const schema = `
CREATE TABLE IF NOT EXISTS series (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	fingerprint INTEGER NOT NULL UNIQUE,
	alertname   TEXT NOT NULL DEFAULT '',
	labels      TEXT
);
CREATE TABLE IF NOT EXISTS names (
	id   INTEGER PRIMARY KEY AUTOINCREMENT,
	name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS events (
	id          INTEGER PRIMARY KEY,
	time        INTEGER NOT NULL,
	type        TEXT NOT NULL,
	alertname   TEXT NOT NULL DEFAULT '',
	alert       INTEGER,
	labels      INTEGER,
	grp         INTEGER,
	receiver    TEXT,
	integration TEXT,
	outcome     TEXT,
	user        TEXT,
	details     TEXT
);
CREATE INDEX IF NOT EXISTS events_time ON events (time, type, alert);
CREATE INDEX IF NOT EXISTS events_alertname_time ON events (alertname, time, alert);
CREATE INDEX IF NOT EXISTS events_grp_time ON events (grp, time) WHERE grp IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_labels ON events (labels) WHERE labels IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_rare_time ON events (type, time) WHERE ` + rareTypes + `;
CREATE TABLE IF NOT EXISTS notices (
	kind        TEXT NOT NULL,
	grp         INTEGER NOT NULL,
	time        INTEGER NOT NULL,
	id          INTEGER NOT NULL,
	receiver    INTEGER,
	integration INTEGER,
	alerts      INTEGER,
	alertnames  INTEGER,
	error       TEXT,
	PRIMARY KEY (kind, grp, time, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS notices_id ON notices (id);
CREATE VIEW IF NOT EXISTS events_v AS
SELECT e.id, strftime('%Y-%m-%dT%H:%M:%fZ', e.time / 1000.0, 'unixepoch') AS at, e.time, e.type, e.alertname,
	CASE WHEN e.alert IS NOT NULL THEN printf('%016x', a.fingerprint) END AS fingerprint,
	coalesce(l.labels, a.labels) AS labels, g.name AS group_key,
	e.receiver, e.integration, e.outcome, e.user, e.details
FROM events e
LEFT JOIN series a ON a.id = e.alert
LEFT JOIN series l ON l.id = e.labels
LEFT JOIN names g ON g.id = e.grp;
CREATE VIEW IF NOT EXISTS notices_v AS
SELECT n.id, strftime('%Y-%m-%dT%H:%M:%fZ', n.time / 1000.0, 'unixepoch') AS at, n.kind, g.name AS group_key,
	r.name AS receiver, i.name AS integration, CASE WHEN n.alerts IS NOT NULL THEN printf('%016x', n.alerts) END AS alerts,
	a.name AS alertnames, n.error
FROM notices n
LEFT JOIN names g ON g.id = n.grp
LEFT JOIN names r ON r.id = n.receiver
LEFT JOIN names i ON i.id = n.integration
LEFT JOIN names a ON a.id = n.alertnames;
`

// rareTypes is the condition of the index of the event types that are
// few (events_rare_time): a query of those types alone repeats it, word
// for word, for SQLite to use the index. The others are the bulk of the
// events, which need not pay for one more index.
const rareTypes = "type IN ('stale', 'fresh', 'silence', 'ack', 'reload', 'datasource')"

var rareTypeList = []string{TypeStale, TypeFresh, TypeSilence, TypeAck, TypeReload, TypeDatasource}

// errSchemaV1 is a file of the first schema (see schemaVersion).
var errSchemaV1 = errors.New("history file has schema version 1")

// v1Suffix starts the name a version 1 file is moved to.
const v1Suffix = ".v1."

// schemaOf is the version of an open file; 0 for a new one.
func schemaOf(db *sql.DB) (int, error) {
	var version int
	err := db.QueryRow("PRAGMA user_version").Scan(&version)
	return version, err
}

// moveAsideV1 renames a version 1 file (and its WAL) to
// <file>.v1.<unix seconds>: converting a file of a million events would
// hold paged's start for a minute, and its events stay readable with the
// sqlite3 command there. It returns the new name.
func moveAsideV1(path string, now time.Time) (string, error) {
	base := fmt.Sprintf("%s%s%d", path, v1Suffix, now.Unix())
	to := base
	for i := 1; ; i++ {
		if _, err := os.Lstat(to); os.IsNotExist(err) {
			break
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(path, to); err != nil {
		return "", err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		if err := os.Rename(path+"-wal", to+"-wal"); err != nil {
			return "", err
		}
	}
	_ = os.Remove(path + "-shm")
	return to, nil
}
