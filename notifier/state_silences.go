package notifier

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/alertmanager/silence"
	"github.com/prometheus/alertmanager/silence/silencepb"
	"google.golang.org/protobuf/encoding/protodelim"
)

// newSilencesState keeps the silences in <StoragePath>/silences: the
// snapshot in Alertmanager's format, each change appended and fsynced
// before Set or Expire returns (silences change rarely), so that the API
// answers a change only once it is on disk.
func newSilencesState(s *silence.Silences, logger *slog.Logger) *gossipState {
	g := &gossipState{name: "silences", state: s, logger: logger, wait: true}
	g.fresh = func(b []byte) []byte { return freshSilences(s, b, time.Now()) }
	return g
}

// freshSilences returns the silences of b that Merge would take: not
// expired, and updated after the version held.
func freshSilences(s *silence.Silences, b []byte, now time.Time) []byte {
	var in []*silencepb.MeshSilence
	var ids []string
	br := bufio.NewReader(bytes.NewReader(b))
	for {
		var e silencepb.MeshSilence
		if err := protodelim.UnmarshalFrom(br, &e); err != nil {
			break // the end, or damage Merge reports
		}
		if e.Silence == nil || !e.ExpiresAt.AsTime().After(now) {
			continue
		}
		in = append(in, &e)
		ids = append(ids, e.Silence.Id)
	}
	if len(in) == 0 {
		return nil
	}
	held := map[string]time.Time{}
	if sils, _, err := s.Query(context.Background(), silence.QIDs(ids...)); err == nil {
		for _, sil := range sils {
			held[sil.Id] = sil.UpdatedAt.AsTime()
		}
	}
	var out bytes.Buffer
	for _, e := range in {
		if at, ok := held[e.Silence.Id]; ok && !at.Before(e.Silence.UpdatedAt.AsTime()) {
			continue
		}
		_, _ = protodelim.MarshalTo(&out, e)
	}
	return out.Bytes()
}
