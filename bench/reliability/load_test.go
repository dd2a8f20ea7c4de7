//go:build reliability

package reliability

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// The load: 2,000 alerting rules in groups of 100, each matching 5 of
// 10,000 series that are all above the threshold, so 10,000 alerts stay
// firing; evaluated every 5s.
const (
	loadRules     = 2000
	loadPerRule   = 5
	loadGroupSize = 100
	loadInterval  = 5 * time.Second
)

// loadDuration is how long the load is held once every alert fires; the
// readings of its first third are the warm-up.
func loadDuration() (hold, every time.Duration) {
	return pick(60*time.Second, 10*time.Minute), pick(3*time.Second, 5*time.Second)
}

// parallelLoad runs a load scenario in parallel with the others in the
// short form only. In the long form, whose figures docs/reliability.md
// holds, the load scenarios run one after the other and before every other
// scenario (Go runs the tests that are not parallel first), each with the
// machine to itself: on two cores, vmalert's 2,000 queries every 5s
// alone take most of one.
func parallelLoad(t *testing.T) {
	if !long {
		t.Parallel()
	}
}

// apartFromVMAlert keeps paged's load scenario, whose figures are
// asserted, and vmalert's, which issues 2,000 queries every 5s and takes
// most of a core, from running at the same time in the short form; the
// rest of the suite still runs beside either. With both on two cores,
// paged's datasource (a Prometheus of its own) took up to 3.4s per group
// evaluation, and in two runs a group skipped a slot.
var apartFromVMAlert sync.Mutex

func loadApart(t *testing.T) {
	if long {
		return // one after the other anyway
	}
	apartFromVMAlert.Lock()
	t.Cleanup(apartFromVMAlert.Unlock)
}

// loadRuleFile is the rule file of the load, for paged, Prometheus and
// vmalert alike.
func loadRuleFile(t *testing.T) string {
	var b strings.Builder
	b.WriteString("groups:\n")
	for r := range loadRules {
		if r%loadGroupSize == 0 {
			fmt.Fprintf(&b, "  - name: load-%02d\n    rules:\n", r/loadGroupSize)
		}
		fmt.Fprintf(&b, `      - alert: LoadRule%04d
        expr: lg{r="%04d"} > 0
        labels: {severity: warning}
        annotations: {summary: 'rule %04d on {{ $labels.i }}'}
`, r, r, r)
	}
	return writeFile(t, "load.rules.yaml", b.String())
}

// newLoadExporter serves the 10,000 series.
func newLoadExporter(t *testing.T) *exporter {
	x := newExporter(t)
	x.mu.Lock()
	for r := range loadRules {
		for i := range loadPerRule {
			x.v[fmt.Sprintf(`lg{r="%04d",i="%d"}`, r, i)] = 1
		}
	}
	x.mu.Unlock()
	return x
}

// loadHookConfig routes every alert to a webhook, a group per rule.
func loadHookConfig(url string) string {
	return fmt.Sprintf(`notifier:
  route:
    receiver: hook
    group_by: [alertname]
    group_wait: 5s
    group_interval: 1m
    repeat_interval: 1h
  receivers:
    - name: hook
      webhook_configs:
        - url: %s
          timeout: 10s
`, url)
}

