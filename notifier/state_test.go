package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"github.com/prometheus/alertmanager/silence"
	"github.com/prometheus/alertmanager/silence/silencepb"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// faultyLog makes a state file's writes fail on demand: full, as on a
// full disk (Wait and Sync fail; the records are still handed on), or
// lost, as when the process is killed before the write (records are
// dropped).
type faultyLog struct {
	stateLog
	name string
	full atomic.Bool
	lost atomic.Bool
}

func (f *faultyLog) Append(rec []byte) uint64 {
	if f.lost.Load() {
		return 0
	}
	return f.stateLog.Append(rec)
}

func (f *faultyLog) Wait(seq uint64) error {
	if f.full.Load() {
		return f.errFull()
	}
	return f.stateLog.Wait(seq)
}

func (f *faultyLog) Sync() error {
	if f.full.Load() {
		return f.errFull()
	}
	return f.stateLog.Sync()
}

func (f *faultyLog) errFull() error {
	return fmt.Errorf("%w: %s: write %s.wal.00000001: no space left on device", durable.ErrNotDurable, f.name, f.name)
}

// faults wraps a notifier's state files (Options.wrapState); after New,
// faults[name] is the wrapper of that file.
type faults map[string]*faultyLog

func (fs faults) wrap(name string, l stateLog) stateLog {
	f := &faultyLog{stateLog: l, name: name}
	fs[name] = f
	return f
}

// readState merges a state's snapshot (in Alertmanager's format) and
// segments, as they are on disk now, without opening them for writing
// (the notifier that owns them keeps running).
func readState(t *testing.T, dir, name string, merge func([]byte) error) {
	t.Helper()
	readFiles(t, dir, name, mergeEach, merge)
}

// readFramed is readState for a state whose snapshot is framed records.
func readFramed(t *testing.T, dir, name string, apply func([]byte) error) {
	t.Helper()
	readFiles(t, dir, name, func(r io.Reader, f func([]byte) error) error { return durable.ReadFrames(r, f) }, apply)
}

func readFiles(t *testing.T, dir, name string, snapshot func(io.Reader, func([]byte) error) error, merge func([]byte) error) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
		if err := snapshot(bytes.NewReader(b), merge); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	segs, _ := filepath.Glob(filepath.Join(dir, name+".wal.*"))
	sort.Strings(segs)
	for _, p := range segs {
		if strings.Contains(p, durable.CorruptSuffix) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := durable.ReadFrames(bytes.NewReader(b), merge); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}

