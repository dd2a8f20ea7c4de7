//go:build reliability

package reliability

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// delivery is one notification about one episode, as a receiver got it.
type delivery struct {
	instance string
	ep       int    // episode id (see episodeBase)
	status   string // firing or resolved
	at       time.Time
	ts       string // Slack: the message posted or edited
}

// key is what a notification is about: an episode and a status.
type key struct {
	ep     int
	status string
}

func (k key) String() string { return fmt.Sprintf("episode %d %s", k.ep, k.status) }

// deliveries returns the webhook's notifications about episodes.
func (h *hook) deliveries() []delivery {
	var out []delivery
	for _, a := range h.alerts() {
		in, id := episodeOf(a.Annotations["summary"])
		if id < 0 {
			continue
		}
		out = append(out, delivery{instance: in, ep: id, status: a.Status, at: a.At})
	}
	return out
}

// deliveries returns the Slack stand-in's notifications about episodes:
// a top-level message posted is a firing one, an edit that turns a
// message to RESOLVED a resolved one. Thread replies are not counted.
func (s *slack) deliveries() []delivery {
	var out []delivery
	for _, c := range s.Calls() {
		if c.Error != "" || c.Status != http.StatusOK || c.ThreadTS != "" {
			continue
		}
		in, id := episodeOf(string(c.Blocks))
		if id < 0 {
			continue
		}
		d := delivery{instance: in, ep: id, at: c.At, ts: c.TS}
		switch {
		case c.Method == "chat.postMessage":
			d.status = "firing"
		case c.Method == "chat.update" && strings.Contains(string(c.Blocks), "RESOLVED"):
			d.status = "resolved"
		default:
			continue
		}
		out = append(out, d)
	}
	return out
}

// editedOriginal looks at the owed episodes of l (those keep selects, all
// when keep is nil) that had a Slack message: posted counts them, edited
// those whose first message now reads RESOLVED for that episode (the
// resolution edited the message rather than posting a new one).
func (s *slack) editedOriginal(l *ledger, keep func(episode) bool) (edited, posted int) {
	for _, e := range l.owed {
		if keep != nil && !keep(e) {
			continue
		}
		d, ok := l.first(key{e.id, "firing"})
		if !ok {
			continue
		}
		posted++
		m, ok := s.Message(slackChannelID, d.ts)
		if !ok {
			continue
		}
		if _, id := episodeOf(string(m.Blocks)); id == e.id && strings.Contains(string(m.Blocks), "RESOLVED") {
			edited++
		}
	}
	return edited, posted
}

// ledger matches what a receiver got to the episodes that happened.
type ledger struct {
	eps   map[int]episode
	owed  []episode // long enough that they must have fired
	got   map[key][]delivery
	stray []delivery // about no episode, or about another instance
}

// minEpisode is how long an episode must last to be owed a firing and a
// resolved notification: the rule's for (3s), a scrape and an evaluation
// (1s each), group_wait (1s), with a second to spare; the first
// notification arrives 4.5-5s into an episode.
const minEpisode = 7 * time.Second

func newLedger(eps []episode, ds []delivery) *ledger {
	l := &ledger{eps: map[int]episode{}, got: map[key][]delivery{}}
	for _, e := range eps {
		l.eps[e.id] = e
		if !e.end.IsZero() && e.end.Sub(e.start) >= minEpisode {
			l.owed = append(l.owed, e)
		}
	}
	for _, d := range ds {
		e, ok := l.eps[d.ep]
		if !ok || e.instance != d.instance {
			l.stray = append(l.stray, d)
			continue
		}
		k := key{d.ep, d.status}
		l.got[k] = append(l.got[k], d)
	}
	for k := range l.got {
		slices.SortFunc(l.got[k], func(a, b delivery) int { return a.at.Compare(b.at) })
	}
	return l
}

// first returns the first delivery of k.
func (l *ledger) first(k key) (delivery, bool) {
	if ds := l.got[k]; len(ds) > 0 {
		return ds[0], true
	}
	return delivery{}, false
}

// owedKeys returns the notifications owed: a firing and a resolved one
// for every owed episode.
func (l *ledger) owedKeys() []key {
	var out []key
	for _, e := range l.owed {
		out = append(out, key{e.id, "firing"}, key{e.id, "resolved"})
	}
	return out
}

// missing returns the owed notifications that never came.
func (l *ledger) missing() []key {
	var out []key
	for _, k := range l.owedKeys() {
		if len(l.got[k]) == 0 {
			out = append(out, k)
		}
	}
	return out
}

// duplicates counts the deliveries beyond the first of each notification.
func (l *ledger) duplicates() int {
	n := 0
	for _, ds := range l.got {
		n += len(ds) - 1
	}
	return n
}

// logMissing logs what was missing, with the episode's times, for the
// failure message.
func (l *ledger) logMissing(logf func(string, ...any), what string) {
	for _, k := range l.missing() {
		e := l.eps[k.ep]
		logf("%s: no %s notification for episode %d (%s, %s to %s)", what, k.status, k.ep, e.instance,
			e.start.Format("15:04:05.0"), e.end.Format("15:04:05.0"))
	}
}

// logDuplicates logs every delivery beyond the first, with the first.
func (l *ledger) logDuplicates(logf func(string, ...any), what string) {
	for k, ds := range l.got {
		for _, d := range ds[1:] {
			logf("%s: %s again at %s (first at %s)", what, k, d.at.Format("15:04:05.000"), ds[0].at.Format("15:04:05.000"))
		}
	}
}

// ---- faults over time ----

// faultStep is one fault held for a while, then a healthy gap.
type faultStep struct {
	f        fault
	for_     time.Duration
	gapAfter time.Duration
}

// window is a time during which a receiver had a fault.
type window struct {
	f        fault
	from, to time.Time
}

// runFaults applies the steps in turn and returns when they have been held
// and the last gap has passed.
func runFaults(h *faulty, steps []faultStep) []window {
	var ws []window
	for _, st := range steps {
		w := window{f: st.f, from: time.Now()}
		h.set(st.f)
		time.Sleep(st.for_)
		h.set(faultNone)
		w.to = time.Now()
		ws = append(ws, w)
		time.Sleep(st.gapAfter)
	}
	return ws
}

// inFlight is how far before a fault a notification may have been sent
// and still have met it: the two integrations of a receiver are sent to
// at the same moment, not at the same instant.
const inFlight = 500 * time.Millisecond

// addedDelay is the delay a fault added to a notification that reached
// the faulty receiver at at, and its twin (the same notification at the
// healthy integration of the same receiver) at ref: from the later of ref
// and the end of the last fault it met, to at. ok is false when the
// notification met no fault (it was due and sent outside every window).
func addedDelay(ref, at time.Time, ws []window) (d time.Duration, met window, ok bool) {
	for _, w := range ws {
		if !w.from.After(at) && w.to.After(ref.Add(-inFlight)) && (!ok || w.to.After(met.to)) {
			met, ok = w, true
		}
	}
	if !ok {
		return at.Sub(ref), window{}, false
	}
	from := ref
	if met.to.After(from) {
		from = met.to
	}
	return max(at.Sub(from), 0), met, true
}

// ---- numbers ----

// durStats formats the median and the maximum of ds.
func durStats(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("median %v, max %v (n=%d)", med.Round(10*time.Millisecond), s[len(s)-1].Round(10*time.Millisecond), len(s))
}
