//go:build reliability

package reliability

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// queueRule is the rule the scenarios fire: one alert per instance.
const queueRule = `groups:
  - name: load
    rules:
      - alert: LoadHigh
        expr: load > 5
        for: 3s
        labels: {severity: critical}
        annotations:
          summary: 'load on {{ $labels.pod }} is {{ $value }}'
          runbook_url: 'vllm/QueueBacklog'
`

// pagedConfig is a remote-mode paged.yaml evaluating queueRule every
// second (WEB and DATA are filled in by newPaged).
func pagedConfig(t *testing.T, promURL, notifier, extra string) string {
	return pagedConfigRules(t, promURL, writeFile(t, "load.rules.yaml", queueRule), time.Second, notifier, extra)
}

// pagedConfigRules is a remote-mode paged.yaml evaluating a rule file at
// an interval.
func pagedConfigRules(t *testing.T, promURL, rules string, every time.Duration, notifier, extra string) string {
	return fmt.Sprintf(`global:
  evaluation_interval: %v
datasource:
  type: prometheus
  prometheus:
    url: %s
    timeout: 2s
rule_files: [%q]
storage:
  path: DATA
web:
  listen_address: WEB
%s%s`, every, promURL, rules, extra, notifier)
}

// TestKill9 kills paged with SIGKILL at random moments while alerts are
// pending, firing and resolving, against Debian's Prometheus, with Slack
// in bot-token mode and a webhook on the same route.
func TestKill9(t *testing.T) {
	t.Parallel()
	const scenario = "kill -9 while alerting"
	x := newExporter(t)
	prom := startPrometheus(t, prometheusConfig(x, ""))
	s, h := newSlack(t), newHook(t)
	p := newPaged(t, pagedConfig(t, prom.URL(), notifierConfig(s, h), ""))
	p.waitReady(30 * time.Second)
	sch := newScheduler(x, 4, 9*time.Second, 6*time.Second)
	sch.start(t, prom)

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	rounds := pick(8, 20)
	var kept, timers, whilePending, whileFiring int
	time.Sleep(8 * time.Second)
	for range rounds {
		time.Sleep(time.Duration(1000+rng.IntN(3000)) * time.Millisecond)
		before, _ := p.alerts()
		p.kill()
		t.Logf("kill at %s", time.Now().Format("15:04:05.000"))
		for _, a := range before {
			switch a.State {
			case "pending":
				whilePending++
			case "firing":
				whileFiring++
			}
		}
		p.start()
		p.waitReady(30 * time.Second)
		time.Sleep(1500 * time.Millisecond) // a catch-up and an evaluation
		after, _ := p.alerts()
		for _, b := range before {
			if b.State != "pending" || !sch.highSince(b.Labels["pod"], b.ActiveAt) {
				continue
			}
			timers++
			for _, a := range after {
				if a.Labels["pod"] == b.Labels["pod"] && a.ActiveAt.Equal(b.ActiveAt) {
					kept++
					break
				}
			}
		}
	}
	sch.finish()
	// Let every resolution go out.
	waitFor(t, 30*time.Second, "all alerts resolved", func() bool {
		as, ok := p.alerts()
		return ok && len(as) == 0
	})
	time.Sleep(5 * time.Second)

	eps := sch.all()
	hl, sl := newLedger(eps, h.deliveries()), newLedger(eps, s.deliveries())
	hl.logMissing(t.Logf, "webhook")
	lost := len(hl.missing())
	for _, e := range sl.owed {
		if _, ok := sl.first(key{e.id, "firing"}); !ok {
			lost++
			t.Logf("Slack: no message for episode %d (%s, %s to %s)", e.id, e.instance, e.start.Format("15:04:05.0"), e.end.Format("15:04:05.0"))
		}
	}
	dupSlack := 0
	for _, e := range sl.owed {
		dupSlack += max(len(sl.got[key{e.id, "firing"}])-1, 0)
	}
	edited, posted := s.editedOriginal(sl, nil)
	report(t, scenario, "paged", "kills (SIGKILL)", rounds, "")
	report(t, scenario, "paged", "kills with alerts pending / firing", fmt.Sprintf("%d / %d", whilePending, whileFiring), "")
	report(t, scenario, "paged", "episodes that had to notify", len(hl.owed), "")
	report(t, scenario, "paged", "notifications lost (webhook firing and resolved, Slack message)", lost, "0", lost == 0)
	report(t, scenario, "paged", "duplicate top-level Slack messages", dupSlack, "0", dupSlack == 0)
	report(t, scenario, "paged", "resolutions editing the original message", fmt.Sprintf("%d/%d", edited, posted), "all", edited == posted && posted > 0)
	report(t, scenario, "paged", "'for' timers kept across kills", fmt.Sprintf("%d/%d", kept, timers), "all", kept == timers)
	report(t, scenario, "paged", "duplicate webhook notifications", hl.duplicates(), "reported")
	if stray := len(hl.stray) + len(sl.stray); stray > 0 {
		report(t, scenario, "paged", "notifications about no episode", stray, "0", false)
	}
	if t.Failed() {
		t.Logf("paged's output, every start (last 4000 bytes):\n%s", tail(p.out.String(), 4000))
	}
}

