//go:build reliability

package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// The same scenarios, where they apply, against Debian's Prometheus 2.42
// and Alertmanager 0.25, and against vmalert (Debian's victoria-metrics)
// with the same Alertmanager, in the same run. These are measurements:
// nothing is required of the peers, but each must run (a missing binary
// fails under CI, as testbin.Require does).

// promAMStack is Prometheus evaluating queueRule every second against the
// exporter and sending to Alertmanagers.
func promAMStack(t *testing.T, x *exporter, amAddrs []string, flags ...string) *prometheus {
	t.Helper()
	rules := writeFile(t, "load.rules.yaml", queueRule)
	return startPrometheus(t, prometheusConfig(x, alerting(rules, amAddrs...)), flags...)
}

// TestPeerKill9Alertmanager kills Alertmanager with SIGKILL while
// Prometheus sends it alerts that fire and resolve, on paged's kill
// schedule, and starts it again on the same storage. Alertmanager writes
// its notification log only every 15 minutes and at shutdown: after a
// kill it has forgotten what it sent. Prometheus re-sends firing alerts
// every --rules.alert.resend-delay; the repeated kills use 2s so that the
// figures are about Alertmanager's state, a single kill with Prometheus's
// default (1m) shows what a restart costs as installed.
func TestPeerKill9Alertmanager(t *testing.T) {
	t.Parallel()
	const scenario = "kill -9 while alerting"
	t.Run("resend 2s", func(t *testing.T) {
		t.Parallel()
		rounds := pick(8, 20)
		peerKill9(t, scenario, "2s", rounds, func(rng *rand.Rand) time.Duration {
			return time.Duration(1000+rng.IntN(3000)) * time.Millisecond
		})
	})
	t.Run("resend 1m", func(t *testing.T) {
		t.Parallel()
		peerKill9(t, scenario+" (Prometheus's default resend-delay 1m)", "1m", 1, func(*rand.Rand) time.Duration { return 10 * time.Second })
	})
}

func peerKill9(t *testing.T, scenario, resend string, rounds int, wait func(*rand.Rand) time.Duration) {
	sys := promAM(t)
	x := newExporter(t)
	h := newHook(t)
	am := newAlertmanager(t, amConfig(h.URL()), "")
	am.start()
	prom := promAMStack(t, x, []string{am.addr}, "--rules.alert.resend-delay="+resend)
	sch := newScheduler(x, 4, 9*time.Second, 6*time.Second)
	sch.start(t, prom)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	time.Sleep(8 * time.Second)
	var restarts []time.Time
	firingAtKill := 0
	for range rounds {
		time.Sleep(wait(rng))
		firingAtKill += sch.openCount()
		am.kill()
		am.start()
		restarts = append(restarts, time.Now())
		time.Sleep(1500 * time.Millisecond)
	}
	// Keep the episodes going for a resend-delay and more after the last
	// restart, so that Prometheus has re-sent what fires.
	d, _ := time.ParseDuration(resend)
	time.Sleep(d + 10*time.Second)
	sch.finish()
	time.Sleep(10 * time.Second)
	l := newLedger(sch.all(), h.deliveries())
	l.logMissing(t.Logf, sys)
	var lostF, lostR int
	for _, k := range l.missing() {
		if k.status == "firing" {
			lostF++
		} else {
			lostR++
		}
	}
	dupRestarts := 0
	for i, r := range restarts {
		next := time.Now()
		if i+1 < len(restarts) {
			next = restarts[i+1]
		}
		for _, ds := range l.got {
			if dupIn(ds, r, next) {
				dupRestarts++
				break
			}
		}
	}
	report(t, scenario, sys, "kills (SIGKILL of Alertmanager)", fmt.Sprintf("%d (Prometheus resend-delay %s)", rounds, resend), "")
	report(t, scenario, sys, "episodes that had to notify", len(l.owed), "")
	report(t, scenario, sys, "notifications lost (firing / resolved)", fmt.Sprintf("%d (%d / %d)", lostF+lostR, lostF, lostR), "")
	report(t, scenario, sys, "duplicate notifications", l.duplicates(), "")
	report(t, scenario, sys, "restarts followed by a duplicate", fmt.Sprintf("%d/%d", dupRestarts, len(restarts)), "")
}