// TestLoad holds 2,000 rules and 10,000 firing alerts in paged (remote
// mode, Debian's Prometheus as the datasource, a webhook receiver) and
// samples paged's /metrics. Flat means: after the first third (warm-up),
// the last third's mean resident memory is at most 15% above the middle
// third's, its mean goroutine count at most 10% above, and no group misses
// an iteration.
func TestLoad(t *testing.T) {
	parallelLoad(t)
	loadApart(t)
	const scenario = "load: 2,000 rules, 10,000 alerts"
	x := newLoadExporter(t)
	prom := startPrometheus(t, prometheusConfigEvery(x, loadInterval, ""))
	h := newHook(t)
	started := time.Now()
	cfg := pagedConfigRules(t, prom.URL(), loadRuleFile(t), loadInterval, loadHookConfig(h.URL()), "")
	cfg = strings.Replace(cfg, "timeout: 2s", "timeout: 10s", 1)
	p := newPaged(t, cfg)
	p.waitReady(60 * time.Second)
	if !waitFor(t, 2*time.Minute, "10,000 alerts firing in paged", func() bool {
		return p.metric(`paged_alerts{state="firing"}`) >= loadRules*loadPerRule
	}) {
		return
	}
	firingAfter := time.Since(started)
	hold, every := loadDuration()
	sm, sd := startSampler(p.url(), p.cmd.Process.Pid, every), startSampler(prom.URL(), 0, every)
	time.Sleep(hold)
	rs, rd := sm.stop(), sd.stop()

	const sys = "paged"
	report(t, scenario, sys, "held for", hold, "")
	report(t, scenario, sys, "time from start to 10,000 alerts firing", firingAfter.Round(100*time.Millisecond), "")
	reportFlat(t, scenario, sys, rs, true)
	reportEval(t, scenario, sys, rs, promEval, true)
	if n := rate(rs, `paged_datasource_queries_total`); !math.IsNaN(n) {
		report(t, scenario, sys, "datasource queries/s", fmt.Sprintf("%.1f", n), "")
	}
	reportUsage(t, scenario, sys+": its datasource (Prometheus)", rd)
	_, mid, last := thirds(rs)
	after := append(mid, last...)
	for _, m := range []struct{ name, what string }{
		{"paged_state_fsyncs_total", "state fsyncs/s"},
		{"paged_state_written_bytes_total", "state bytes written/s"},
	} {
		if len(after) == 0 || !after[0].p.has(m.name) {
			report(t, scenario, sys, m.what, "not served on /metrics by this build", "")
			continue
		}
		report(t, scenario, sys, m.what, fmt.Sprintf("%.2f", rate(after, m.name)), "")
	}
	report(t, scenario, sys, "webhook notifications (one per rule, then repeats)", h.postCount(), "")
	// Where the time of an evaluation that overran went (paged's warning).
	var overran []string
	for _, l := range strings.Split(p.out.String(), "\n") {
		if strings.Contains(l, "ran past its next slot") {
			overran = append(overran, l)
		}
	}
	report(t, scenario, sys, "evaluations that ran past their next slot (paged's warnings)", len(overran), "")
	for _, l := range overran[:min(len(overran), 10)] {
		t.Log(l)
	}
}

// reportFlat reports resident memory, goroutines and CPU over the
// readings; with must, flatness is asserted. The readings go to the log.
func reportFlat(t *testing.T, scenario, sys string, rs []reading, must bool) {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, " +%.0fs %s/%.0f", r.at.Sub(rs[0].at).Seconds(), mib(r.p.sum("process_resident_memory_bytes")), r.p.sum("go_goroutines"))
	}
	t.Logf("%s: RSS/goroutines:%s", sys, b.String())
	_, mid, last := thirds(rs)
	if len(mid) == 0 || len(last) == 0 {
		report(t, scenario, sys, "readings", len(rs), "enough to split in thirds", !must)
		return
	}
	rss := func(p page) float64 { return p.sum("process_resident_memory_bytes") }
	gor := func(p page) float64 { return p.sum("go_goroutines") }
	rm, rl := mean(mid, rss), mean(last, rss)
	gm, gl := mean(mid, gor), mean(last, gor)
	rssOK := rl <= rm*1.15
	// A fall is no leak: the idle connections of the first burst of
	// notifications close after five minutes (prometheus/common's
	// IdleConnTimeout), taking their goroutines with them.
	gorOK := gl <= gm*1.10
	rssMust, gorMust := "", ""
	var rssArgs, gorArgs []bool
	if must {
		rssMust, gorMust = "last ≤ middle +15%", "last ≤ middle +10%"
		rssArgs, gorArgs = []bool{rssOK}, []bool{gorOK}
	}
	report(t, scenario, sys, "RSS, mean of middle → last third (max)", fmt.Sprintf("%s → %s (%+.1f%%, max %s)", mib(rm), mib(rl), 100*(rl/rm-1), mib(maxOf(rs, rss))), rssMust, rssArgs...)
	report(t, scenario, sys, "goroutines, mean of middle → last third", fmt.Sprintf("%.0f → %.0f (%+.1f%%)", gm, gl, 100*(gl/gm-1)), gorMust, gorArgs...)
	reportUsage(t, scenario, sys, rs)
}

