package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/eventrecorder"
	"github.com/prometheus/alertmanager/featurecontrol"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/timeinterval"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

type nopNotifier struct{}

func (nopNotifier) Notify(context.Context, ...*alert.Alert) notify.NotifyVerdict {
	return notify.Success()
}
func (nopNotifier) SendResolved() bool { return true }

type readyPeer struct{}

func (readyPeer) WaitReady(context.Context) error { return nil }

// stageKinds lists the stages a receiver's flush passes through, in order;
// a fan-out is listed as "fanout" followed by its branches in brackets.
func stageKinds(s notify.Stage) []string {
	var out []string
	switch s := s.(type) {
	case notify.MultiStage:
		for _, st := range s {
			out = append(out, stageKinds(st)...)
		}
	case notify.FanoutStage:
		out = append(out, "fanout")
		for _, st := range s {
			out = append(out, fmt.Sprint(stageKinds(st)))
		}
	case fanout:
		out = append(out, "fanout(pool)")
		for _, st := range s.stages {
			out = append(out, fmt.Sprint(stageKinds(st)))
		}
	default:
		out = append(out, fmt.Sprintf("%T", s))
	}
	return out
}

// Without a cluster, a flush skips the stages that only order peers,
// without inhibit rules the inhibition stage, and without time intervals
// the time stages;
// with one, it passes every stage Alertmanager runs. A receiver with one
// integration runs its stages in line, one with two fans out.
func TestPipelineStages(t *testing.T) {
	ff, _ := featurecontrol.NewFlags(nil, "")
	pool := newStackPool(time.Minute, 4)
	defer pool.close()
	p := pipeline{metrics: notify.NewMetrics(prometheus.NewRegistry(), ff), ff: ff, recorder: eventrecorder.Recorder{}, pool: pool}
	integration := func(name, recv string, i int) notify.Integration {
		return notify.NewIntegration(nopNotifier{}, nopNotifier{}, name, i, recv)
	}
	receivers := map[string][]notify.Integration{
		"one":  {integration("webhook", "one", 0)},
		"two":  {integration("webhook", "two", 0), integration("slack", "two", 0)},
		"none": {},
	}
	wait := func() time.Duration { return 0 }
	inhibitor, intervener := new(inhibit.Inhibitor), timeinterval.NewIntervener(nil)
	mute := []string{"*notify.MuteStage", "*notify.TimeActiveStage", "*notify.TimeMuteStage", "*notify.MuteStage"}
	deliver := []string{"*notify.DedupStage", "*notify.RetryStage", "*notify.SetNotifiesStage"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}

	// Without inhibit rules and time intervals only the silences remain
	// ahead of delivery.
	bare := p.stages(receivers, wait, nil, nil, nil, nil, nil, staleEdits{})
	if got, want := fmt.Sprint(stageKinds(bare["one"])), fmt.Sprint(cat([]string{"*notify.MuteStage"}, deliver)); got != want {
		t.Errorf("no inhibit rules, no time intervals:\n got %s\nwant %s", got, want)
	}
	if got, want := fmt.Sprint(stageKinds(p.stages(receivers, wait, new(inhibit.Inhibitor), nil, nil, nil, nil, staleEdits{})["one"])),
		fmt.Sprint(cat([]string{"*notify.MuteStage", "*notify.MuteStage"}, deliver)); got != want {
		t.Errorf("inhibit rules, no time intervals:\n got %s\nwant %s", got, want)
	}
	if got, want := fmt.Sprint(stageKinds(p.stages(receivers, wait, nil, nil, intervener, nil, nil, staleEdits{})["one"])),
		fmt.Sprint(cat([]string{"*notify.TimeActiveStage", "*notify.TimeMuteStage", "*notify.MuteStage"}, deliver)); got != want {
		t.Errorf("time intervals, no inhibit rules:\n got %s\nwant %s", got, want)
	}

	alone := p.stages(receivers, wait, inhibitor, nil, intervener, nil, nil, staleEdits{})
	if got, want := fmt.Sprint(stageKinds(alone["one"])), fmt.Sprint(cat(mute, deliver)); got != want {
		t.Errorf("one integration, no cluster:\n got %s\nwant %s", got, want)
	}
	if got, want := fmt.Sprint(stageKinds(alone["two"])), fmt.Sprint(cat(mute, []string{"fanout(pool)", fmt.Sprint(deliver), fmt.Sprint(deliver)})); got != want {
		t.Errorf("two integrations, no cluster:\n got %s\nwant %s", got, want)
	}

	if got, want := fmt.Sprint(stageKinds(alone["none"])), fmt.Sprint(cat(mute, []string{"fanout"})); got != want {
		t.Errorf("no integrations:\n got %s\nwant %s", got, want)
	}

	clustered := p.stages(receivers, wait, inhibitor, nil, intervener, nil, readyPeer{}, staleEdits{})
	waitDeliver := cat([]string{"*notify.ClusterWaitStage"}, deliver)
	if got, want := fmt.Sprint(stageKinds(clustered["one"])), fmt.Sprint(cat([]string{"*notify.ClusterGossipSettleStage"}, mute, waitDeliver)); got != want {
		t.Errorf("one integration, clustered:\n got %s\nwant %s", got, want)
	}
	if got, want := fmt.Sprint(stageKinds(clustered["two"])), fmt.Sprint(cat([]string{"*notify.ClusterGossipSettleStage"}, mute, []string{"fanout(pool)", fmt.Sprint(waitDeliver), fmt.Sprint(waitDeliver)})); got != want {
		t.Errorf("two integrations, clustered:\n got %s\nwant %s", got, want)
	}
}

