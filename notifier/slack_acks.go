package notifier

import (
	"bufio"
	"bytes"
	"time"

	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"google.golang.org/protobuf/encoding/protodelim"
)

// Acknowledgement is a group acknowledged from its Slack message.
type Acknowledgement struct {
	Receiver string    `json:"receiver"`
	GroupKey string    `json:"groupKey"`
	UserID   string    `json:"userId"`   // the Slack user
	UserName string    `json:"userName"` // their name when they acknowledged
	At       time.Time `json:"at"`
	// Channel and MessageTS are the message pressed.
	Channel   string `json:"channel,omitempty"`
	MessageTS string `json:"messageTs,omitempty"`
}

// acknowledgement returns the acknowledgement that holds for a group on
// any of its receiver's Slack messages, or nil.
func (n *Notifier) acknowledgement(conf *Config, receiver, gkey string) *Acknowledgement {
	r, ok := conf.Receiver(receiver)
	if !ok {
		return nil
	}
	for i, sc := range r.SlackConfigs {
		if !sc.BotMode() {
			continue
		}
		if st := loadActions(n.nflog, receiver, i, gkey); st.acked() {
			return ackOf(receiver, gkey, st)
		}
	}
	return nil
}

func ackOf(receiver, gkey string, st groupActions) *Acknowledgement {
	return &Acknowledgement{
		Receiver: receiver, GroupKey: gkey,
		UserID: st.str(actAckUser), UserName: st.str(actAckName), At: st.ackAt(),
		Channel: st.str(actChannel), MessageTS: st.str(actMessageTS),
	}
}

// Acknowledgements lists the acknowledgements that hold, from the
// notification log: what this instance applied and what its HA peer did.
func (n *Notifier) Acknowledgements() []Acknowledgement {
	out := []Acknowledgement{}
	n.actionEntries(func(e *nflogpb.Entry) {
		if st := (groupActions{store: nflog.NewStore(e)}); st.acked() {
			out = append(out, *ackOf(e.Receiver.GroupName, string(e.GroupKey), st))
		}
	})
	return out
}

// actionEntries calls fn with every actions entry of the notification
// log (its gossip form lists them all).
func (n *Notifier) actionEntries(fn func(e *nflogpb.Entry)) {
	b, err := n.nflog.MarshalBinary()
	if err != nil {
		return
	}
	br := bufio.NewReader(bytes.NewReader(b))
	for {
		var e nflogpb.MeshEntry
		if err := protodelim.UnmarshalFrom(br, &e); err != nil {
			return
		}
		if e.Entry != nil && e.Entry.Receiver != nil && e.Entry.Receiver.Integration == actionsIntegration {
			fn(e.Entry)
		}
	}
}
