//go:build reliability

package reliability

import (
	"fmt"
	"testing"
	"time"
)

// TestDeliveryFaults keeps alerts firing and resolving while one
// integration of paged's receiver fails, the other staying healthy: the
// Slack stand-in answers 429 with Retry-After, then 500, then nothing
// (timeouts), each for a while with a healthy gap after it; separately the
// webhook receiver is down (connections closed unanswered). Every
// notification must arrive in the end. The healthy integration of the
// same receiver gets each notification when it would have arrived without
// the fault, which is what the added delay is measured from.
func TestDeliveryFaults(t *testing.T) {
	t.Parallel()
	t.Run("slack", func(t *testing.T) {
		t.Parallel()
		d := pick(15*time.Second, time.Minute)
		gap := pick(10*time.Second, 20*time.Second)
		run := startDeliveryRun(t, d, "")
		ws := runFaults(run.s.faults, []faultStep{{faultRateLimit, d, gap}, {faultServer, d, gap}, {faultTimeout, d, gap}})
		run.finish(t)
		run.report(t, "delivery: Slack 429, 500, timeout", "paged", run.s.deliveries(), run.h.deliveries(), ws, run.s.faults)
	})
	t.Run("webhook", func(t *testing.T) {
		t.Parallel()
		d := pick(20*time.Second, time.Minute)
		run := startDeliveryRun(t, d, "")
		ws := runFaults(run.h.faults, []faultStep{{faultDown, d, pick(10*time.Second, 20*time.Second)}})
		run.finish(t)
		run.report(t, "delivery: webhook down", "paged", run.h.deliveries(), run.s.deliveries(), ws, run.h.faults)
	})
	t.Run("email", func(t *testing.T) {
		t.Parallel()
		d := pick(15*time.Second, time.Minute)
		gap := pick(10*time.Second, 20*time.Second)
		m := newMail(t)
		run := startDeliveryRun(t, d, m.config())
		ws := m.runFaults([]faultStep{{faultSMTP421, d, gap}, {faultSMTP451, d, gap}})
		run.finishWith(t, m.deliveries)
		f := &faulty{}
		f.refused.Store(int64(m.Attempts() - len(m.Mails())))
		run.report(t, "delivery: SMTP 421, 451", "paged", m.deliveries(), run.h.deliveries(), ws, f)
	})
	t.Run("pagerduty", func(t *testing.T) {
		t.Parallel()
		d := pick(15*time.Second, time.Minute)
		gap := pick(10*time.Second, 20*time.Second)
		pd := newPagerDuty(t)
		run := startDeliveryRun(t, d, pd.config())
		ws := runFaults(pd.faults, []faultStep{{faultRateLimit, d, gap}, {faultServer, d, gap}, {faultDown, d, gap}})
		run.finishWith(t, pd.deliveries)
		run.report(t, "delivery: PagerDuty 429, 500, down", "paged", pd.deliveries(), run.h.deliveries(), ws, pd.faults)
		// A group (an instance) has an episode after another on one
		// dedup key: its events alternate trigger and resolve, with no
		// trigger sent twice, and end resolved.
		inc := pd.Incidents()
		if len(inc) == 0 {
			t.Errorf("no PagerDuty incident")
		}
		for _, i := range inc {
			alternate := len(i.Events)%2 == 0
			for j, ev := range i.Events {
				alternate = alternate && ev == [2]string{"trigger", "resolve"}[j%2]
			}
			if !alternate || !i.Resolved || i.Opened != len(i.Events)/2 {
				t.Errorf("PagerDuty incident %s opened %d times, resolved %v: %v", i.DedupKey, i.Opened, i.Resolved, i.Events)
			}
		}
	})
}

// deliveryRun is paged with Slack (bot token) and a webhook on one
// receiver, and episodes running.
type deliveryRun struct {
	s   *slack
	h   *hook
	sch *scheduler
	p   *paged
}

// episodeTimes returns the high and low phases for faults of length d:
// every episode fires for longer than a fault, so it owes a firing
// notification at a time the receiver is up, and the next episode of an
// instance starts only after a resolution held up by a fault has gone out
// (one of a group would otherwise turn into the other).
func episodeTimes(d time.Duration) (high, low time.Duration) {
	return d + 5*time.Second, d + 10*time.Second
}

// deliveryInstances is how many instances cycle: the long form's cycles
// are four times longer, and twice the instances keep the notifications
// that come due during a fault from being a handful.
func deliveryInstances() int { return pick(6, 12) }