// outageTimes returns how long the datasource is away, and the flags of
// the Prometheus that is away. The long form is five minutes against
// Prometheus's defaults: longer than its lookback delta (5m), so when it
// comes back the last sample before the outage is too old to be returned
// until the next scrape. The short form keeps both relations in 30s: the
// lookback is cut to 20s, and the resend delay (paged's resend_delay,
// Prometheus's --rules.alert.resend-delay) to 2s, so that a receiver would
// let unrefreshed alerts expire (after four resend delays) within it.
func outageTimes() (outage time.Duration, promFlags []string) {
	if long {
		return 5 * time.Minute, nil
	}
	return 30 * time.Second, []string{"--query.lookback-delta=20s"}
}

// TestDatasourceOutage stops the datasource for outageTimes while an alert
// fires: it must not resolve, before or after the datasource returns.
func TestDatasourceOutage(t *testing.T) {
	t.Parallel()
	const scenario = "datasource down"
	outage, flags := outageTimes()
	x := newExporter(t)
	x.set(`load{pod="steady"}`, 10)
	prom := startPrometheus(t, prometheusConfig(x, ""), flags...)
	s, h := newSlack(t), newHook(t)
	extra := ""
	if !long {
		extra = "  resend_delay: 2s\n"
	}
	cfg := pagedConfig(t, prom.URL(), notifierConfig(s, h), "")
	cfg = strings.Replace(cfg, "global:\n  evaluation_interval: 1s\n", "global:\n  evaluation_interval: 1s\n"+extra, 1)
	p := newPaged(t, cfg)
	p.waitReady(30 * time.Second)
	if !waitFor(t, 30*time.Second, "LoadHigh firing", func() bool { return len(h.named("LoadHigh", "status=firing")) > 0 }) {
		return
	}
	stoppedAt := time.Now()
	prom.stop()
	var downAt time.Time
	waitFor(t, 30*time.Second, "PagedDatasourceDown", func() bool {
		if a := h.named("PagedDatasourceDown", "status=firing"); len(a) > 0 {
			downAt = a[0].At
			return true
		}
		return false
	})
	time.Sleep(time.Until(stoppedAt.Add(outage)))
	prom.restart()
	backAt := time.Now()
	var upAt time.Time
	waitFor(t, 60*time.Second, "PagedDatasourceDown resolved", func() bool {
		if a := h.named("PagedDatasourceDown", "status=resolved"); len(a) > 0 {
			upAt = a[0].At
			return true
		}
		return false
	})
	time.Sleep(12 * time.Second) // a re-fire after a false resolve would take the rule's for and a group_wait
	falseResolves := len(h.named("LoadHigh", "status=resolved"))
	refires := len(h.named("LoadHigh", "status=firing")) - 1
	report(t, scenario, "paged", "outage", outage, "")
	report(t, scenario, "paged", "false resolves", falseResolves, "0", falseResolves == 0)
	report(t, scenario, "paged", "new firing notifications after recovery", refires, "0", refires == 0)
	if !downAt.IsZero() {
		report(t, scenario, "paged", "time to PagedDatasourceDown", downAt.Sub(stoppedAt).Round(100*time.Millisecond), "")
	}
	if !upAt.IsZero() {
		report(t, scenario, "paged", "recovery (datasource back to resolved)", upAt.Sub(backAt).Round(100*time.Millisecond), "")
	}
}

