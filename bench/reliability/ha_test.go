//go:build reliability

package reliability

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// haTimes are the phases of the HA scenarios: how long the pair runs
// before a kill, and after it.
func haTimes() (before, after time.Duration, rounds int) {
	return pick(15*time.Second, 45*time.Second), pick(25*time.Second, 60*time.Second), pick(1, 4)
}

// The HA scenarios' timers, paged's and Alertmanager's alike. The second
// peer checks the notification log peerTimeout after each flush, with the
// alerts as they were at the flush; a group_interval shorter than that
// would have the first peer send a change in between, and the second
// resend the state it holds (a duplicate that real configurations, with
// group_interval 5m and peer_timeout 15s, do not see). Gossip every
// 100ms delivers an entry well within the second. Each peer evaluates the
// rules itself, at the same instants but each at its own pace: on a
// loaded two-core CI machine one peer's evaluation, and so its flush, ran
// a second behind the other's, and with a peer_timeout of 1s both sent
// the same new group within 5 ms. Two seconds covers that skew.
const (
	haGroupInterval = 5 * time.Second
	haPeerTimeout   = 2 * time.Second
)

// clusterBlock is paged's cluster block for one member of a pair.
func clusterBlock(listen, peer string) string {
	return fmt.Sprintf(`cluster:
  listen_address: %s
  peers: [%q]
  peer_timeout: %v
  gossip_interval: 100ms
  pushpull_interval: 1s
`, listen, peer, haPeerTimeout)
}

// haNotifierConfig is notifierConfig with the HA group_interval.
func haNotifierConfig(s *slack, h *hook) string {
	return strings.Replace(notifierConfig(s, h), "group_interval: 1s", fmt.Sprintf("group_interval: %v", haGroupInterval), 1)
}

// position reads alertmanager_peer_position from a /metrics page: 0 sends
// first. ok is false when the page cannot be read.
func position(base string) (int, bool) {
	p, err := readPage(base)
	if err != nil || !p.has("alertmanager_peer_position") {
		return 0, false
	}
	return int(p.sum("alertmanager_peer_position")), true
}

// TestHAKill runs two `paged run` processes as an HA pair (docs/ha.md)
// against one Prometheus, with the same Slack (bot token) and webhook,
// while episodes fire and resolve. The peer that sends is killed with
// SIGKILL while groups it posted to Slack are still firing; the survivor
// must deliver everything and edit those messages when the groups
// resolve. In the long form the killed peer comes back and the one
// sending then is killed, four times.
func TestHAKill(t *testing.T) {
	t.Parallel()
	const scenario = "HA pair, sender killed -9"
	x := newExporter(t)
	prom := startPrometheus(t, prometheusConfig(x, ""))
	s, h := newSlack(t), newHook(t)
	gossip := []string{testbin.FreeAddr(t), testbin.FreeAddr(t)}
	var peers []*paged
	for i := range 2 {
		p := newPaged(t, pagedConfig(t, prom.URL(), haNotifierConfig(s, h), clusterBlock(gossip[i], gossip[1-i])))
		peers = append(peers, p)
	}
	for _, p := range peers {
		p.waitReady(30 * time.Second)
	}
	pairUp := func() bool {
		return peers[0].metric("alertmanager_cluster_members") == 2 && peers[1].metric("alertmanager_cluster_members") == 2
	}
	if !waitFor(t, 30*time.Second, "the pair to see each other", pairUp) {
		return
	}
	sch := newScheduler(x, 6, 12*time.Second, 12*time.Second)
	sch.start(t, prom)

	before, after, rounds := haTimes()
	var kills []time.Time
	for r := range rounds {
		time.Sleep(before)
		sender := -1
		waitFor(t, 10*time.Second, "one peer at position 0", func() bool {
			for i, p := range peers {
				if pos, ok := position(p.url()); ok && pos == 0 {
					sender = i
					return true
				}
			}
			return false
		})
		if sender < 0 {
			break
		}
		// Mid-stream: a group the sender posted to Slack is still firing.
		waitFor(t, 20*time.Second, "a posted group still firing", func() bool {
			return postedOpen(s, sch) > 0
		})
		peers[sender].kill()
		kills = append(kills, time.Now())
		t.Logf("round %d: killed peer %d at %s with %d posted groups firing", r, sender, kills[len(kills)-1].Format("15:04:05.000"), postedOpen(s, sch))
		time.Sleep(after)
		if r < rounds-1 {
			peers[sender].start()
			t.Logf("peer %d started again at %s", sender, time.Now().Format("15:04:05.000"))
			peers[sender].waitReady(30 * time.Second)
			waitFor(t, 30*time.Second, "the pair to see each other again", pairUp)
		}
	}
	sch.finish()
	eps := sch.all()
	waitFor(t, time.Minute, "every notification delivered", func() bool {
		return len(newLedger(eps, h.deliveries()).missing()) == 0 && len(newLedger(eps, s.deliveries()).missing()) == 0
	})
	time.Sleep(3 * time.Second)

	hl, sl := newLedger(eps, h.deliveries()), newLedger(eps, s.deliveries())
	hl.logMissing(t.Logf, "webhook")
	sl.logMissing(t.Logf, "Slack")
	hl.logDuplicates(t.Logf, "webhook")
	sl.logDuplicates(t.Logf, "Slack")
	lost := len(hl.missing()) + len(sl.missing())
	// Groups that straddle a kill: posted before it, resolved after it.
	straddle := func(e episode) bool {
		d, ok := sl.first(key{e.id, "firing"})
		for _, k := range kills {
			if ok && d.at.Before(k) && e.end.After(k) {
				return true
			}
		}
		return false
	}
	edited, posted := s.editedOriginal(sl, straddle)
	dupSlack := 0
	for _, e := range sl.owed {
		dupSlack += max(len(sl.got[key{e.id, "firing"}])-1, 0)
	}
	report(t, scenario, "paged", "kills (SIGKILL of the sending peer)", len(kills), "")
	report(t, scenario, "paged", "notifications owed (webhook and Slack, firing and resolved)", len(hl.owedKeys())+len(sl.owedKeys()), "")
	report(t, scenario, "paged", "lost", lost, "0", lost == 0 && len(kills) == rounds)
	report(t, scenario, "paged", "duplicate webhook notifications", hl.duplicates(), "reported")
	report(t, scenario, "paged", "duplicate Slack messages or edits", sl.duplicates(), "reported")
	report(t, scenario, "paged", "groups posted before a kill, resolved after it: original message edited", fmt.Sprintf("%d/%d", edited, posted), "all", edited == posted && posted > 0)
	if dupSlack > 0 {
		t.Logf("%d groups got a second top-level Slack message", dupSlack)
	}
	if n := len(hl.stray) + len(sl.stray); n > 0 {
		report(t, scenario, "paged", "notifications about no episode", n, "0", false)
	}
	if t.Failed() {
		for i, p := range peers {
			t.Logf("peer %d output (last 3000 bytes):\n%s", i, tail(p.out.String(), 3000))
		}
	}
}

// postedOpen counts the open episodes that have a Slack message.
func postedOpen(s *slack, sch *scheduler) int {
	posted := map[int]bool{}
	for _, d := range s.deliveries() {
		if d.status == "firing" {
			posted[d.ep] = true
		}
	}
	n := 0
	for _, e := range sch.all() {
		if e.end.IsZero() && posted[e.id] {
			n++
		}
	}
	return n
}