// startDeliveryRun starts paged with Slack and a webhook on one receiver,
// and the integrations of extra (indented as in the receiver) beside them.
func startDeliveryRun(t *testing.T, d time.Duration, extra string) *deliveryRun {
	x := newExporter(t)
	prom := startPrometheus(t, prometheusConfig(x, ""))
	s, h := newSlack(t), newHook(t)
	p := newPaged(t, pagedConfig(t, prom.URL(), notifierConfig(s, h)+extra, ""))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("paged's output (last 6000 bytes):\n%s", tail(p.out.String(), 6000))
			if as, ok := p.alerts(); ok {
				t.Logf("paged's alerts at the end: %+v", as)
			}
		}
	})
	p.waitReady(30 * time.Second)
	high, low := episodeTimes(d)
	sch := newScheduler(x, deliveryInstances(), high, low)
	sch.start(t, prom)
	// The first episode notified, healthy: the faults start mid-stream.
	waitFor(t, 30*time.Second, "a first notification", func() bool { return len(h.deliveries()) > 0 })
	return &deliveryRun{s: s, h: h, sch: sch, p: p}
}

// finish lets the episodes that began during the faults end at a healthy
// time, ends the rest, and waits until every owed notification has
// reached both integrations (a bail-out after a minute, which the figures
// then show as missing).
func (r *deliveryRun) finish(t *testing.T) { r.finishWith(t) }

// finishWith is finish waiting for the deliveries of other integrations
// as well.
func (r *deliveryRun) finishWith(t *testing.T, others ...func() []delivery) {
	time.Sleep(r.sch.high)
	r.sch.finish()
	eps := r.sch.all()
	waitFor(t, time.Minute, "every notification at every integration", func() bool {
		for _, ds := range append([]func() []delivery{r.s.deliveries, r.h.deliveries}, others...) {
			if len(newLedger(eps, ds()).missing()) > 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second) // room for duplicates to show up
}

// report computes the figures of the faulty integration (got) against the
// healthy one (ref).
func (r *deliveryRun) report(t *testing.T, scenario, system string, got, ref []delivery, ws []window, f *faulty) {
	t.Helper()
	reportDelivery(t, scenario, system, r.sch.all(), got, ref, ws, f, true)
}

// reportDelivery reports what reached a faulty integration: owed,
// delivered, duplicates, and the delay the faults added, by fault. With
// must, everything owed must have been delivered.
func reportDelivery(t *testing.T, scenario, system string, eps []episode, got, ref []delivery, ws []window, f *faulty, must bool) {
	t.Helper()
	gl, rl := newLedger(eps, got), newLedger(eps, ref)
	gl.logMissing(t.Logf, scenario)
	owed := gl.owedKeys()
	delivered := len(owed) - len(gl.missing())
	byFault := map[fault][]time.Duration{}
	var outside []time.Duration
	for _, k := range owed {
		g, ok1 := gl.first(k)
		r, ok2 := rl.first(k)
		if !ok1 || !ok2 {
			continue
		}
		if d, w, met := addedDelay(r.at, g.at, ws); met {
			byFault[w.f] = append(byFault[w.f], d)
		} else {
			outside = append(outside, d)
		}
	}
	var faults string
	for i, w := range ws {
		if i > 0 {
			faults += ", "
		}
		faults += fmt.Sprintf("%s %v", w.f, w.to.Sub(w.from).Round(time.Second))
	}
	report(t, scenario, system, "faults", faults, "")
	report(t, scenario, system, "requests refused or left unanswered", f.refused.Load(), "")
	report(t, scenario, system, "notifications owed (firing and resolved)", len(owed), "")
	if must {
		report(t, scenario, system, "delivered in the end", fmt.Sprintf("%d/%d", delivered, len(owed)), "all", delivered == len(owed) && len(owed) > 0)
		report(t, scenario, system, "duplicates", gl.duplicates(), "reported")
	} else {
		report(t, scenario, system, "delivered in the end", fmt.Sprintf("%d/%d", delivered, len(owed)), "")
		report(t, scenario, system, "duplicates", gl.duplicates(), "")
	}
	seen := map[fault]bool{}
	for _, w := range ws {
		if seen[w.f] {
			continue
		}
		seen[w.f] = true
		report(t, scenario, system, fmt.Sprintf("added delay, due during %s", w.f), durStats(byFault[w.f]), "")
	}
	report(t, scenario, system, "lag behind the healthy integration, outside faults", durStats(outside), "")
	switch n := len(gl.stray); {
	case n > 0 && must:
		report(t, scenario, system, "notifications about no episode", n, "0", false)
	case n > 0:
		report(t, scenario, system, "notifications about no episode", n, "")
	}
}