// dupIn reports whether a delivery beyond the first of ds arrived in
// [from, to).
func dupIn(ds []delivery, from, to time.Time) bool {
	for _, d := range ds[1:] {
		if !d.at.Before(from) && d.at.Before(to) {
			return true
		}
	}
	return false
}

// TestPeerDatasourceOutage takes the datasource away for paged's outage
// (outageTimes): vmalert queries a Prometheus that is stopped; Prometheus
// evaluating its own rules is killed. Both send to Alertmanager, which
// resolves an alert when its endsAt passes without a refresh.
func TestPeerDatasourceOutage(t *testing.T) {
	t.Parallel()
	const scenario = "datasource down"
	outage, promFlags := outageTimes()
	t.Run("vmalert", func(t *testing.T) {
		t.Parallel()
		sys := vmAM(t)
		x := newExporter(t)
		x.set(`load{pod="steady"}`, 10)
		prom := startPrometheus(t, prometheusConfig(x, ""), promFlags...)
		h := newHook(t)
		am := newAlertmanager(t, amConfig(h.URL()), "")
		am.start()
		vm := startVMAlert(t, writeFile(t, "load.rules.yaml", queueRule), prom.URL(), time.Second, []string{am.url()})
		if !waitFor(t, 30*time.Second, "LoadHigh firing", func() bool { return len(h.named("LoadHigh", "status=firing")) > 0 }) {
			return
		}
		stoppedAt := time.Now()
		prom.stop()
		time.Sleep(time.Until(stoppedAt.Add(outage)))
		errs, _ := testbin.MetricSum(vm.url(), "vmalert_execution_errors_total")
		prom.restart()
		backAt := time.Now()
		waitFor(t, 30*time.Second, "LoadHigh firing again", func() bool {
			return len(h.named("LoadHigh", "status=firing")) > 1 || len(h.named("LoadHigh", "status=resolved")) == 0
		})
		time.Sleep(12 * time.Second)
		reportOutage(t, scenario, sys, h, outage, stoppedAt, backAt)
		report(t, scenario, sys, "time to notice", fmt.Sprintf("no alert of its own (vmalert_execution_errors_total reached %.0f)", errs), "")
	})
	t.Run("prometheus", func(t *testing.T) {
		t.Parallel()
		sys := promAM(t)
		x := newExporter(t)
		x.set(`load{pod="steady"}`, 10)
		h := newHook(t)
		am := newAlertmanager(t, amConfig(h.URL()), "")
		am.start()
		flags := slices.Clone(promFlags)
		if !long {
			flags = append(flags, "--rules.alert.resend-delay=2s") // as paged's resend_delay in the short form
		}
		prom := promAMStack(t, x, []string{am.addr}, flags...)
		if !waitFor(t, 30*time.Second, "LoadHigh firing", func() bool { return len(h.named("LoadHigh", "status=firing")) > 0 }) {
			return
		}
		stoppedAt := time.Now()
		prom.kill()
		time.Sleep(time.Until(stoppedAt.Add(outage)))
		prom.restart()
		backAt := time.Now()
		waitFor(t, 60*time.Second, "LoadHigh firing again", func() bool {
			return len(h.named("LoadHigh", "status=firing")) > 1 || len(h.named("LoadHigh", "status=resolved")) == 0
		})
		time.Sleep(12 * time.Second)
		reportOutage(t, scenario+" (Prometheus killed)", sys, h, outage, stoppedAt, backAt)
		report(t, scenario+" (Prometheus killed)", sys, "time to notice", "no alert: nothing evaluates while Prometheus is down", "")
	})
}