// diskSilences opens a fresh Silences from the files under dir.
func diskSilences(t *testing.T, dir string) map[string]*silencepb.Silence {
	t.Helper()
	s, err := silence.New(silence.Options{Metrics: prometheus.NewRegistry(), Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	readState(t, dir, "silences", s.Merge)
	sils, _, err := s.Query(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*silencepb.Silence{}
	for _, sil := range sils {
		out[sil.Id] = sil
	}
	return out
}

func silenceBody(name, comment string) string {
	now := time.Now().UTC()
	b, _ := json.Marshal(map[string]any{
		"matchers":  []map[string]any{{"name": "alertname", "value": name, "isRegex": false, "isEqual": true}},
		"startsAt":  now.Format(time.RFC3339),
		"endsAt":    now.Add(time.Hour).Format(time.RFC3339),
		"createdBy": "oncall",
		"comment":   comment,
	})
	return string(b)
}

// apiDo sends one API request and returns the status and body.
func apiDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func silenceID(t *testing.T, body string) string {
	t.Helper()
	var r struct {
		SilenceID string `json:"silenceID"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.SilenceID == "" {
		t.Fatalf("create silence answered %s (%v)", body, err)
	}
	return r.SilenceID
}

// TestSlackKilledAfterPostNoDuplicate is the user report: paged posted a
// group's Slack message and is killed with -9 (no shutdown, no snapshot);
// the paged started on the same storage does not post it again, and the
// resolution edits the original message and replies in its thread.
func TestSlackKilledAfterPostNoDuplicate(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	dir := t.TempDir()
	conf := slackBotConfig(s, "")
	a := firing("KVCacheSaturated", "severity", "critical")

	n1 := start(t, conf, Options{StoragePath: dir})
	n1.Notify(context.Background(), []*rules.Alert{a})
	post := s.WaitCalls(t, 1, 10*time.Second)[0]
	if post.Method != "chat.postMessage" || post.TS == "" {
		t.Fatalf("first call = %+v, want a posted message", post)
	}
	// The entry is appended under the log's lock, the same one this
	// read takes: once it shows, it is in the segment.
	waitFor(t, func() bool { return nflogEntries(n1.Notifier) == 1 })

	// n1 is never stopped: nothing is flushed at shutdown.
	n2 := start(t, conf, Options{StoragePath: dir})
	if got := nflogEntries(n2.Notifier); got != 1 {
		t.Fatalf("restarted notifier has %d notification log entries, want 1", got)
	}
	n2.Notify(context.Background(), []*rules.Alert{a})
	n2.Notify(context.Background(), []*rules.Alert{firing("Other")})
	calls := s.WaitCalls(t, 2, 10*time.Second)
	contains(t, "second call", string(calls[1].Blocks), "Other")

	n2.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	calls = s.WaitCalls(t, 4, 10*time.Second)
	upd, reply := calls[2], calls[3]
	if upd.Method != "chat.update" || upd.TS != post.TS || upd.Channel != "CALERTS" {
		t.Fatalf("resolution = %+v, want chat.update of the original %s", upd, post.TS)
	}
	if reply.Method != "chat.postMessage" || reply.ThreadTS != post.TS {
		t.Fatalf("reply = %+v, want a reply in thread %s", reply, post.TS)
	}
	msg, _ := s.Message("CALERTS", post.TS)
	contains(t, "original message", string(msg.Blocks), "RESOLVED [critical] KVCacheSaturated")
	if n := topLevelPosts(s, "KVCacheSaturated"); n != 1 {
		t.Errorf("%d top-level messages for the group, want 1: %+v", n, s.Calls())
	}
	// The lifecycle ended: the journal forgot the message, on disk too;
	// Other's is still open.
	waitFor(t, func() bool {
		return testutil.ToFloat64(n2.metrics.notifications.WithLabelValues("oncall", "slack", outcomeSuccess)) == 2
	})
	if journalHas(n2.journal, "KVCacheSaturated") || !journalHas(n2.journal, "Other") {
		t.Errorf("journal after the resolution: %+v, want Other's message only", n2.journal.msgs)
	}
	onDisk := &slackJournal{msgs: map[journalKey]journalEntry{}, channels: map[string]string{}}
	readFramed(t, dir, "slack-messages", onDisk.replay)
	if journalHas(onDisk, "KVCacheSaturated") || !journalHas(onDisk, "Other") || onDisk.channels["#alerts"] != "CALERTS" {
		t.Errorf("journal on disk: %+v %v, want Other's message only and the channel's ID", onDisk.msgs, onDisk.channels)
	}
}

// journalHas reports whether j holds a message of the group of alertname.
func journalHas(j *slackJournal, alertname string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for k := range j.msgs {
		if strings.Contains(k.Group, `alertname="`+alertname+`"`) {
			return true
		}
	}
	return false
}

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// topLevelPosts counts the chat.postMessage calls outside threads whose
// blocks mention what.
func topLevelPosts(s *notifiertest.Slack, what string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Method == "chat.postMessage" && c.ThreadTS == "" && c.Status == http.StatusOK && c.Error == "" &&
			strings.Contains(string(c.Blocks), what) {
			n++
		}
	}
	return n
}

// A silence change is on disk (snapshot or segment, fsynced) when the API
// answers it: creating and expiring.
func TestSilenceOnDiskWhenAPIAnswers(t *testing.T) {
	dir := t.TempDir()
	n := start(t, fmt.Sprintf(tinyRoute, "x")+"receivers: [{name: x}]\n", Options{StoragePath: dir})
	url := serveAPI(t, n.Notifier)
	before := n.silSt.disk.Stats().Fsyncs

	code, body := apiDo(t, http.MethodPost, url+"/api/v2/silences", silenceBody("Maintenance", "on disk before the answer"))
	if code != http.StatusOK {
		t.Fatalf("POST silence: %d %s", code, body)
	}
	id := silenceID(t, body)
	sil, ok := diskSilences(t, dir)[id]
	if !ok {
		t.Fatalf("silence %s is not in the files when the API answered", id)
	}
	if sil.Comment != "on disk before the answer" || !sil.EndsAt.AsTime().After(time.Now()) {
		t.Errorf("silence on disk = %v, want the active one created", sil)
	}
	if got := n.silSt.disk.Stats().Fsyncs; got <= before {
		t.Errorf("fsyncs of silences: %d before, %d after, want more", before, got)
	}

	code, body = apiDo(t, http.MethodDelete, url+"/api/v2/silence/"+id, "")
	if code != http.StatusOK {
		t.Fatalf("DELETE silence: %d %s", code, body)
	}
	sil = diskSilences(t, dir)[id]
	if sil == nil || sil.EndsAt.AsTime().After(time.Now()) {
		t.Fatalf("expired silence on disk = %v, want it ended", sil)
	}
}

// A full disk does not stop paging: the notification goes out and its
// log entry is kept in memory (the resolution edits the message).
func TestStateWriteFailureKeepsPaging(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	fs := faults{}
	n := start(t, slackBotConfig(s, ""), Options{StoragePath: t.TempDir(), wrapState: fs.wrap})
	for _, name := range []string{"nflog", "slack-messages"} {
		fs[name].full.Store(true)
	}
	a := firing("DiskFull")
	n.Notify(context.Background(), []*rules.Alert{a})
	post := s.WaitCalls(t, 1, 10*time.Second)[0]
	waitFor(t, func() bool {
		return testutil.ToFloat64(n.metrics.notifications.WithLabelValues("oncall", "slack", outcomeSuccess)) == 1
	})
	waitFor(t, func() bool { return strings.Contains(n.logs.String(), "notification log entry kept in memory only") })
	contains(t, "logs", n.logs.String(), "no space left on device", "slack message journal kept in memory only")
	n.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	if upd := s.WaitCalls(t, 2, 10*time.Second)[1]; upd.Method != "chat.update" || upd.TS != post.TS {
		t.Fatalf("resolution = %+v, want chat.update of %s", upd, post.TS)
	}
}

// While the silences cannot be written, the API does not claim a change
// it could not write: 503 with the reason, the change in effect in memory.
func TestSilencesAPIDiskFull(t *testing.T) {
	fs := faults{}
	n := start(t, fmt.Sprintf(tinyRoute, "x")+"receivers: [{name: x}]\n", Options{StoragePath: t.TempDir(), wrapState: fs.wrap})
	fs["silences"].full.Store(true)
	url := serveAPI(t, n.Notifier)
	code, body := apiDo(t, http.MethodPost, url+"/api/v2/silences", silenceBody("Maintenance", "while the disk is full"))
	if code != http.StatusServiceUnavailable {
		t.Fatalf("POST silence on a full disk: %d %s, want 503", code, body)
	}
	contains(t, "503 answer", body, "could not be written to disk", "no space left on device", "keeps retrying")
	// It is in effect all the same.
	_, list := apiDo(t, http.MethodGet, url+"/api/v2/silences", "")
	contains(t, "silences", list, "while the disk is full", `"state":"active"`)

	fs["silences"].full.Store(false)
	code, body = apiDo(t, http.MethodPost, url+"/api/v2/silences", silenceBody("Other", "disk is back"))
	if code != http.StatusOK {
		t.Fatalf("POST silence with the disk back: %d %s", code, body)
	}
	id := silenceID(t, body)
	fs["silences"].full.Store(true)
	if code, body := apiDo(t, http.MethodDelete, url+"/api/v2/silence/"+id, ""); code != http.StatusServiceUnavailable {
		t.Fatalf("DELETE silence on a full disk: %d %s, want 503", code, body)
	}
}

// A storage path that cannot be written stops New with an error naming
// it.
func TestStoragePathNotWritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(file, "state")
	_, err := New(Options{StoragePath: path})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("New on %s: %v, want an error naming it", path, err)
	}
}

// stateBytes builds valid state files: the snapshot of the first
// entries, and the records of the others as a segment.
type stateBytes struct {
	snapshot []byte
	segment  []byte
	// lastRecord is where the last record of segment starts.
	lastRecord int
}

func frames(recs [][]byte) ([]byte, int) {
	var b []byte
	last := 0
	for _, r := range recs {
		last = len(b)
		b = durable.AppendFrame(b, r)
	}
	return b, last
}

func nflogFiles(t testing.TB, inSnapshot, inSegment int) stateBytes {
	t.Helper()
	l, err := nflog.New(nflog.Options{Metrics: prometheus.NewRegistry(), Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	l.SetBroadcast(func(b []byte) { recs = append(recs, b) })
	recv := &nflogpb.Receiver{GroupName: "oncall", Integration: "slack", Idx: 0}
	var st stateBytes
	snapshot := func() {
		var buf bytes.Buffer
		if _, err := l.Snapshot(&buf); err != nil {
			t.Fatal(err)
		}
		st.snapshot, recs = buf.Bytes(), nil
	}
	for i := range inSnapshot + inSegment {
		if i == inSnapshot {
			snapshot()
		}
		if err := l.Log(recv, fmt.Sprintf(`{}:{alertname="G%d"}`, i), []uint64{uint64(i + 1)}, nil, nil, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	if inSegment == 0 {
		snapshot()
	}
	st.segment, st.lastRecord = frames(recs)
	return st
}

func silencesFiles(t testing.TB, inSnapshot, inSegment int) stateBytes {
	t.Helper()
	s, err := silence.New(silence.Options{Metrics: prometheus.NewRegistry(), Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	s.SetBroadcast(func(b []byte) { recs = append(recs, b) })
	var st stateBytes
	snapshot := func() {
		var buf bytes.Buffer
		if _, err := s.Snapshot(&buf); err != nil {
			t.Fatal(err)
		}
		st.snapshot, recs = buf.Bytes(), nil
	}
	now := time.Now()
	for i := range inSnapshot + inSegment {
		if i == inSnapshot {
			snapshot()
		}
		err := s.Set(context.Background(), &silencepb.Silence{
			MatcherSets: []*silencepb.MatcherSet{{Matchers: []*silencepb.Matcher{{Name: "alertname", Pattern: fmt.Sprint("S", i)}}}},
			StartsAt:    timestamppb.New(now), EndsAt: timestamppb.New(now.Add(time.Hour)),
			CreatedBy: "test", Comment: fmt.Sprint("silence ", i),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if inSegment == 0 {
		snapshot()
	}
	st.segment, st.lastRecord = frames(recs)
	return st
}

func journalFiles(t testing.TB, inSnapshot, inSegment int) stateBytes {
	t.Helper()
	rec := func(i int) []byte {
		k := journalKey{Receiver: "oncall", Group: fmt.Sprintf(`{}:{alertname="J%d"}`, i)}
		b, err := json.Marshal(setRecord(k, journalEntry{Intent: fmt.Sprint("intent", i), At: time.Now(), Channel: "#alerts",
			ChannelID: "CALERTS", TS: fmt.Sprintf("1700000000.%06d", i)}))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var snap, seg [][]byte
	for i := range inSnapshot {
		snap = append(snap, rec(i))
	}
	for i := range inSegment {
		seg = append(seg, rec(inSnapshot+i))
	}
	var st stateBytes
	st.snapshot, _ = frames(snap)
	st.segment, st.lastRecord = frames(seg)
	return st
}

// A corrupt nflog, silences or slack-messages file, snapshot or segment,
// does not stop paged: New succeeds, the file is moved aside and counted,
// what could be read is kept, and notifications go out.
func TestCorruptStateFiles(t *testing.T) {
	type damage func(st stateBytes) (snapshot, segment []byte)
	garbage := func(stateBytes) ([]byte, []byte) {
		return []byte("\x7fELF this is not a state file \x00\xff\xfe"), nil
	}
	truncated := func(st stateBytes) ([]byte, []byte) { return st.snapshot[:len(st.snapshot)-5], nil }
	flipped := func(st stateBytes) ([]byte, []byte) {
		seg := bytes.Clone(st.segment)
		seg[st.lastRecord+8+3] ^= 0x10 // in the payload of the last record
		return st.snapshot, seg
	}
	type state struct {
		file  string
		files func(t testing.TB, inSnapshot, inSegment int) stateBytes
		held  func(n *Notifier) int
	}
	states := []state{
		{"nflog", nflogFiles, func(n *Notifier) int { return nflogEntries(n) }},
		{"silences", silencesFiles, func(n *Notifier) int {
			sils, _, _ := n.silences.Query(context.Background())
			return len(sils)
		}},
		{"slack-messages", journalFiles, func(n *Notifier) int { return n.journal.len() }},
	}
	for _, st := range states {
		for _, tc := range []struct {
			name      string
			snap, seg int // entries in the valid files
			damage    damage
			damaged   string // the file moved aside
			kept      int
		}{
			{"garbage", 2, 0, garbage, st.file, 0},
			{"truncated", 2, 0, truncated, st.file, 1},
			{"flipped-bit-in-segment", 1, 2, flipped, st.file + ".wal.00000001", 2},
		} {
			t.Run(st.file+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				snap, seg := tc.damage(st.files(t, tc.snap, tc.seg))
				if err := os.WriteFile(filepath.Join(dir, st.file), snap, 0o600); err != nil {
					t.Fatal(err)
				}
				if seg != nil {
					if err := os.WriteFile(filepath.Join(dir, st.file+".wal.00000001"), seg, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				logs := &syncBuffer{}
				reg := prometheus.NewRegistry()
				rep := durable.NewReporter(dir, newTestLogger(logs), reg)
				s := notifiertest.NewSlack(t, testToken)
				n, err := New(Options{Config: mustConfig(t, slackBotConfig(s, "")), StoragePath: dir, Reporter: rep,
					Registerer: reg, Logger: newTestLogger(logs), ExternalURL: "http://paged.example:9095"})
				if err != nil {
					t.Fatalf("New with a damaged %s: %v", tc.damaged, err)
				}
				r := runNotifier(t, n, logs)

				moved, _ := filepath.Glob(filepath.Join(dir, tc.damaged+durable.CorruptSuffix+"*"))
				if len(moved) != 1 {
					all, _ := os.ReadDir(dir)
					t.Fatalf("moved aside: %v, want one %s%s<unix> (dir: %v)", moved, tc.damaged, durable.CorruptSuffix, all)
				}
				if got, _ := testbin.GatherSum(reg, "paged_state_corruptions_total", "file", tc.damaged); got != 1 {
					t.Errorf("paged_state_corruptions_total{file=%q} = %v, want 1", tc.damaged, got)
				}
				contains(t, "logs", logs.String(), filepath.Join(dir, tc.damaged), "moved aside", moved[0])
				if got := st.held(n); got != tc.kept {
					t.Errorf("%s holds %d entries after loading, want %d (what was readable)", st.file, got, tc.kept)
				}
				r.Notify(context.Background(), []*rules.Alert{firing("AfterCorruption")})
				if c := s.WaitCalls(t, 1, 10*time.Second)[0]; c.Method != "chat.postMessage" || !strings.Contains(string(c.Blocks), "AfterCorruption") {
					t.Errorf("after loading a damaged %s: %+v, want the alert posted", tc.damaged, c)
				}
			})
		}
	}
}

// Gossip reaches the disk once per message: a small message through the
// broadcast hook (Merge calls it once for every entry it merged from the
// message), an oversized one (which Merge does not broadcast) through the
// cluster state's wrapper, with only its new entries. What merged nothing
// is not written.
func TestGossipMergeAppendsOnce(t *testing.T) {
	dir := t.TempDir()
	conf := mustConfig(t, fmt.Sprintf(tinyRoute, "x")+"receivers: [{name: x}]\n")
	n, err := New(Options{Config: conf, StoragePath: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n.alerts.Close()
	state := gossiped{n.nflogSt}
	records := func() int64 { return n.nflogSt.disk.Stats().Records }

	// The peer's log, whose messages this one merges.
	peer, err := nflog.New(nflog.Options{Metrics: prometheus.NewRegistry(), Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	recv := &nflogpb.Receiver{GroupName: "oncall", Integration: "slack"}
	logGroups := func(from, to int) {
		for i := from; i < to; i++ {
			if err := peer.Log(recv, fmt.Sprintf(`{}:{alertname="Group%d"}`, i), []uint64{uint64(i + 1)}, nil, nil, nil, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	merge := func(b []byte, wantNew int64, what string) {
		t.Helper()
		before := records()
		if err := state.Merge(b); err != nil {
			t.Fatal(err)
		}
		if got := records() - before; got != wantNew {
			t.Errorf("%s: %d records appended, want %d", what, got, wantNew)
		}
	}

	logGroups(0, 2)
	small, _ := peer.MarshalBinary()
	if len(small) > 700 {
		t.Fatalf("two entries take %d bytes, want a message small enough to gossip on", len(small))
	}
	merge(small, 1, "two new entries, gossiped on")
	merge(small, 0, "the same message again")

	logGroups(2, 4)
	full, _ := peer.MarshalBinary()
	for len(full) <= 700 {
		logGroups(4, 40)
		full, _ = peer.MarshalBinary()
	}
	want := nflogEntriesOf(t, full) - 2
	merge(full, 1, "an oversized full state")
	segs, _ := filepath.Glob(filepath.Join(dir, "nflog.wal.*"))
	sort.Strings(segs)
	b, _ := os.ReadFile(segs[len(segs)-1])
	var last []byte
	if err := durable.ReadFrames(bytes.NewReader(b), func(rec []byte) error { last = rec; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := nflogEntriesOf(t, last); got != want {
		t.Errorf("the oversized message appended %d entries, want the %d new ones", got, want)
	}
	merge(full, 0, "the same full state again")

	n.closeState()
	n2, err := New(Options{Config: conf, StoragePath: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n2.alerts.Close()
	defer n2.closeState()
	if got := nflogEntries(n2); got != want+2 {
		t.Errorf("after a restart: %d entries, want %d", got, want+2)
	}
}

func nflogEntriesOf(t *testing.T, b []byte) int {
	t.Helper()
	n, err := decodeNflog(b)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Loading any bytes as a state file returns an error or state, never
// panics.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x7fnot a state file"))
	f.Add(nflogFiles(f, 2, 0).snapshot)
	f.Add(silencesFiles(f, 2, 0).snapshot)
	f.Add(journalFiles(f, 2, 0).snapshot)
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := nflog.New(nflog.Options{Metrics: prometheus.NewRegistry(), Retention: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		s, err := silence.New(silence.Options{Metrics: prometheus.NewRegistry(), Retention: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		j := &slackJournal{msgs: map[journalKey]journalEntry{}, channels: map[string]string{}}
		_ = mergeEach(bytes.NewReader(b), l.Merge)
		_ = mergeEach(bytes.NewReader(b), s.Merge)
		_ = durable.ReadFrames(bytes.NewReader(b), j.replay)
		_ = l.Merge(b)
		_ = s.Merge(b)
		_ = j.replay(b)
	})
}

// A peer's oversized silences state (push-pull) is written once, with
// the silences that are new; merged again, nothing is written.
func TestGossipSilencesOversized(t *testing.T) {
	dir := t.TempDir()
	n, err := New(Options{Config: mustConfig(t, fmt.Sprintf(tinyRoute, "x")+"receivers: [{name: x}]\n"), StoragePath: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n.alerts.Close()
	defer n.closeState()
	records := func() int64 { return n.silSt.disk.Stats().Records }
	st := silencesFiles(t, 12, 0)
	if len(st.snapshot) <= 700 {
		t.Fatalf("12 silences take %d bytes, want an oversized message", len(st.snapshot))
	}
	before := records()
	if err := (gossiped{n.silSt}).Merge(st.snapshot); err != nil {
		t.Fatal(err)
	}
	if got := records() - before; got != 1 {
		t.Errorf("oversized silences state: %d records, want 1", got)
	}
	if got := len(diskSilences(t, dir)); got != 12 {
		t.Errorf("%d silences on disk, want 12", got)
	}
	before = records()
	if err := (gossiped{n.silSt}).Merge(st.snapshot); err != nil {
		t.Fatal(err)
	}
	if got := records() - before; got != 0 {
		t.Errorf("the same state again: %d records, want 0", got)
	}
}
