package notifier

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/pagedhq/paged/internal/durable"
)

// slackJournal remembers the top-level Slack message of each alert group
// in bot-token mode, apart from the notification log and written at other
// moments: an intent before the message is posted, its channel and ts as
// soon as Slack answers, both fsynced. The notification log entry that
// carries the ts is written only after the whole notification succeeded,
// so a crash in between leaves the journal knowing a message the log does
// not; the next notification of the group then edits that message instead
// of posting a second one. It is <StoragePath>/slack-messages: a snapshot
// of the current map, and segments of changes.
type slackJournal struct {
	disk   stateLog // nil: in memory only
	logger *slog.Logger
	// logged returns when the notification log last logged the group.
	logged func(journalKey) (time.Time, bool)

	mu       sync.Mutex
	msgs     map[journalKey]journalEntry
	channels map[string]string // configured channel -> channel ID Slack answered with

	scans historyScans // the history scans of crash recovery (slack_recover.go)
}

// journalKey is one group of one Slack integration of a receiver.
type journalKey struct {
	Receiver    string
	Integration int // index in the receiver's slack_configs
	Group       string
}

// journalEntry is a group's top-level message: posted (TS set) or about
// to be (Intent set, TS empty: the process may have died during the post).
type journalEntry struct {
	Intent    string    // id sent in the message's metadata
	At        time.Time // when the post was attempted
	Channel   string    // the configured channel it was posted to
	ChannelID string    // the channel Slack answered with
	TS        string    // the message's ts, once Slack answered
}

// journalRecord is one change, and one entry of the snapshot.
type journalRecord struct {
	Op          string    `json:"op"` // set, drop, channel
	Receiver    string    `json:"receiver,omitempty"`
	Integration int       `json:"integration,omitempty"`
	Group       string    `json:"group,omitempty"`
	Intent      string    `json:"intent,omitempty"`
	At          time.Time `json:"at,omitzero"`
	Channel     string    `json:"channel,omitempty"`
	ChannelID   string    `json:"channel_id,omitempty"`
	TS          string    `json:"ts,omitempty"`
}

func (r journalRecord) key() journalKey {
	return journalKey{Receiver: r.Receiver, Integration: r.Integration, Group: r.Group}
}

func setRecord(k journalKey, e journalEntry) journalRecord {
	return journalRecord{Op: "set", Receiver: k.Receiver, Integration: k.Integration, Group: k.Group,
		Intent: e.Intent, At: e.At, Channel: e.Channel, ChannelID: e.ChannelID, TS: e.TS}
}

// openSlackJournal loads <StoragePath>/slack-messages (in memory only
// without StoragePath).
func (n *Notifier) openSlackJournal(logged func(journalKey) (time.Time, bool)) error {
	j := &slackJournal{
		logger:   n.logger.With("component", "slack-journal"),
		logged:   logged,
		msgs:     map[journalKey]journalEntry{},
		channels: map[string]string{},
	}
	d, err := n.openLog("slack-messages", durable.Options{
		Load:     func(r io.Reader) error { return durable.ReadFrames(r, j.replay) },
		Replay:   j.replay,
		Snapshot: j.snapshot,
	})
	if err != nil {
		return err
	}
	j.disk = d
	n.journal = j
	return nil
}

func (j *slackJournal) replay(b []byte) error {
	var r journalRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.applyLocked(r)
}

func (j *slackJournal) applyLocked(r journalRecord) error {
	switch r.Op {
	case "set":
		j.msgs[r.key()] = journalEntry{Intent: r.Intent, At: r.At, Channel: r.Channel, ChannelID: r.ChannelID, TS: r.TS}
	case "drop":
		delete(j.msgs, r.key())
	case "channel":
		j.channels[r.Channel] = r.ChannelID
	default:
		return fmt.Errorf("unknown op %q", r.Op)
	}
	return nil
}

// snapshot writes the current map as framed set and channel records.
func (j *slackJournal) snapshot(w io.Writer) error {
	j.mu.Lock()
	recs := make([]journalRecord, 0, len(j.channels)+len(j.msgs))
	for name, id := range j.channels {
		recs = append(recs, journalRecord{Op: "channel", Channel: name, ChannelID: id})
	}
	for k, e := range j.msgs {
		recs = append(recs, setRecord(k, e))
	}
	j.mu.Unlock()
	slices.SortFunc(recs, func(a, b journalRecord) int {
		return cmp.Or(cmp.Compare(a.Op, b.Op), cmp.Compare(a.Receiver, b.Receiver), cmp.Compare(a.Integration, b.Integration),
			cmp.Compare(a.Group, b.Group), cmp.Compare(a.Channel, b.Channel))
	})
	var buf []byte
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf = durable.AppendFrame(buf, b)
	}
	_, err := w.Write(buf)
	return err
}