// reportOutage reports what the webhook got about the steady alert.
func reportOutage(t *testing.T, scenario, sys string, h *hook, outage time.Duration, stoppedAt, backAt time.Time) {
	t.Helper()
	res := h.named("LoadHigh", "status=resolved")
	fir := h.named("LoadHigh", "status=firing")
	report(t, scenario, sys, "outage", outage, "")
	report(t, scenario, sys, "false resolves", len(res), "")
	report(t, scenario, sys, "new firing notifications after recovery", max(len(fir)-1, 0), "")
	if len(res) > 0 {
		report(t, scenario, sys, "time to the false resolve", res[0].At.Sub(stoppedAt).Round(100*time.Millisecond), "")
	}
	for _, a := range fir[1:] {
		report(t, scenario, sys, "firing again, after the datasource returned", a.At.Sub(backAt).Round(100*time.Millisecond), "")
		break
	}
}

// TestPeerDeliveryFaults has Alertmanager retry a webhook that is down for
// paged's time, a second webhook on the same receiver staying up, while
// Prometheus's alerts fire and resolve.
func TestPeerDeliveryFaults(t *testing.T) {
	t.Parallel()
	sys := promAM(t)
	d := pick(20*time.Second, time.Minute)
	x := newExporter(t)
	down, up := newHook(t), newHook(t)
	am := newAlertmanager(t, amConfig(down.URL(), up.URL()), "")
	am.start()
	prom := promAMStack(t, x, []string{am.addr})
	high, low := episodeTimes(d)
	sch := newScheduler(x, deliveryInstances(), high, low)
	sch.start(t, prom)
	waitFor(t, 30*time.Second, "a first notification", func() bool { return len(up.deliveries()) > 0 })
	ws := runFaults(down.faults, []faultStep{{faultDown, d, pick(10*time.Second, 20*time.Second)}})
	time.Sleep(high)
	sch.finish()
	eps := sch.all()
	waitFor(t, time.Minute, "every notification at both webhooks", func() bool {
		return len(newLedger(eps, down.deliveries()).missing()) == 0 && len(newLedger(eps, up.deliveries()).missing()) == 0
	})
	time.Sleep(3 * time.Second)
	reportDelivery(t, "delivery: webhook down", sys, eps, down.deliveries(), up.deliveries(), ws, down.faults, false)
}

// TestPeerHAKill runs two Alertmanagers as a cluster (the timers of
// paged's HA scenario), Prometheus sending to both, and kills the one
// that sends with SIGKILL mid-stream.
func TestPeerHAKill(t *testing.T) {
	t.Parallel()
	const scenario = "HA pair, sender killed -9"
	sys := promAM(t)
	x := newExporter(t)
	h := newHook(t)
	gossip := []string{testbin.FreeAddr(t), testbin.FreeAddr(t)}
	cfg := strings.Replace(amConfig(h.URL()), "group_interval: 1s", fmt.Sprintf("group_interval: %v", haGroupInterval), 1)
	var ams []*alertmanager
	for i := range 2 {
		ams = append(ams, newAlertmanager(t, cfg, gossip[i], gossip[1-i]))
	}
	for _, a := range ams {
		a.start()
	}
	pairUp := func() bool {
		return ams[0].metric("alertmanager_cluster_members") == 2 && ams[1].metric("alertmanager_cluster_members") == 2
	}
	if !waitFor(t, 30*time.Second, "the pair to see each other", pairUp) {
		return
	}
	prom := promAMStack(t, x, []string{ams[0].addr, ams[1].addr})
	sch := newScheduler(x, 6, 12*time.Second, 12*time.Second)
	sch.start(t, prom)
	before, after, rounds := haTimes()
	var kills []time.Time
	for range rounds {
		time.Sleep(before)
		sender := -1
		waitFor(t, 10*time.Second, "one peer at position 0", func() bool {
			for i, a := range ams {
				if pos, ok := position(a.url()); ok && pos == 0 {
					sender = i
					return true
				}
			}
			return false
		})
		if sender < 0 {
			break
		}
		ams[sender].kill()
		kills = append(kills, time.Now())
		t.Logf("killed peer %d at %s", sender, kills[len(kills)-1].Format("15:04:05.000"))
		time.Sleep(after)
		if len(kills) < rounds {
			ams[sender].start()
			t.Logf("peer %d started again at %s", sender, time.Now().Format("15:04:05.000"))
			waitFor(t, 30*time.Second, "the pair to see each other again", pairUp)
		}
	}
	sch.finish()
	eps := sch.all()
	waitFor(t, time.Minute, "every notification delivered", func() bool { return len(newLedger(eps, h.deliveries()).missing()) == 0 })
	time.Sleep(3 * time.Second)
	l := newLedger(eps, h.deliveries())
	l.logMissing(t.Logf, sys)
	l.logDuplicates(t.Logf, sys)
	report(t, scenario, sys, "kills (SIGKILL of the sending peer)", len(kills), "")
	report(t, scenario, sys, "notifications owed (webhook, firing and resolved)", len(l.owedKeys()), "")
	report(t, scenario, sys, "lost", len(l.missing()), "")
	report(t, scenario, sys, "duplicate webhook notifications", l.duplicates(), "")
	report(t, scenario, sys, "edits of the original Slack message", "not applicable: Alertmanager 0.25's Slack integration posts a new message (no bot-token edits)", "")
}

