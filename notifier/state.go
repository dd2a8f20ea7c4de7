package notifier

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/cluster"

	"github.com/pagedhq/paged/internal/durable"
)

// stateLog is what the notifier needs of a *durable.Log. Tests wrap it
// (Options.wrapState) to make writes fail.
type stateLog interface {
	Append(rec []byte) uint64
	Wait(seq uint64) error
	Sync() error
	Stats() durable.Stats
	Close() error
}

// amState is one of Alertmanager's gossiped states: *nflog.Log or
// *silence.Silences.
type amState interface {
	cluster.State
	SetBroadcast(func([]byte))
	Snapshot(w io.Writer) (int64, error)
}

// gossipState keeps one of Alertmanager's states on disk. Alertmanager
// calls the broadcast hook with every change the state makes (a new
// notification log entry, a silence set or expired) and with every gossip
// message that changed it; the hook appends that message to a durable.Log
// and, in a cluster, hands it to the peer's broadcast as before. The
// snapshot is Alertmanager's own snapshot format, and replaying a record
// is Alertmanager's Merge.
type gossipState struct {
	name   string // file under StoragePath
	state  amState
	disk   stateLog // nil without StoragePath
	logger *slog.Logger
	// fresh returns the entries of a gossip message that would change the
	// state (newer than what it holds), as a message of their own.
	fresh func(b []byte) []byte
	// wait makes the hook return only once the change is fsynced.
	wait bool
	// syncInterval is the log's durable.Options.SyncInterval.
	syncInterval time.Duration
	peer         func([]byte) // the cluster channel's Broadcast; nil without a cluster

	mu      sync.Mutex
	lastMsg *byte // first byte of the message appended last
	lastSeq uint64
}

// open loads the state from its files and starts appending to them. It
// runs before the broadcast hook is set: replaying through Merge
// broadcasts nothing.
func (g *gossipState) open(n *Notifier) error {
	d, err := n.openLog(g.name, durable.Options{
		Load:         func(r io.Reader) error { return mergeEach(r, g.state.Merge) },
		Replay:       g.state.Merge,
		SyncInterval: g.syncInterval,
		Snapshot: func(w io.Writer) error {
			_, err := g.state.Snapshot(w)
			return err
		},
	})
	if err != nil {
		return err
	}
	g.disk = d
	return nil
}

// start sets the broadcast hook; peer is the cluster's broadcast, or nil.
func (g *gossipState) start(peer func([]byte)) {
	g.peer = peer
	if g.disk == nil && peer == nil {
		return
	}
	g.state.SetBroadcast(g.broadcast)
}

// broadcast is the state's broadcast hook. Alertmanager calls it with
// the state's lock held, so it does not wait for the fsync unless wait
// is set (silences, which change rarely).
func (g *gossipState) broadcast(b []byte) {
	if g.peer != nil {
		g.peer(b)
	}
	seq, ok := g.append(b)
	if ok && g.wait {
		if err := g.disk.Wait(seq); err != nil {
			g.logger.Warn("state change kept in memory only; the write is retried", "file", g.name, "err", err)
		}
	}
}

// append writes b to the log once. Merge calls the hook with the same
// message once for every entry of it that it merged; holding on to the
// message's first byte recognises the repeats (and keeps that memory from
// being reused by another message).
func (g *gossipState) append(b []byte) (uint64, bool) {
	if g.disk == nil || len(b) == 0 {
		return 0, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if &b[0] == g.lastMsg {
		return g.lastSeq, true
	}
	g.lastMsg, g.lastSeq = &b[0], g.disk.Append(b)
	return g.lastSeq, true
}

// synced waits until the last change appended is fsynced.
func (g *gossipState) synced() error {
	if g.disk == nil {
		return nil
	}
	g.mu.Lock()
	seq := g.lastSeq
	g.mu.Unlock()
	return g.disk.Wait(seq)
}

// gossiped is the state as the cluster peer sees it: what it merges is
// appended to the log too.
type gossiped struct{ g *gossipState }

func (c gossiped) MarshalBinary() ([]byte, error) { return c.g.state.MarshalBinary() }

// Merge merges a peer's message. A message small enough to be gossiped
// on is broadcast by Merge itself, so the hook appends it. Merge does not
// broadcast an oversized one (full states exchanged by push-pull, big
// groups): the entries it brings that are new are appended here.
func (c gossiped) Merge(b []byte) error {
	var fresh []byte
	if c.g.disk != nil && cluster.OversizedMessage(b) {
		fresh = c.g.fresh(b)
	}
	if err := c.g.state.Merge(b); err != nil {
		return err
	}
	if len(fresh) > 0 {
		if seq, ok := c.g.append(fresh); ok && c.g.wait {
			if err := c.g.disk.Wait(seq); err != nil {
				c.g.logger.Warn("gossiped state kept in memory only; the write is retried", "file", c.g.name, "err", err)
			}
		}
	}
	return nil
}

// maxEntry bounds one entry of a snapshot, as protodelim does.
const maxEntry = 4 << 20

// mergeEach reads a stream of length-delimited protobuf messages (the
// snapshot format of Alertmanager's nflog and silences) and merges them
// one at a time, so that a damaged snapshot keeps the entries before the
// damage. It returns the first error, naming the entry.
func mergeEach(r io.Reader, merge func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	for n := 0; ; n++ {
		size, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("entry %d at byte %d: length: %w", n, off, err)
		}
		if size == 0 || size > maxEntry {
			return fmt.Errorf("entry %d at byte %d: bad length %d", n, off, size)
		}
		msg := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+int(size)), size)
		head := len(msg)
		msg = msg[:head+int(size)]
		if _, err := io.ReadFull(br, msg[head:]); err != nil {
			return fmt.Errorf("entry %d at byte %d: cut short: %w", n, off, err)
		}
		if err := merge(msg); err != nil {
			return fmt.Errorf("entry %d at byte %d: %w", n, off, err)
		}
		off += int64(len(msg))
	}
}

// openLog opens the durable log of one state file under StoragePath; nil
// without StoragePath. o gets the path, reporter and logger.
func (n *Notifier) openLog(name string, o durable.Options) (stateLog, error) {
	if n.opts.StoragePath == "" {
		return nil, nil
	}
	o.Path = n.statePath(name)
	o.Reporter = n.reporter
	o.Logger = n.logger.With("component", "state")
	d, err := durable.Open(o)
	if err != nil {
		return nil, err
	}
	var l stateLog = d
	if n.opts.wrapState != nil {
		l = n.opts.wrapState(name, l)
	}
	n.logs = append(n.logs, l)
	return l, nil
}

// closeState fsyncs and closes the state files. Nothing is written
// after: the files already hold every change.
func (n *Notifier) closeState() {
	for _, l := range n.logs {
		if err := l.Close(); err != nil {
			n.logger.Warn("closing state file failed", "err", err)
		}
	}
	n.logs = nil
}

// stateSize is the size of a state file's snapshot, for Alertmanager's
// alertmanager_*_snapshot_size_bytes.
func (n *Notifier) stateSize(name string) int64 {
	if n.opts.StoragePath == "" {
		return 0
	}
	fi, err := os.Stat(n.statePath(name))
	if err != nil {
		return 0
	}
	return fi.Size()
}
