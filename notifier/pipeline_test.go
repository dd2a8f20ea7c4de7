package notifier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/eventrecorder"
	"github.com/prometheus/alertmanager/featurecontrol"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/client_golang/prometheus"
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
	default:
		out = append(out, fmt.Sprintf("%T", s))
	}
	return out
}

// Without a cluster, a flush skips the stages that only order peers;
// with one, it passes every stage Alertmanager runs. A receiver with one
// integration runs it on the group's goroutine, one with two fans out.
func TestPipelineStages(t *testing.T) {
	ff, _ := featurecontrol.NewFlags(nil, "")
	p := pipeline{metrics: notify.NewMetrics(prometheus.NewRegistry(), ff), ff: ff, recorder: eventrecorder.Recorder{}}
	integration := func(name, recv string, i int) notify.Integration {
		return notify.NewIntegration(nopNotifier{}, nopNotifier{}, name, i, recv)
	}
	receivers := map[string][]notify.Integration{
		"one": {integration("webhook", "one", 0)},
		"two": {integration("webhook", "two", 0), integration("slack", "two", 0)},
	}
	wait := func() time.Duration { return 0 }
	mute := []string{"*notify.MuteStage", "*notify.TimeActiveStage", "*notify.TimeMuteStage", "*notify.MuteStage"}
	deliver := []string{"*notify.DedupStage", "*notify.RetryStage", "*notify.SetNotifiesStage"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}

	alone := p.stages(receivers, wait, nil, nil, nil, nil, nil)
	if got, want := fmt.Sprint(stageKinds(alone["one"])), fmt.Sprint(cat(mute, deliver)); got != want {
		t.Errorf("one integration, no cluster:\n got %s\nwant %s", got, want)
	}
	if got, want := fmt.Sprint(stageKinds(alone["two"])), fmt.Sprint(cat(mute, []string{"fanout", fmt.Sprint(deliver), fmt.Sprint(deliver)})); got != want {
		t.Errorf("two integrations, no cluster:\n got %s\nwant %s", got, want)
	}

	clustered := p.stages(receivers, wait, nil, nil, nil, nil, readyPeer{})
	waitDeliver := cat([]string{"*notify.ClusterWaitStage"}, deliver)
	if got, want := fmt.Sprint(stageKinds(clustered["one"])), fmt.Sprint(cat([]string{"*notify.ClusterGossipSettleStage"}, mute, waitDeliver)); got != want {
		t.Errorf("one integration, clustered:\n got %s\nwant %s", got, want)
	}
	if got, want := fmt.Sprint(stageKinds(clustered["two"])), fmt.Sprint(cat([]string{"*notify.ClusterGossipSettleStage"}, mute, []string{"fanout", fmt.Sprint(waitDeliver), fmt.Sprint(waitDeliver)})); got != want {
		t.Errorf("two integrations, clustered:\n got %s\nwant %s", got, want)
	}
}