// TestPeerCorruptState writes an alert notification and a silence to
// Alertmanager's state, shuts it down cleanly (it writes its snapshots),
// damages one file and starts it again.
func TestPeerCorruptState(t *testing.T) {
	t.Parallel()
	const scenario = "corrupt state file"
	for _, file := range []string{"nflog", "silences"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			sys := promAM(t)
			h := newHook(t)
			am := newAlertmanager(t, amConfig(h.URL()), "")
			am.start()
			now := time.Now().UTC()
			alert := fmt.Sprintf(`[{"labels":{"alertname":"Before","pod":"x"},"annotations":{"summary":"before"},"startsAt":%q}]`, now.Format(time.RFC3339))
			if code, err := httpPost(am.url()+"/api/v2/alerts", alert); err != nil || code != http.StatusOK {
				t.Fatalf("post alert: %d %v", code, err)
			}
			silence := fmt.Sprintf(`{"matchers":[{"name":"alertname","value":"Nothing","isRegex":false}],"startsAt":%q,"endsAt":%q,"createdBy":"reliability","comment":"x"}`,
				now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
			if code, err := httpPost(am.url()+"/api/v2/silences", silence); err != nil || code != http.StatusOK {
				t.Fatalf("post silence: %d %v", code, err)
			}
			if !waitFor(t, 30*time.Second, "a notification", func() bool { return len(h.named("Before")) > 0 }) {
				return
			}
			am.stop()
			path := filepath.Join(am.dataDir(), file)
			if st, err := os.Stat(path); err != nil || st.Size() == 0 {
				report(t, scenario, sys, file, "no snapshot written at shutdown", "")
				return
			}
			damage(t, path, false)
			out, err := am.launch(15 * time.Second)
			outcome := "starts"
			if err != nil {
				outcome = "does not start: " + firstError(out)
				select {
				case <-am.p.Exited():
					outcome = "exits at start: " + firstError(out)
				default:
				}
			} else if sil := silencesOf(am.url()); file == "silences" {
				outcome = fmt.Sprintf("starts, %d silences", sil)
			}
			report(t, scenario, sys, file, outcome, "")
		})
	}
}

var errLineRE = regexp.MustCompile(`(?m)^.*level=error.*$`)

