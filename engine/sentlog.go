package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/rules"
)

// sentLog remembers the last notification of every firing alert, on disk,
// so that a restarted engine:
//   - keeps an alert's StartsAt (Prometheus sets it to the first firing
//     evaluation after the restart);
//   - does not re-send an alert the previous run sent less than
//     ResendDelay ago (it is still valid at the receiver);
//   - can keep re-sending, as stale, the alerts of a rule whose datasource
//     is down at startup, instead of letting them expire.
type sentLog struct {
	path string

	mu      sync.Mutex
	entries map[uint64]*sentEntry
	// prevByName indexes the entries loaded from disk that this run has
	// not sent yet, by alertname.
	prevByName map[string]map[uint64]bool
	dirty      bool
	lastPrune  time.Time
	lastFlush  time.Time

	flushMu sync.Mutex // one write of the file at a time
}

// sentLogFlushEvery bounds how often the log is written while running: a
// crash loses at most this much of it (a duplicate notification at worst).
const sentLogFlushEvery = 10 * time.Second

// flushDue writes the log if it changed and the last write is
// sentLogFlushEvery old.
func (s *sentLog) flushDue(now time.Time) error {
	s.mu.Lock()
	due := s.dirty && now.Sub(s.lastFlush) >= sentLogFlushEvery
	if due {
		s.lastFlush = now
	}
	s.mu.Unlock()
	if !due {
		return nil
	}
	return s.flush()
}

type sentEntry struct {
	Alert      *rules.Alert `json:"alert"`
	LastSentAt time.Time    `json:"lastSentAt"`
	// previous is set for entries loaded from disk until this run sends
	// the alert itself.
	previous bool
}

// sentFile is the on-disk format.
type sentFile struct {
	Version int          `json:"version"`
	Entries []*sentEntry `json:"entries"`
}