// stateFiles are the state files of paged's storage path, by what a
// scenario damages.
var stateFiles = []string{
	"nflog", "nflog.wal.*",
	"silences", "silences.wal.*",
	"slack-messages", "slack-messages.wal.*",
	"alert-state/state", "alert-state/state.wal.*",
	"history.db",
}

// TestCorruptState damages each state file in turn while paged is down
// (after a kill -9): paged starts, moves the file aside, fires
// PagedStateCorrupted and pages a new alert.
func TestCorruptState(t *testing.T) {
	t.Parallel()
	const scenario = "corrupt state file"
	x := newExporter(t)
	prom := startPrometheus(t, prometheusConfig(x, ""))
	for i, pattern := range stateFiles {
		t.Run(strings.ReplaceAll(pattern, "/", "_"), func(t *testing.T) {
			s, h := newSlack(t), newHook(t)
			p := newPaged(t, pagedConfig(t, prom.URL(), notifierConfig(s, h), ""))
			p.waitReady(30 * time.Second)
			before := fmt.Sprintf(`load{pod="before-%d"}`, i)
			x.set(before, 10)
			defer x.set(before, 0)
			if !waitFor(t, 30*time.Second, "a first notification", func() bool { return len(h.named("LoadHigh", "status=firing")) > 0 }) {
				return
			}
			// A silence, so that the silences file has content.
			body := `{"matchers":[{"name":"alertname","value":"Nothing","isRegex":false}],"startsAt":"` + time.Now().UTC().Format(time.RFC3339) +
				`","endsAt":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `","createdBy":"reliability","comment":"x"}`
			if resp, err := httpPost(p.url()+"/api/v2/silences", body); err != nil || resp != 200 {
				t.Fatalf("silence: %d %v", resp, err)
			}
			p.kill()
			matches, _ := filepath.Glob(filepath.Join(p.dataDir(), pattern))
			sort.Strings(matches)
			if len(matches) == 0 {
				report(t, scenario, "paged", pattern, "no such file", "exists", false)
				return
			}
			target := matches[len(matches)-1]
			damage(t, target, strings.Contains(pattern, ".wal."))
			start := time.Now()
			p.start()
			p.waitReady(30 * time.Second)
			readyIn := time.Since(start)
			moved, _ := filepath.Glob(target + ".corrupt.*")
			after := fmt.Sprintf(`load{pod="after-%d"}`, i)
			x.set(after, 10)
			defer x.set(after, 0)
			paged := waitFor(t, 30*time.Second, "a new alert paged", func() bool {
				return len(h.named("LoadHigh", "status=firing", fmt.Sprintf("pod=after-%d", i))) > 0
			})
			rel, _ := filepath.Rel(p.dataDir(), target)
			corrupted := waitFor(t, 30*time.Second, "PagedStateCorrupted", func() bool {
				return len(h.named("PagedStateCorrupted", "file="+filepath.ToSlash(rel))) > 0
			})
			ok := len(moved) == 1 && paged && corrupted
			report(t, scenario, "paged", rel, fmt.Sprintf("started in %v, moved aside %v, paged %v, PagedStateCorrupted %v",
				readyIn.Round(100*time.Millisecond), len(moved) == 1, paged, corrupted), "starts and pages", ok)
		})
	}
}

// damage overwrites the second half of a file with garbage (a file of a
// few bytes gets garbage appended; an SQLite file, its header). A log segment's last record cut short
// is a write that did not finish, which paged cuts off without a word: a
// segment is damaged where no write ends, in its first record's payload
// (past the 8-byte frame header), so that its checksum fails.
func damage(t *testing.T, path string, segment bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	garbage := []byte("\xde\xad\xbe\xef garbage \xff\x00\x01")
	switch {
	case strings.HasSuffix(path, ".db"):
		// SQLite reads the pages a kill left in its WAL from there, the
		// first page too: garbage in the file alone may never be read.
		// Its header and the WAL's first frame are damaged: SQLite
		// drops a WAL from the first frame whose checksum fails, and
		// then reads the header.
		copy(b, garbage)
		if w, err := os.ReadFile(path + "-wal"); err == nil && len(w) > 32+24+100 {
			w[32+24+100] ^= 0xff
			if err := os.WriteFile(path+"-wal", w, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	case len(b) < 16:
		b = append(b, garbage...)
	case segment:
		b[8] ^= 0xff
	default:
		b = append(b[:len(b)/2], garbage...)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