// firstError returns the first error line a process printed, without its
// timestamp (or its last line).
func firstError(out string) string {
	if m := errLineRE.FindString(out); m != "" {
		return strings.TrimSpace(regexp.MustCompile(`ts=\S+ ?`).ReplaceAllString(m, ""))
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// silencesOf counts the silences Alertmanager serves (-1 when it cannot
// say).
func silencesOf(base string) int {
	resp, err := http.Get(base + "/api/v2/silences")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var s []json.RawMessage
	if json.NewDecoder(resp.Body).Decode(&s) != nil {
		return -1
	}
	return len(s)
}

// TestPeerLoad holds paged's load in Prometheus evaluating the 2,000
// rules itself, and in vmalert querying a Prometheus for them, both
// sending to Alertmanager; their /metrics are sampled as paged's.
func TestPeerLoad(t *testing.T) {
	parallelLoad(t)
	const scenario = "load: 2,000 rules, 10,000 alerts"
	amLoad := `route:
  receiver: hook
  group_by: [alertname]
  group_wait: 5s
  group_interval: 1m
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: %s
`
	hold, every := loadDuration()
	t.Run("prometheus", func(t *testing.T) {
		parallelLoad(t)
		sys := promAM(t)
		x := newLoadExporter(t)
		h := newHook(t)
		am := newAlertmanager(t, fmt.Sprintf(amLoad, h.URL()), "")
		am.start()
		started := time.Now()
		prom := startPrometheus(t, prometheusConfigEvery(x, loadInterval, alerting(loadRuleFile(t), am.addr)))
		if !peerReachesLoad(t, scenario, sys, am) {
			return
		}
		firingAfter := time.Since(started)
		sp, sa := startSampler(prom.URL(), prom.p.Pid(), every), startSampler(am.url(), am.p.Pid(), every)
		time.Sleep(hold)
		rp, ra := sp.stop(), sa.stop()
		report(t, scenario, sys, "held for", hold, "")
		report(t, scenario, sys, "time from start to 10,000 alerts active", firingAfter.Round(100*time.Millisecond), "")
		reportFlat(t, scenario, sys+": Prometheus", rp, false)
		reportEval(t, scenario, sys+": Prometheus", rp, promEval, false)
		reportFlat(t, scenario, sys+": Alertmanager", ra, false)
	})
	t.Run("vmalert", func(t *testing.T) {
		parallelLoad(t)
		loadApart(t)
		sys := vmAM(t)
		x := newLoadExporter(t)
		h := newHook(t)
		am := newAlertmanager(t, fmt.Sprintf(amLoad, h.URL()), "")
		am.start()
		prom := startPrometheus(t, prometheusConfigEvery(x, loadInterval, ""))
		started := time.Now()
		vm := startVMAlert(t, loadRuleFile(t), prom.URL(), loadInterval, []string{am.url()})
		if !peerReachesLoad(t, scenario, sys, am) {
			return
		}
		firingAfter := time.Since(started)
		sv, sa, sd := startSampler(vm.url(), vm.p.Pid(), every), startSampler(am.url(), am.p.Pid(), every), startSampler(prom.URL(), 0, every)
		time.Sleep(hold)
		rv, ra, rd := sv.stop(), sa.stop(), sd.stop()
		report(t, scenario, sys, "held for", hold, "")
		report(t, scenario, sys, "time from start to 10,000 alerts active", firingAfter.Round(100*time.Millisecond), "")
		reportFlat(t, scenario, sys+": vmalert", rv, false)
		reportEval(t, scenario, sys+": vmalert", rv, vmEval, false)
		reportUsage(t, scenario, sys+": its datasource (Prometheus)", rd)
		reportFlat(t, scenario, sys+": Alertmanager", ra, false)
	})
}

// peerReachesLoad waits up to two minutes for the load's 10,000 alerts to
// be active in a peer's Alertmanager. A peer that falls short (vmalert's
// 2,000-rule group takes longer than its interval on two loaded cores) is
// a figure of the peer, reported with how far it got, not a failure of
// the suite: only paged's own scenarios pass or fail on their results.
func peerReachesLoad(t *testing.T, scenario, sys string, am *alertmanager) bool {
	t.Helper()
	const d = 2 * time.Minute
	want := float64(loadRules * loadPerRule)
	var got float64
	if poll(d, func() bool { got = am.metric(`alertmanager_alerts{state="active"}`); return got >= want }) {
		return true
	}
	report(t, scenario, sys, "time from start to 10,000 alerts active", fmt.Sprintf("not reached in %v (%.0f active)", d, got), "")
	return false
}