func openSentLog(path string) (*sentLog, error) {
	s := &sentLog{path: path, entries: map[uint64]*sentEntry{}, prevByName: map[string]map[uint64]bool{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	var f sentFile
	if err := json.Unmarshal(b, &f); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range f.Entries {
		if e == nil || e.Alert == nil {
			continue
		}
		e.previous = true
		h := e.Alert.Labels.Hash()
		s.entries[h] = e
		name := e.Alert.Labels.Get(labels.AlertName)
		if s.prevByName[name] == nil {
			s.prevByName[name] = map[uint64]bool{}
		}
		s.prevByName[name][h] = true
	}
	return s, nil
}

// record updates the log with alerts sent at ts and returns the ones to
// deliver: a firing alert that the previous run sent less than resendDelay
// ago is dropped (it is still valid at the receiver), and a continuing
// alert keeps its first StartsAt.
func (s *sentLog) record(alerts []*rules.Alert, ts time.Time, resendDelay time.Duration) ([]*rules.Alert, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := alerts[:0:0]
	suppressed := 0
	for _, a := range alerts {
		h := a.Labels.Hash()
		prev := s.entries[h]
		if a.Resolved(ts) {
			if prev != nil {
				s.deleteLocked(h, prev)
			}
			out = append(out, a)
			continue
		}
		if prev != nil && prev.Alert.EndsAt.After(ts) {
			if !prev.Alert.StartsAt.IsZero() && prev.Alert.StartsAt.Before(a.StartsAt) {
				a.StartsAt = prev.Alert.StartsAt
			}
			if prev.previous && !a.Stale && ts.Before(prev.LastSentAt.Add(resendDelay)) {
				suppressed++
				continue
			}
		}
		if prev != nil && prev.previous {
			delete(s.prevByName[prev.Alert.Labels.Get(labels.AlertName)], h)
		}
		c := *a
		s.entries[h] = &sentEntry{Alert: &c, LastSentAt: ts}
		s.dirty = true
		out = append(out, a)
	}
	return out, suppressed
}

// previous returns copies of the alerts of rule ar that the previous run
// sent, this run has not, and that are still valid at ts.
func (s *sentLog) previous(name string, ruleLabels labels.Labels, ts time.Time) []*rules.Alert {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*rules.Alert
	for h := range s.prevByName[name] {
		e := s.entries[h]
		if e == nil || !e.previous || !e.Alert.EndsAt.After(ts) {
			continue
		}
		match := true
		ruleLabels.Range(func(l labels.Label) {
			if !strings.Contains(l.Value, "{{") && e.Alert.Labels.Get(l.Name) != l.Value {
				match = false
			}
		})
		if match {
			c := *e.Alert
			out = append(out, &c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return labels.Compare(out[i].Labels, out[j].Labels) < 0 })
	return out
}

func (s *sentLog) deleteLocked(h uint64, e *sentEntry) {
	delete(s.entries, h)
	if e.previous {
		delete(s.prevByName[e.Alert.Labels.Get(labels.AlertName)], h)
	}
	s.dirty = true
}

// flush writes the log if it changed: encode it under the lock, then
// write a temporary file, fsync and rename without holding it, so that
// evaluations recording sends do not wait for the disk. Entries that
// expired long ago are dropped.
func (s *sentLog) flush() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	if !s.dirty {
		s.mu.Unlock()
		return nil
	}
	entries := make([]*sentEntry, 0, len(s.entries))
	for _, e := range s.entries {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool {
		return labels.Compare(entries[i].Alert.Labels, entries[j].Alert.Labels) < 0
	})
	b := encodeSentFile(entries)
	s.dirty = false
	s.mu.Unlock()
	if err := writeFileAtomic(s.path, b); err != nil {
		s.mu.Lock()
		s.dirty = true
		s.mu.Unlock()
		return err
	}
	return nil
}

// encodeSentFile writes the entries as encoding/json would write a
// sentFile (what openSentLog reads), without reflection: the log is
// rewritten every few seconds while alerts fire, and encoding/json spent
// more CPU on it than the rest of the engine's own work.
func encodeSentFile(entries []*sentEntry) []byte {
	st := jsoniter.ConfigCompatibleWithStandardLibrary.BorrowStream(nil)
	defer jsoniter.ConfigCompatibleWithStandardLibrary.ReturnStream(st)
	st.WriteRaw(`{"version":1,"entries":[`)
	for i, e := range entries {
		if i > 0 {
			st.WriteMore()
		}
		a := e.Alert
		st.WriteRaw(`{"alert":{"Labels":`)
		writeLabels(st, a.Labels)
		st.WriteRaw(`,"Annotations":`)
		writeLabels(st, a.Annotations)
		st.WriteRaw(`,"StartsAt":`)
		writeTime(st, a.StartsAt)
		st.WriteRaw(`,"EndsAt":`)
		writeTime(st, a.EndsAt)
		st.WriteRaw(`,"GeneratorURL":`)
		st.WriteStringWithHTMLEscaped(a.GeneratorURL)
		st.WriteRaw(`,"Stale":`)
		st.WriteBool(a.Stale)
		st.WriteRaw(`},"lastSentAt":`)
		writeTime(st, e.LastSentAt)
		st.WriteObjectEnd()
	}
	st.WriteRaw(`]}`)
	return append([]byte(nil), st.Buffer()...)
}

func writeLabels(st *jsoniter.Stream, ls labels.Labels) {
	st.WriteObjectStart()
	first := true
	ls.Range(func(l labels.Label) {
		if !first {
			st.WriteMore()
		}
		first = false
		st.WriteStringWithHTMLEscaped(l.Name)
		st.WriteRaw(":")
		st.WriteStringWithHTMLEscaped(l.Value)
	})
	st.WriteObjectEnd()
}

func writeTime(st *jsoniter.Stream, t time.Time) {
	b, err := t.MarshalJSON()
	if err != nil { // a year outside [0, 9999]: what encoding/json would refuse
		st.WriteStringWithHTMLEscaped(time.Time{}.Format(time.RFC3339Nano))
		return
	}
	st.WriteRaw(string(b))
}

// prune drops, at most once a minute, the entries whose validity ended
// an hour before ts.
func (s *sentLog) prune(ts time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts.Sub(s.lastPrune) < time.Minute {
		return
	}
	s.lastPrune = ts
	cutoff := ts.Add(-time.Hour)
	for h, e := range s.entries {
		if e.Alert.EndsAt.Before(cutoff) {
			s.deleteLocked(h, e)
		}
	}
}

func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
