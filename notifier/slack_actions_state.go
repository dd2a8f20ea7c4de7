package notifier

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"github.com/prometheus/common/model"
)

// What was done from Slack to a group's message (acknowledged, silenced)
// is one more entry of the notification log, beside the Slack
// integration's own: receiver {GroupName: the receiver, Integration:
// "slack-actions", Idx: the slack_configs index}, keyed by the group key.
// The notification log gives it what the message's own record has: it is
// on disk before paged says anything happened (durableNflog), it is
// gossiped to an HA peer, which merges the newest, and it expires with
// the rest of the log. Its FiringAlerts are the group's firing alerts
// when it was acknowledged, hashed as the notification log hashes them,
// so the dedup stage's view and the acknowledgement's compare.
const actionsIntegration = "slack-actions"

// Keys of the actions entry's receiver data.
const (
	actAckUser     = "ack_user"     // Slack user id
	actAckName     = "ack_name"     // the user's name when they acted
	actAckAt       = "ack_at"       // unix seconds
	actAckEnd      = "ack_end"      // why it ended: ackEnd*; absent while it holds
	actAckEndBy    = "ack_end_by"   // who ended it (unack)
	actSilenceID   = "silence_id"   // the silence created from the message
	actSilenceUser = "silence_user" // Slack user id
	actSilenceName = "silence_name"
	actSilenceEnd  = "silence_end_by" // who lifted it from Slack
	actLastTS      = "last_action_ts" // the newest action applied (Slack's action_ts)
	actChannel     = "channel"        // the message, as the last action saw it
	actMessageTS   = "message_ts"
	actPending     = "pending" // 1: the message does not show the state yet
)

// Why an acknowledgement ended.
const (
	ackEndUnack    = "unack"
	ackEndNewAlert = "new_alert"
	ackEndResolved = "resolved"
)

// groupActions is the actions entry of one group's message.
type groupActions struct {
	store  *nflog.Store
	firing []uint64 // hashes of the alerts firing when acknowledged
}

func (g groupActions) str(k string) string { v, _ := g.store.GetStr(k); return v }

// acked reports whether an acknowledgement holds.
func (g groupActions) acked() bool { return g.str(actAckUser) != "" && g.str(actAckEnd) == "" }

func (g groupActions) ackAt() time.Time {
	v, _ := g.store.GetInt(actAckAt)
	return time.Unix(v, 0).UTC()
}

// actionsReceiver is the notification log receiver of a slack_configs
// entry's actions.
func actionsReceiver(receiver string, idx int) *nflogpb.Receiver {
	return &nflogpb.Receiver{GroupName: receiver, Integration: actionsIntegration, Idx: uint32(idx)}
}

// loadActions reads a group's actions entry; none: an empty one.
func loadActions(l *nflog.Log, receiver string, idx int, gkey string) groupActions {
	if l == nil { // RenderPayloads: no state, the buttons as first posted
		return groupActions{store: nflog.NewStore(nil)}
	}
	es, err := l.Query(nflog.QGroupKey(gkey), nflog.QReceiver(actionsReceiver(receiver, idx)))
	if err != nil || len(es) != 1 {
		return groupActions{store: nflog.NewStore(nil)}
	}
	return groupActions{store: nflog.NewStore(es[0]), firing: es[0].FiringAlerts}
}

// slackEntry is the Slack integration's own entry for the group: what its
// message last showed.
func slackEntry(l *nflog.Log, receiver string, idx int, gkey string) *nflogpb.Entry {
	es, err := l.Query(nflog.QGroupKey(gkey), nflog.QReceiver(&nflogpb.Receiver{GroupName: receiver, Integration: "slack", Idx: uint32(idx)}))
	if err != nil || len(es) != 1 {
		return nil
	}
	return es[0]
}

// hashAlert hashes an alert's labels as the notification log's entries
// do (Alertmanager's notify.hashAlert, unexported there): the sorted
// label names and values, each followed by 0xff, through xxhash. A test
// checks it against the hashes the dedup stage writes.
func hashAlert(ls model.LabelSet) uint64 {
	names := make([]string, 0, len(ls))
	for n := range ls {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var b []byte
	for _, n := range names {
		b = append(b, n...)
		b = append(b, 0xff)
		b = append(b, ls[model.LabelName(n)]...)
		b = append(b, 0xff)
	}
	return xxhash.Sum64(b)
}

// firingHashes returns the hashes of the alerts that are firing.
func firingHashes(alerts []*alert.Alert, now time.Time) []uint64 {
	var hs []uint64
	for _, a := range alerts {
		if !a.ResolvedAt(now) {
			hs = append(hs, hashAlert(a.Labels))
		}
	}
	return hs
}

// subset reports whether every hash of a is in b.
func subset(a, b []uint64) bool {
	for _, h := range a {
		if !slices.Contains(b, h) {
			return false
		}
	}
	return true
}

func sameSet(a, b []uint64) bool { return subset(a, b) && subset(b, a) }

// actionRef is what each button's value carries: the receiver, the
// slack_configs index and the group key, so a press finds its group
// without a lookup table that a restart or the HA peer would lack.
type actionRef struct {
	Receiver string `json:"r"`
	Idx      int    `json:"i"`
	GroupKey string `json:"g"`
}

// slackMaxValue is Slack's limit on a button's value.
const slackMaxValue = 2000

// encode returns the button value, or "" when the group key is too long
// for one (a group by hundreds of label values): the message then keeps
// its link buttons.
func (r actionRef) encode() string {
	b, err := json.Marshal(r)
	if err != nil {
		return ""
	}
	v := "p1:" + base64.RawURLEncoding.EncodeToString(b)
	if len(v) > slackMaxValue {
		return ""
	}
	return v
}

func decodeRef(v string) (actionRef, error) {
	var r actionRef
	rest, ok := strings.CutPrefix(v, "p1:")
	if !ok {
		return r, fmt.Errorf("not a paged button value")
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return r, fmt.Errorf("button value: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("button value: %w", err)
	}
	if r.Receiver == "" || r.GroupKey == "" || r.Idx < 0 {
		return r, fmt.Errorf("button value: incomplete")
	}
	return r, nil
}

// slackTS is a Slack timestamp ("1700000000.123456"), compared exactly:
// as a float64 it would lose the microseconds.
type slackTS struct{ sec, usec int64 }

func parseSlackTS(s string) (slackTS, bool) {
	a, b, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(a, 10, 64)
	if err != nil || sec < 0 {
		return slackTS{}, false
	}
	var usec int64
	if b != "" {
		b = (b + "000000")[:6]
		if usec, err = strconv.ParseInt(b, 10, 64); err != nil {
			return slackTS{}, false
		}
	}
	return slackTS{sec, usec}, true
}

func (t slackTS) after(u slackTS) bool {
	return t.sec > u.sec || (t.sec == u.sec && t.usec > u.usec)
}
