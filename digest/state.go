package digest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pagedhq/paged/internal/durable"
)

// StateFile is the digest's state under storage.path.
const StateFile = "digest.json"

// state is what survives a restart: since when this paged has had a
// digest to send, and the scheduled time of the last digest it is done
// with (delivered, found delivered by a peer, or given up as too late).
type state struct {
	Since time.Time `json:"since"`
	Last  time.Time `json:"last,omitzero"`
}

// stateFile keeps the state in one small JSON file, replaced whole with
// write-temp, fsync, rename: after a crash it holds the old state or
// the new, never a mix. A file that cannot be read is moved aside and
// reported, and paged starts again from now: a digest due before is not
// sent, rather than sent twice. A file that cannot be written is
// reported and written again at the next change; the state in memory
// goes on.
type stateFile struct {
	path     string // "": in memory only
	reporter *durable.Reporter
	failing  bool
}

// load reads the state; a missing or unreadable file gives the state of
// a paged that starts having a digest now.
func (f *stateFile) load(now time.Time) (state, error) {
	fresh := state{Since: now}
	if f.path == "" {
		return fresh, nil
	}
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return fresh, f.save(fresh, now)
	}
	var st state
	if err == nil {
		err = json.Unmarshal(b, &st)
		if err == nil && st.Since.IsZero() {
			err = errors.New("no since time")
		}
	}
	if err != nil {
		moved, merr := durable.MoveAside(f.path, now)
		if merr != nil {
			moved = ""
		}
		f.reporter.Corrupted(f.path, moved, err)
		return fresh, f.save(fresh, now)
	}
	return st, nil
}

// save writes st; on failure the caller keeps it in memory and saves
// again at the next change.
func (f *stateFile) save(st state, now time.Time) error {
	if f.path == "" {
		return nil
	}
	b, err := json.Marshal(st)
	if err == nil {
		err = durable.WriteFileAtomic(f.path, append(b, '\n'))
	}
	if err != nil {
		f.failing = true
		f.reporter.WriteFailed(f.path, err, now)
		return fmt.Errorf("writing %s: %w", filepath.Base(f.path), err)
	}
	if f.failing {
		f.failing = false
		f.reporter.WriteRecovered(f.path)
	}
	return nil
}