type fanoutKey struct{}

// A receiver's integrations run at once, on the pool, and the flush
// fails with each failing integration's error, in their order.
func TestFanout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newStackPool(time.Minute, 16)
		defer pool.close()
		var started sync.WaitGroup
		started.Add(3)
		var ran atomic.Int32
		stage := func(err error) notify.Stage {
			return notify.StageFunc(func(ctx context.Context, _ *slog.Logger, alerts ...*alert.Alert) (context.Context, []*alert.Alert, error) {
				started.Done()
				started.Wait() // every integration is under way before any ends
				if ctx.Value(fanoutKey{}) != "flush" {
					t.Error("an integration's stages did not get the flush's context")
				}
				ran.Add(1)
				return ctx, alerts, err
			})
		}
		f := fanout{stages: []notify.Stage{stage(nil), stage(errors.New("slack: 500")), stage(errors.New("webhook: refused"))}, pool: pool}
		in := []*alert.Alert{{}}
		ctx := context.WithValue(context.Background(), fanoutKey{}, "flush")
		outCtx, out, err := f.Exec(ctx, slog.New(slog.DiscardHandler), in...)
		if ran.Load() != 3 || len(out) != 1 || out[0] != in[0] || outCtx != ctx {
			t.Fatalf("ran %d integrations, passed on %d alerts and the same context %v; want 3, the one given, true", ran.Load(), len(out), outCtx == ctx)
		}
		// Two on the pool, the last on the flush's own goroutine.
		if started, _ := pool.size(); started != 2 {
			t.Fatalf("the pool started %d goroutines for three integrations, want 2", started)
		}
		if err == nil || err.Error() != "slack: 500\nwebhook: refused" {
			t.Fatalf("error %q, want both failures in order", err)
		}
		ok := notify.StageFunc(func(ctx context.Context, _ *slog.Logger, alerts ...*alert.Alert) (context.Context, []*alert.Alert, error) {
			return ctx, alerts, nil
		})
		if _, _, err := (fanout{stages: []notify.Stage{ok, ok}, pool: pool}).Exec(context.Background(), slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("two integrations that succeeded: error %v", err)
		}
	})
}

