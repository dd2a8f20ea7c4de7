package engine

import (
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/internal/durable"
)

// stateDir is the engine's directory under the storage path.
const stateDir = "alert-state"

// stateStore is the engine's alert state on disk: for every group, the
// alerts of its rules with their state and times (what Prometheus keeps
// in memory: activeAt, firing, keep_firing_for, last sent, valid until),
// and the datasource's health. Each evaluation appends one record with
// what it changed, and an evaluation that changed something waits for
// the fsync before its notifications go out (durable.Log groups the
// fsyncs of groups that evaluate together). An evaluation that changed
// nothing appends a short record with its time, never fsynced: the
// restart uses it to know up to when the state held.
//
// The store keeps a mirror of what is on disk, which is also what it
// compares each evaluation against and what it snapshots. Lock order:
// stateStore.mu, then a rule's alerts, then a rule's samples.
type stateStore struct {
	log *durable.Log

	mu     sync.Mutex
	groups map[string]*groupSnap
	health healthRecord
	buf    []byte
}

// groupSnap is one group's state in the mirror.
type groupSnap struct {
	lastEval time.Time
	gen      uint64
	rules    map[ruleID]map[uint64]*storedAlert // by label hash
}

func openStateStore(storage string, rep *durable.Reporter, logger *slog.Logger) (*stateStore, error) {
	s := &stateStore{groups: map[string]*groupSnap{}}
	l, err := durable.Open(durable.Options{
		Path:     filepath.Join(storage, stateDir, "state"),
		Load:     func(r io.Reader) error { return durable.ReadFrames(r, s.apply) },
		Replay:   s.apply,
		Snapshot: s.snapshot,
		Reporter: rep,
		Logger:   logger,
	})
	if err != nil {
		return nil, err
	}
	s.log = l
	return s, nil
}

func (s *stateStore) close() error { return s.log.Close() }

// apply replays one record into the mirror (at open, before any other use).
func (s *stateStore) apply(rec []byte) error {
	g, dropped, h, err := decodeState(rec)
	if err != nil {
		return err
	}
	switch {
	case h != nil:
		s.health = *h
	case dropped != "":
		delete(s.groups, dropped)
	case g != nil:
		snap := s.groups[g.key]
		if snap == nil {
			snap = &groupSnap{rules: map[ruleID]map[uint64]*storedAlert{}}
			s.groups[g.key] = snap
		}
		if g.lastEval.After(snap.lastEval) {
			snap.lastEval = g.lastEval
		}
		for _, rc := range g.rules {
			if rc.gone {
				delete(snap.rules, rc.id)
				continue
			}
			m := snap.rules[rc.id]
			if m == nil {
				m = map[uint64]*storedAlert{}
				snap.rules[rc.id] = m
			}
			for _, a := range rc.puts {
				m[rc.hash[a]] = a
			}
			for _, t := range rc.times {
				old := m[rc.hash[t]]
				if old == nil {
					continue // its put was in a file that was lost
				}
				old.state, old.value = t.state, t.value
				old.activeAt, old.firedAt, old.resolvedAt = t.activeAt, t.firedAt, t.resolvedAt
				old.lastSentAt, old.validUntil, old.keepFiringSince = t.lastSentAt, t.validUntil, t.keepFiringSince
			}
			for _, h := range rc.drops {
				delete(m, h)
			}
		}
	}
	return nil
}

// snapshot writes the mirror as records apply reads: the health, then
// each group with all its alerts.
func (s *stateStore) snapshot(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b []byte
	b = durable.AppendFrame(b, encodeHealth(nil, s.health))
	keys := make([]string, 0, len(s.groups))
	for k := range s.groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rec []byte
	for _, k := range keys {
		snap := s.groups[k]
		g := groupRecord{key: k, lastEval: snap.lastEval}
		for id, m := range snap.rules {
			rc := ruleChange{id: id, hash: make(map[*storedAlert]uint64, len(m))}
			for h, a := range m {
				rc.puts = append(rc.puts, a)
				rc.hash[a] = h
			}
			g.rules = append(g.rules, rc)
		}
		rec = encodeGroup(rec[:0], &g)
		b = durable.AppendFrame(b, rec)
		if len(b) > 1<<20 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}

// loaded returns the state the store holds for a group, nil if none.
// The caller must not keep it past the next commit of that group.
func (s *stateStore) loaded(key string) *groupSnap {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groups[key]
}

// dropGroups forgets the groups that are not in keep.
func (s *stateStore) dropGroups(keep map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.groups {
		if !keep[k] {
			delete(s.groups, k)
			s.log.Append(encodeDropGroup(s.buf[:0], k))
		}
	}
}

// setHealth records the datasource's health when it changed and waits
// for it to be written.
func (s *stateStore) setHealth(h healthRecord) error {
	s.mu.Lock()
	if h == s.health {
		s.mu.Unlock()
		return nil
	}
	s.health = h
	seq := s.log.Append(encodeHealth(s.buf[:0], h))
	s.mu.Unlock()
	return s.log.Wait(seq)
}

// savedHealth returns the health the store holds.
func (s *stateStore) savedHealth() healthRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.health
}

// alertSource gives commit what it needs of a rule beyond its alerts.
type alertSource struct {
	id   ruleID
	rule *promrules.AlertingRule
	def  *ruleDef // set when paged took the rule's labels and annotations over
}

// alertSources lists the alerting rules of g with their ids.
func alertSources(g *promrules.Group, plan *groupPlan) []alertSource {
	var out []alertSource
	nth := map[ruleID]int{}
	for i, r := range g.Rules() {
		ar, ok := r.(*promrules.AlertingRule)
		if !ok {
			continue
		}
		def := plan.def(i, r)
		lbls := ar.Labels()
		if def != nil {
			lbls = def.labels
		}
		id := ruleID{name: ar.Name(), labels: lbls.String()}
		n := nth[id]
		nth[id]++
		id.nth = n
		out = append(out, alertSource{id: id, rule: ar, def: def})
	}
	return out
}

