package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"
)

// The records of the alert state (statestore.go), in a compact binary
// form: uvarint lengths and counts, varint times (Unix nanoseconds, 0 for
// the zero time), floats as their 8 IEEE-754 bytes. The durable log frames
// and checksums each record; the decoder checks every length against what
// is left, so a damaged record is an error, never a panic.
const (
	recGroup     byte = 'G' // one evaluation's changes to a group
	recDropGroup byte = 'D' // a group removed from the configuration
	recHealth    byte = 'H' // the datasource's health (PagedDatasourceDown)

	stateVersion byte = 1
)

// storedAlert is one alert of a rule as the state keeps it.
type storedAlert struct {
	labels labels.Labels
	// For a rule whose labels paged took over: how the sample that
	// produced the alert differs from the alert's labels (its __name__,
	// the values of the labels the rule overrides) and which of the
	// alert's labels it lacked. Annotations are expanded from it.
	metricExtra   labels.Labels
	metricMissing []string
	// For other rules: the annotations as Prometheus expanded them.
	annotations labels.Labels

	state           promrules.AlertState
	value           float64 // not compared: it changes at every evaluation
	gen             uint64  // the last commit that saw the alert (statestore.go)
	activeAt        time.Time
	firedAt         time.Time
	resolvedAt      time.Time
	lastSentAt      time.Time
	validUntil      time.Time
	keepFiringSince time.Time
}

// timesDiffer reports whether p differs from a in anything but the value
// (which changes at every evaluation and is not worth a write).
func (a *storedAlert) timesDiffer(p *promrules.Alert) bool {
	return a.state != p.State || !a.activeAt.Equal(p.ActiveAt) || !a.firedAt.Equal(p.FiredAt) ||
		!a.resolvedAt.Equal(p.ResolvedAt) || !a.lastSentAt.Equal(p.LastSentAt) ||
		!a.validUntil.Equal(p.ValidUntil) || !a.keepFiringSince.Equal(p.KeepFiringSince)
}

// ruleID names a rule within its group the way Prometheus's CopyState
// matches rules across reloads: its name and labels (as written: paged
// hands Prometheus the rules it took over without labels) and, among
// rules with both the same, its position.
type ruleID struct {
	name   string
	labels string
	nth    int
}

// ruleChange is what one evaluation changed in one rule's alerts.
type ruleChange struct {
	id    ruleID
	gone  bool                    // the rule left the group: drop all
	puts  []*storedAlert          // new alerts, or alerts whose labels' data changed
	times []*storedAlert          // known alerts whose state or times changed
	drops []uint64                // alerts Prometheus forgot, by label hash
	hash  map[*storedAlert]uint64 // label hashes of puts and times (encoding only)
}

// groupRecord is one evaluation of a group (or, in a snapshot, its whole
// state).
type groupRecord struct {
	key      string
	lastEval time.Time
	rules    []ruleChange
}

type healthRecord struct {
	down      bool
	downSince time.Time
	lastSent  time.Time
}

type enc struct{ b []byte }

func (e *enc) byte(c byte)   { e.b = append(e.b, c) }
func (e *enc) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) u64(v uint64)  { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) float(f float64) {
	e.u64(math.Float64bits(f))
}

func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.b = binary.AppendVarint(e.b, 0)
		return
	}
	e.b = binary.AppendVarint(e.b, t.UnixNano())
}

func (e *enc) labels(ls labels.Labels) {
	e.uint(uint64(ls.Len()))
	ls.Range(func(l labels.Label) {
		e.str(l.Name)
		e.str(l.Value)
	})
}

func (e *enc) alert(a *storedAlert, full bool) {
	if full {
		e.labels(a.labels)
		e.labels(a.metricExtra)
		e.uint(uint64(len(a.metricMissing)))
		for _, n := range a.metricMissing {
			e.str(n)
		}
		e.labels(a.annotations)
	}
	e.byte(byte(a.state))
	e.float(a.value)
	e.time(a.activeAt)
	e.time(a.firedAt)
	e.time(a.resolvedAt)
	e.time(a.lastSentAt)
	e.time(a.validUntil)
	e.time(a.keepFiringSince)
}

