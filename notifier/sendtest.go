package notifier

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/common/model"
)

// SendResult is the outcome of one integration in SendTest.
type SendResult struct {
	Integration string // "slack[0]", "webhook[1]"
	Err         error
}

// SampleAlert is the alert SendTest delivers.
func SampleAlert(now time.Time) model.Alert {
	return model.Alert{
		Labels: model.LabelSet{
			"alertname": "PagedNotifyTest", "severity": "info", "server": "vllm", "instance": "vllm-0:8000",
		},
		Annotations: model.LabelSet{
			"summary":     "Test notification from paged notify-test",
			"description": "If you can read this, the receiver works. Nothing is wrong.",
			"runbook_url": "https://github.com/pagedhq/paged/blob/main/docs/notifications.md",
		},
		StartsAt: now,
		EndsAt:   now.Add(5 * time.Minute),
	}
}

// SendTest delivers a sample alert once to every integration of the named
// receiver, bypassing routing, silences and deduplication, and reports
// each outcome. It is `paged notify-test`.
func SendTest(ctx context.Context, opts Options, receiver string) ([]SendResult, error) {
	n, err := New(opts)
	if err != nil {
		return nil, err
	}
	defer n.alerts.Close()
	defer n.closeState()
	n.journal = nil // a test message is no group's message
	r, ok := n.conf.Receiver(receiver)
	if !ok {
		return nil, fmt.Errorf("receiver %q is not defined", receiver)
	}
	if len(r.SlackConfigs)+len(r.WebhookConfigs)+upstreamCount(&r.Upstream) == 0 {
		return nil, fmt.Errorf("receiver %q has no integrations", receiver)
	}
	tmpl, err := newTemplate(n.conf.Templates, n.links())
	if err != nil {
		return nil, err
	}
	ints, err := n.integrations(*r, tmpl, false, nil)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	a := alert.New(SampleAlert(now), now, false)
	ctx = notify.WithReceiverName(ctx, receiver)
	ctx = notify.WithGroupKey(ctx, "{}:{alertname=\"PagedNotifyTest\"}")
	ctx = notify.WithGroupLabels(ctx, model.LabelSet{"alertname": "PagedNotifyTest"})
	ctx = notify.WithNotificationReason(ctx, notify.ReasonFirstNotification)
	ctx = notify.WithNow(ctx, now)
	var out []SendResult
	counts := map[string]int{}
	for _, integ := range ints {
		name := fmt.Sprintf("%s[%d]", integ.Name(), counts[integ.Name()])
		counts[integ.Name()]++
		ictx := notify.WithNflogStore(ctx, nflog.NewStore(nil))
		v := integ.Notify(ictx, a)
		err := v.Err()
		if err != nil && v.ShouldRetry() {
			err = fmt.Errorf("%w (temporary: paged run would retry)", err)
		}
		out = append(out, SendResult{Integration: name, Err: err})
	}
	return out, nil
}