// commit compares the group's alerts after the evaluation at ts with the
// mirror, appends one record with the differences and returns its
// sequence number, and whether anything changed (then the caller waits
// for it before acting). When trans is not nil, the alerts' changes of
// state are appended to it, for the history.
func (s *stateStore) commit(key string, ts time.Time, rules []alertSource, trans *[]transition) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.groups[key]
	if snap == nil {
		snap = &groupSnap{rules: map[ruleID]map[uint64]*storedAlert{}}
		s.groups[key] = snap
	}
	snap.gen++
	gen := snap.gen
	rec := groupRecord{key: key, lastEval: ts}
	seen := make(map[ruleID]bool, len(rules))
	for _, src := range rules {
		ar, id := src.rule, src.id
		seen[id] = true
		m := snap.rules[id]
		rc := ruleChange{id: id}
		ar.ForEachActiveAlert(func(a *promrules.Alert) {
			h := a.Labels.Hash()
			sa := m[h]
			switch {
			case sa == nil || !labels.Equal(sa.labels, a.Labels):
				if trans != nil && a.State != promrules.StateInactive {
					*trans = append(*trans, newTransition(promrules.StateInactive, a))
				}
				sa = newStoredAlert(a, src.def)
				if m == nil {
					m = map[uint64]*storedAlert{}
					snap.rules[id] = m
				}
				m[h] = sa
				rc.puts = append(rc.puts, sa)
				rc.setHash(sa, h)
			case sa.timesDiffer(a):
				if trans != nil && sa.state != a.State {
					*trans = append(*trans, newTransition(sa.state, a))
				}
				sa.setTimes(a)
				rc.times = append(rc.times, sa)
				rc.setHash(sa, h)
			}
			sa.value = a.Value
			sa.gen = gen
		})
		for h, sa := range m {
			if sa.gen != gen {
				if trans != nil && sa.state == promrules.StatePending {
					// Prometheus forgets a pending alert whose
					// condition no longer holds.
					*trans = append(*trans, transition{typ: history.TypeInactive, labels: sa.labels, value: sa.value, activeAt: sa.activeAt})
				}
				delete(m, h)
				rc.drops = append(rc.drops, h)
			}
		}
		if len(m) == 0 && m != nil {
			delete(snap.rules, id)
		}
		if len(rc.puts)+len(rc.times)+len(rc.drops) > 0 {
			rec.rules = append(rec.rules, rc)
		}
	}
	for id := range snap.rules {
		if !seen[id] {
			delete(snap.rules, id)
			rec.rules = append(rec.rules, ruleChange{id: id, gone: true})
		}
	}
	snap.lastEval = ts
	s.buf = encodeGroup(s.buf[:0], &rec)
	return s.log.Append(s.buf), len(rec.rules) > 0
}

func (rc *ruleChange) setHash(a *storedAlert, h uint64) {
	if rc.hash == nil {
		rc.hash = map[*storedAlert]uint64{}
	}
	rc.hash[a] = h
}

func (a *storedAlert) setTimes(p *promrules.Alert) {
	a.state = p.State
	a.activeAt, a.firedAt, a.resolvedAt = p.ActiveAt, p.FiredAt, p.ResolvedAt
	a.lastSentAt, a.validUntil, a.keepFiringSince = p.LastSentAt, p.ValidUntil, p.KeepFiringSince
}

// newStoredAlert copies a Prometheus alert; for a rule paged took over it
// also keeps how the alert's sample differs from its labels.
func newStoredAlert(a *promrules.Alert, def *ruleDef) *storedAlert {
	sa := &storedAlert{labels: a.Labels, value: a.Value}
	sa.setTimes(a)
	if def == nil {
		sa.annotations = a.Annotations
		return sa
	}
	def.samples.mu.Lock()
	rec := def.samples.m[a.Labels.Hash()]
	def.samples.mu.Unlock()
	if rec == nil {
		return sa
	}
	extra := labels.NewScratchBuilder(0)
	rec.metric.Range(func(l labels.Label) {
		if a.Labels.Get(l.Name) != l.Value {
			extra.Add(l.Name, l.Value)
		}
	})
	sa.metricExtra = extra.Labels()
	a.Labels.Range(func(l labels.Label) {
		if !rec.metric.Has(l.Name) {
			sa.metricMissing = append(sa.metricMissing, l.Name)
		}
	})
	return sa
}

// metric rebuilds the sample that produced the alert (for a rule paged
// took over).
func (a *storedAlert) metric() labels.Labels {
	b := labels.NewBuilder(a.labels)
	for _, n := range a.metricMissing {
		b.Del(n)
	}
	a.metricExtra.Range(func(l labels.Label) { b.Set(l.Name, l.Value) })
	return b.Labels()
}

// transition is an alert's change of state in one evaluation, for the
// history.
type transition struct {
	typ      string // history.TypePending, TypeFiring, TypeResolved, TypeInactive
	labels   labels.Labels
	value    float64
	activeAt time.Time
}

// newTransition is the change of a from the state it had.
func newTransition(was promrules.AlertState, a *promrules.Alert) transition {
	t := transition{labels: a.Labels, value: a.Value, activeAt: a.ActiveAt}
	switch a.State {
	case promrules.StatePending:
		t.typ = history.TypePending
	case promrules.StateFiring:
		t.typ = history.TypeFiring
	default:
		t.typ = history.TypeInactive
		if was == promrules.StateFiring {
			t.typ = history.TypeResolved
		}
	}
	return t
}