// The stages a configuration leaves out come back when a reload adds
// inhibit rules and time intervals, and an alert delivered while there
// were none is reported active and not inhibited, as before.
func TestPipelineStagesFollowReload(t *testing.T) {
	sink := notifiertest.NewSink(t)
	head := `
route:
  receiver: hook
  group_by: [alertname, instance]
  group_wait: 300ms
  group_interval: 1s
  repeat_interval: 1h
`
	receivers := fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, sink.URL())
	reg := prometheus.NewRegistry()
	n := start(t, head+receivers, Options{Registerer: reg})
	url := serveAPI(t, n.Notifier)
	n.Notify(context.Background(), []*rules.Alert{firing("TTFTHigh", "severity", "warning", "instance", "vllm-0")})
	sink.Wait(t, 1, 10*time.Second)
	// The flush is through the pipeline (its notification logged) only
	// after the webhook answered; a reload before would cancel it and the
	// next dispatcher would send it again.
	waitUntil(t, "the first flush finished", func() bool { return metricValue(reg, "paged_notifier_group_flushes_total") >= 1 })
	if got := alertStates(t, url)["TTFTHigh/vllm-0"]; got != "active inhibitedBy=[] silencedBy=[]" {
		t.Errorf("status without inhibit rules: %s, want active, inhibited and silenced by nothing", got)
	}

	both := head + `  routes:
    - matchers: [instance="vllm-2"]
      mute_time_intervals: [always]
inhibit_rules:
  - source_matchers: [severity="critical"]
    target_matchers: [severity="warning"]
    equal: [instance]
time_intervals:
  - name: always
    time_intervals:
      - times: [{start_time: "00:00", end_time: "24:00"}]
` + receivers
	if err := n.ApplyConfig(mustConfig(t, both)); err != nil {
		t.Fatal(err)
	}
	n.Notify(context.Background(), []*rules.Alert{
		firing("TargetDown", "severity", "critical", "instance", "vllm-1"),
		firing("TTFTHigh", "severity", "warning", "instance", "vllm-1"), // inhibited
		firing("TTFTHigh", "severity", "warning", "instance", "vllm-2"), // in a mute time
		firing("KVCacheHigh", "severity", "warning", "instance", "vllm-3"),
	})
	waitUntil(t, "an inhibition and a mute time are counted after the reload", func() bool {
		return metricValue(reg, "alertmanager_notifications_suppressed_total", "reason", "inhibition") >= 1 &&
			metricValue(reg, "alertmanager_notifications_suppressed_total", "reason", "mute_time_interval") >= 1
	})
	reqs := sink.Wait(t, 3, 10*time.Second)
	// Every group has flushed by now: the suppressed ones were counted,
	// and the delivered ones flush at the same group_wait.
	time.Sleep(500 * time.Millisecond)
	var got []string
	var bodies []string
	for _, r := range sink.Requests() {
		got = append(got, payloadAlerts(t, r.Body)...)
		bodies = append(bodies, string(r.Body))
	}
	defer func() {
		if t.Failed() {
			t.Logf("bodies:\n%s", strings.Join(bodies, "\n"))
		}
	}()
	slices.Sort(got)
	if want := "[KVCacheHigh/firing TTFTHigh/firing TargetDown/firing]"; fmt.Sprint(got) != want || len(reqs) != 3 {
		t.Errorf("delivered %v, want %s (TTFTHigh of vllm-0 once, before the reload)", got, want)
	}
	if got := alertStates(t, url)["TTFTHigh/vllm-1"]; !strings.HasPrefix(got, "suppressed inhibitedBy=[") || strings.HasPrefix(got, "suppressed inhibitedBy=[]") {
		t.Errorf("status of the inhibited alert: %s, want suppressed and inhibited by TargetDown", got)
	}
	if !hasInhibitor(n.Notifier) {
		t.Error("no inhibitor with inhibit rules")
	}
	// And back: the reload without rules or intervals drops the inhibitor.
	if err := n.ApplyConfig(mustConfig(t, head+receivers)); err != nil {
		t.Fatal(err)
	}
	if hasInhibitor(n.Notifier) {
		t.Error("an inhibitor after a reload to a configuration without inhibit rules or time intervals")
	}
}

func hasInhibitor(n *Notifier) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.inhib != nil
}

// With time intervals and no inhibit rules, an alert whose group a mute
// time suppresses is still recorded on its group's marker, as
// Alertmanager's inhibition stage records it: the alertmanager_alerts
// gauge counts it active, not unprocessed.
func TestTimeMutedAlertCountedActive(t *testing.T) {
	sink := notifiertest.NewSink(t)
	conf := fmt.Sprintf(`
route:
  receiver: hook
  group_by: [alertname]
  group_wait: 20ms
  group_interval: 1s
  repeat_interval: 1h
  routes:
    - matchers: [severity="warning"]
      mute_time_intervals: [always]
time_intervals:
  - name: always
    time_intervals:
      - times: [{start_time: "00:00", end_time: "24:00"}]
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, sink.URL())
	reg := prometheus.NewRegistry()
	n := start(t, conf, Options{Registerer: reg})
	n.Notify(context.Background(), []*rules.Alert{firing("TTFTHigh", "severity", "warning", "instance", "vllm-0")})
	waitUntil(t, "the mute time suppressed the alert", func() bool {
		return metricValue(reg, "alertmanager_notifications_suppressed_total", "reason", "mute_time_interval") >= 1
	})
	active, unprocessed := metricValue(reg, "alertmanager_alerts", "state", "active"), metricValue(reg, "alertmanager_alerts", "state", "unprocessed")
	if active != 1 || unprocessed != 0 {
		t.Errorf("alertmanager_alerts: active %v, unprocessed %v; want the muted alert counted active, as Alertmanager counts it", active, unprocessed)
	}
	if got := len(sink.Requests()); got != 0 {
		t.Errorf("%d notifications in a mute time", got)
	}
}

// alertStates reads GET /api/v2/alerts as "alertname/instance" to
// "state inhibitedBy=[...] silencedBy=[...]".
func alertStates(t *testing.T, url string) map[string]string {
	t.Helper()
	resp, err := http.Get(url + "/api/v2/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var alerts []struct {
		Labels map[string]string `json:"labels"`
		Status struct {
			State       string   `json:"state"`
			InhibitedBy []string `json:"inhibitedBy"`
			SilencedBy  []string `json:"silencedBy"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&alerts); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range alerts {
		out[a.Labels["alertname"]+"/"+a.Labels["instance"]] = fmt.Sprintf("%s inhibitedBy=%v silencedBy=%v", a.Status.State, a.Status.InhibitedBy, a.Status.SilencedBy)
	}
	return out
}
