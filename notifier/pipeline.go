package notifier

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/eventrecorder"
	"github.com/prometheus/alertmanager/featurecontrol"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/silence"
	"github.com/prometheus/alertmanager/timeinterval"

	"github.com/pagedhq/paged/history"
)

// pipeline assembles the notification pipeline from Alertmanager's own
// stages, in the order notify.PipelineBuilder puts them, with the stages
// left out that can do nothing under the configuration they are built for
// (the pipeline is built again on every reload):
//
//   - Without a cluster, the gossip-settle and cluster-wait stages.
//     The wait is zero there, yet each flush would still create a timer,
//     a context done channel and park the group's goroutine once.
//   - Without time intervals, the two time stages: no route can name an
//     interval then, and each stage only finds that out.
//   - Without inhibit rules and time intervals, the inhibition stage. It
//     would fingerprint every alert and record on the group's marker that
//     nothing inhibits it; the silence stage, first then, records the
//     alert on the marker as well. With time intervals it stays even
//     without rules: it is the stage that records an alert whose group a
//     time interval then mutes, which the alertmanager_alerts gauge would
//     otherwise count as unprocessed.
//   - For a receiver with one integration, the fan-out: it starts a
//     goroutine per integration and waits for it, so the integration's
//     stages would run on a fresh stack that grows through the HTTP client.
//
// With a cluster the gossip-settle and cluster-wait stages stay.
type pipeline struct {
	metrics  *notify.Metrics
	ff       featurecontrol.Flagger
	recorder eventrecorder.Recorder
	pool     *stackPool // runs a receiver's integrations at once; nil: Alertmanager's FanoutStage
	history  *history.Store
	logger   *slog.Logger
}

// stages is the pipeline for receivers. inhibitor is nil without inhibit
// rules and time intervals, intervener nil without time intervals, and
// peer nil without a cluster; wait is how long this peer waits its turn before sending.
// edits names the integrations whose dedup stage lets a group through
// when its datasource state changes (stale_edit.go).
func (p pipeline) stages(receivers map[string][]notify.Integration, wait func() time.Duration,
	inhibitor *inhibit.Inhibitor, silencer *silence.Silencer, intervener *timeinterval.Intervener,
	nfl notify.NotificationLog, peer notify.Peer, edits staleEdits,
) notify.RoutingStage {
	rs := make(notify.RoutingStage, len(receivers))
	var pre []notify.Stage
	if peer != nil {
		pre = append(pre, notify.NewClusterGossipSettleStage(peer))
	}
	if inhibitor != nil {
		pre = append(pre, notify.NewMuteStage(inhibitor, p.metrics))
	}
	if intervener != nil {
		pre = append(pre,
			notify.NewTimeActiveStage(intervener, p.metrics),
			notify.NewTimeMuteStage(intervener, p.metrics),
		)
	}
	pre = append(pre, notify.NewMuteStage(silencer, p.metrics))
	for name, integrations := range receivers {
		st := append(append([]notify.Stage(nil), pre...), p.receiverStage(name, integrations, wait, nfl, peer != nil, edits))
		rs[name] = p.multi(st)
	}
	p.metrics.InitializeFor(receivers)
	return rs
}

func (p pipeline) receiverStage(name string, integrations []notify.Integration, wait func() time.Duration,
	nfl notify.NotificationLog, clustered bool, edits staleEdits,
) notify.Stage {
	var fs notify.FanoutStage
	for i := range integrations {
		recv := &nflogpb.Receiver{
			GroupName:   name,
			Integration: integrations[i].Name(),
			Idx:         uint32(integrations[i].Index()),
		}
		var st []notify.Stage
		if clustered {
			st = append(st, notify.NewClusterWaitStage(wait))
		}
		st = append(st, edits.wrap(name, &integrations[i], notify.NewDedupStage(&integrations[i], nfl, recv)))
		retry := notify.NewRetryStage(integrations[i], name, p.metrics, p.recorder)
		set := notify.NewSetNotifiesStage(nfl, recv, p.ff)
		if p.history != nil {
			st = append(st, historyStage{retry: retry, setNotifies: set, history: p.history, receiver: name,
				integration: integrations[i].Name(), sendResolved: integrations[i].SendResolved(), logger: p.logger})
		} else {
			st = append(st, retry, set)
		}
		fs = append(fs, p.multi(st))
	}
	if len(fs) == 1 {
		return fs[0]
	}
	if len(fs) == 0 || p.pool == nil {
		return fs // a receiver without integrations: nothing to run
	}
	return fanout{stages: fs, pool: p.pool}
}

// fanout runs the stages of every integration of a receiver at once and
// waits for all of them, as Alertmanager's FanoutStage does, but on the
// pool's goroutines: a goroutine started per integration and flush would
// grow its stack in every flush (see stackPool). The last integration runs
// on the flush's own goroutine, a pooled one already. The errors are
// joined in the integrations' order.
type fanout struct {
	stages []notify.Stage
	pool   *stackPool
}

var errStagesEnded = errors.New("an integration's stages ended without returning")

func (f fanout) Exec(ctx context.Context, l *slog.Logger, alerts ...*alert.Alert) (context.Context, []*alert.Alert, error) {
	errs := make([]error, len(f.stages))
	exec := func(i int) {
		errs[i] = errStagesEnded // stays if the stages end their goroutine
		_, _, errs[i] = f.stages[i].Exec(ctx, l, alerts...)
	}
	last := len(f.stages) - 1
	var wg sync.WaitGroup
	for i := range last {
		// The goroutine that waits stays shallow; the stages run on a
		// pooled one.
		wg.Go(func() { f.pool.run(func() { exec(i) }) })
	}
	exec(last)
	wg.Wait()
	return ctx, alerts, errors.Join(errs...)
}

func (p pipeline) multi(st []notify.Stage) notify.Stage {
	if p.ff.EnableMutedAlertsInNflog() {
		return notify.MutedMultiStage(st)
	}
	return notify.MultiStage(st)
}