func encodeGroup(dst []byte, g *groupRecord) []byte {
	e := enc{b: dst}
	e.byte(recGroup)
	e.byte(stateVersion)
	e.str(g.key)
	e.time(g.lastEval)
	e.uint(uint64(len(g.rules)))
	for i := range g.rules {
		rc := &g.rules[i]
		e.str(rc.id.name)
		e.str(rc.id.labels)
		e.uint(uint64(rc.id.nth))
		if rc.gone {
			e.byte(1)
			continue
		}
		e.byte(0)
		e.uint(uint64(len(rc.puts)))
		for _, a := range rc.puts {
			e.alert(a, true)
		}
		e.uint(uint64(len(rc.times)))
		for _, a := range rc.times {
			e.u64(rc.hash[a])
			e.alert(a, false)
		}
		e.uint(uint64(len(rc.drops)))
		for _, h := range rc.drops {
			e.u64(h)
		}
	}
	return e.b
}

func encodeDropGroup(dst []byte, key string) []byte {
	e := enc{b: dst}
	e.byte(recDropGroup)
	e.byte(stateVersion)
	e.str(key)
	return e.b
}

func encodeHealth(dst []byte, h healthRecord) []byte {
	e := enc{b: dst}
	e.byte(recHealth)
	e.byte(stateVersion)
	if h.down {
		e.byte(1)
	} else {
		e.byte(0)
	}
	e.time(h.downSince)
	e.time(h.lastSent)
	return e.b
}

var errShort = errors.New("record ends early")

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *dec) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *dec) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of items that take at least min bytes each.
func (d *dec) count(min int) int {
	n := d.uint()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.fail(fmt.Errorf("count %d exceeds the record", n))
		return 0
	}
	return int(n)
}

func (d *dec) str() string {
	n := d.uint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) u64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.fail(errShort)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *dec) float() float64 { return math.Float64frombits(d.u64()) }

func (d *dec) time() time.Time {
	if d.err != nil {
		return time.Time{}
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return time.Time{}
	}
	d.b = d.b[n:]
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

func (d *dec) labels() labels.Labels {
	n := d.count(2)
	if n == 0 {
		return labels.EmptyLabels()
	}
	b := labels.NewScratchBuilder(n)
	for range n {
		name := d.str()
		b.Add(name, d.str())
	}
	b.Sort()
	return b.Labels()
}

func (d *dec) alert(a *storedAlert, full bool) {
	if full {
		a.labels = d.labels()
		a.metricExtra = d.labels()
		if n := d.count(1); n > 0 {
			a.metricMissing = make([]string, n)
			for i := range a.metricMissing {
				a.metricMissing[i] = d.str()
			}
		}
		a.annotations = d.labels()
	}
	st := promrules.AlertState(d.byte())
	if d.err == nil && st != promrules.StateInactive && st != promrules.StatePending && st != promrules.StateFiring {
		d.fail(fmt.Errorf("bad alert state %d", st))
	}
	a.state = st
	a.value = d.float()
	a.activeAt = d.time()
	a.firedAt = d.time()
	a.resolvedAt = d.time()
	a.lastSentAt = d.time()
	a.validUntil = d.time()
	a.keepFiringSince = d.time()
}

// decodeState decodes one record into exactly one of its results.
func decodeState(b []byte) (g *groupRecord, dropped string, h *healthRecord, err error) {
	d := &dec{b: b}
	kind := d.byte()
	if v := d.byte(); d.err == nil && v != stateVersion {
		return nil, "", nil, fmt.Errorf("alert state record version %d, this paged reads %d", v, stateVersion)
	}
	switch kind {
	case recGroup:
		g = &groupRecord{key: d.str(), lastEval: d.time()}
		n := d.count(4)
		g.rules = make([]ruleChange, 0, n)
		for range n {
			rc := ruleChange{id: ruleID{name: d.str(), labels: d.str(), nth: int(d.uint())}}
			if d.byte() == 1 {
				rc.gone = true
				g.rules = append(g.rules, rc)
				continue
			}
			rc.hash = map[*storedAlert]uint64{}
			for range d.count(19) {
				a := &storedAlert{}
				d.alert(a, true)
				rc.puts = append(rc.puts, a)
				rc.hash[a] = a.labels.Hash()
			}
			for range d.count(23) {
				h := d.u64()
				a := &storedAlert{}
				d.alert(a, false)
				rc.times = append(rc.times, a)
				rc.hash[a] = h
			}
			for range d.count(8) {
				rc.drops = append(rc.drops, d.u64())
			}
			g.rules = append(g.rules, rc)
		}
	case recDropGroup:
		dropped = d.str()
	case recHealth:
		h = &healthRecord{down: d.byte() == 1, downSince: d.time(), lastSent: d.time()}
	default:
		if d.err == nil {
			return nil, "", nil, fmt.Errorf("unknown alert state record %q", kind)
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Errorf("%d bytes left over", len(d.b)))
	}
	if d.err != nil {
		return nil, "", nil, d.err
	}
	return g, dropped, h, nil
}