// reportUsage reports CPU and disk writes after warm-up.
func reportUsage(t *testing.T, scenario, sys string, rs []reading) {
	t.Helper()
	_, mid, last := thirds(rs)
	after := append(mid, last...)
	report(t, scenario, sys, "CPU after warm-up", fmt.Sprintf("%.2f cores", rate(after, "process_cpu_seconds_total")), "")
	if len(after) > 0 && after[0].p.has(procWriteBytes) {
		report(t, scenario, sys, "disk writes after warm-up (/proc/pid/io)", fmt.Sprintf("%.1f KiB/s", rate(after, procWriteBytes)/1024), "")
	}
}

// evalMetrics names the metrics a rule evaluator reports its evaluation
// with.
type evalMetrics struct {
	sum, count string // summary of group evaluation durations
	slowest    string // gauge per group: its last evaluation's duration ("": none)
	lastEval   string // gauge per group: when it last evaluated ("": none)
	missed     string // counter per group: iterations missed
}

// The evaluation metrics of Prometheus's rules manager (paged embeds it)
// and of vmalert.
var (
	promEval = evalMetrics{"prometheus_rule_group_duration_seconds_sum", "prometheus_rule_group_duration_seconds_count",
		"prometheus_rule_group_last_duration_seconds", "prometheus_rule_group_last_evaluation_timestamp_seconds", "prometheus_rule_group_iterations_missed_total"}
	vmEval = evalMetrics{"vmalert_iteration_duration_seconds_sum", "vmalert_iteration_duration_seconds_count", "", "", "vmalert_iteration_missed_total"}
)

// reportEval reports the evaluation after warm-up: the mean duration of a
// group's evaluation, the slowest group's, the longest a group went
// without an evaluation (the lag), and iterations missed.
func reportEval(t *testing.T, scenario, sys string, rs []reading, ev evalMetrics, must bool) {
	t.Helper()
	_, mid, last := thirds(rs)
	after := append(mid, last...)
	if len(after) < 2 {
		return
	}
	a, b := after[0].p, after[len(after)-1].p
	if n := b.sum(ev.count) - a.sum(ev.count); n > 0 {
		report(t, scenario, sys, "group evaluation, mean after warm-up", fmt.Sprintf("%.3fs (%.0f evaluations)", (b.sum(ev.sum)-a.sum(ev.sum))/n, n), "")
	}
	if ev.slowest != "" {
		slowest := func(p page) float64 { return p.max(ev.slowest) }
		report(t, scenario, sys, "slowest group's evaluation, max after warm-up", fmt.Sprintf("%.3fs of %v", maxOf(after, slowest), loadInterval), "")
	}
	if ev.lastEval != "" {
		lag := 0.0
		for _, r := range after {
			oldest := math.Inf(1)
			for _, v := range r.p[ev.lastEval] {
				oldest = math.Min(oldest, v)
			}
			lag = math.Max(lag, float64(r.at.UnixNano())/1e9-oldest)
		}
		report(t, scenario, sys, "longest since a group's last evaluation (lag)", fmt.Sprintf("%.1fs (interval %v)", lag, loadInterval), "")
	}
	n := b.sum(ev.missed) - a.sum(ev.missed)
	if must {
		report(t, scenario, sys, "iterations missed after warm-up", n, "0", n == 0)
	} else {
		report(t, scenario, sys, "iterations missed after warm-up", n, "")
	}
}