// record applies changes in memory, then appends them, and returns the
// sequence number of the last one for Wait.
func (j *slackJournal) record(rs ...journalRecord) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var seq uint64
	for _, r := range rs {
		_ = j.applyLocked(r)
		if j.disk == nil {
			continue
		}
		b, err := json.Marshal(r)
		if err != nil {
			continue
		}
		seq = j.disk.Append(b)
	}
	return seq
}

// wait waits for seq's fsync; a failure is logged, not returned: the
// notification goes on, the journal is kept in memory and retried.
func (j *slackJournal) wait(seq uint64, what string) {
	if j.disk == nil || seq == 0 {
		return
	}
	if err := j.disk.Wait(seq); err != nil {
		j.logger.Warn("slack message journal kept in memory only; a crash before the write is retried may post a group's message twice",
			"file", "slack-messages", "change", what, "err", err)
	}
}

// get returns the group's message. An entry older than the last
// notification log entry of the group is stale and dropped: the log was
// written after that message was posted, and no longer carries its ts
// (the group resolved, and a new lifecycle starts).
func (j *slackJournal) get(k journalKey) (journalEntry, bool) {
	j.mu.Lock()
	e, ok := j.msgs[k]
	j.mu.Unlock()
	if !ok {
		return journalEntry{}, false
	}
	if j.logged != nil {
		if at, ok := j.logged(k); ok && !at.Before(e.At) {
			j.drop(k)
			return journalEntry{}, false
		}
	}
	return e, true
}

// intend records that the group's top-level message is about to be
// posted to channel, and waits for the record's fsync.
func (j *slackJournal) intend(k journalKey, channel string, now time.Time) journalEntry {
	e := journalEntry{Intent: newIntentID(), At: now, Channel: channel}
	j.wait(j.record(setRecord(k, e)), "intent")
	return e
}

// posted records the message Slack answered with for intent e, learns
// the channel's ID, and waits for the fsync.
func (j *slackJournal) posted(k journalKey, e journalEntry, channelID, ts string) {
	e.ChannelID, e.TS = channelID, ts
	rs := []journalRecord{setRecord(k, e)}
	j.mu.Lock()
	learned := j.channels[e.Channel] == channelID || channelID == "" || e.Channel == "" || e.Channel == channelID
	j.mu.Unlock()
	if !learned {
		rs = append(rs, journalRecord{Op: "channel", Channel: e.Channel, ChannelID: channelID})
	}
	j.wait(j.record(rs...), "posted")
}

// learnChannel records the ID of a configured channel found without a
// post (conversations.list). Not waited for: losing it costs one lookup.
func (j *slackJournal) learnChannel(configured, id string) {
	j.mu.Lock()
	known := j.channels[configured] == id
	j.mu.Unlock()
	if !known {
		j.record(journalRecord{Op: "channel", Channel: configured, ChannelID: id})
	}
}

// cancel forgets an intent whose post certainly failed (Slack refused
// it), so that the next attempt does not look for it. Not waited for:
// losing it costs one lookup.
func (j *slackJournal) cancel(k journalKey, intent string) {
	j.mu.Lock()
	e, ok := j.msgs[k]
	j.mu.Unlock()
	if ok && e.Intent == intent && e.TS == "" {
		j.record(journalRecord{Op: "drop", Receiver: k.Receiver, Integration: k.Integration, Group: k.Group})
	}
}

// drop forgets the group's message at the end of its lifecycle, and
// waits for the fsync: a lost drop would make the next firing edit the
// old message.
func (j *slackJournal) drop(k journalKey) {
	j.mu.Lock()
	_, ok := j.msgs[k]
	j.mu.Unlock()
	if ok {
		j.wait(j.record(journalRecord{Op: "drop", Receiver: k.Receiver, Integration: k.Integration, Group: k.Group}), "drop")
	}
}

// channelID returns the ID Slack answered with for a configured channel,
// or the configured value when none is known yet.
func (j *slackJournal) channelID(configured string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if id := j.channels[configured]; id != "" {
		return id
	}
	return configured
}

// gc forgets messages attempted longer than retention ago whose group
// has no notification log entry left (it expired: the group is gone).
func (j *slackJournal) gc(now time.Time, retention time.Duration) {
	j.mu.Lock()
	var old []journalKey
	for k, e := range j.msgs {
		if e.At.Before(now.Add(-retention)) {
			old = append(old, k)
		}
	}
	j.mu.Unlock()
	for _, k := range old {
		if j.logged != nil {
			if _, ok := j.logged(k); ok {
				continue
			}
		}
		j.record(journalRecord{Op: "drop", Receiver: k.Receiver, Integration: k.Integration, Group: k.Group})
	}
}

func (j *slackJournal) len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.msgs)
}

func newIntentID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// groupHash identifies a group in a message's metadata without its
// labels.
func groupHash(gkey string) string {
	h := sha256.Sum256([]byte(gkey))
	return hex.EncodeToString(h[:8])
}
