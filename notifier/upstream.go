package notifier

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/prometheus/alertmanager/alert"
	amconfig "github.com/prometheus/alertmanager/config"
	"github.com/prometheus/alertmanager/config/receiver"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/notify/email"
	"github.com/prometheus/alertmanager/notify/opsgenie"
	"github.com/prometheus/alertmanager/notify/pagerduty"
	"github.com/prometheus/alertmanager/template"
	commoncfg "github.com/prometheus/common/config"
)

// upstreamIntegrations builds the receiver's Alertmanager integrations
// (PagerDuty, Opsgenie, email, Teams...) with Alertmanager's own
// notify/ packages, through the builder Alertmanager itself uses. They run
// in the same pipeline as Slack and webhooks: the dispatcher, the
// notification log, the retry stage and the metrics per integration.
func (n *Notifier) upstreamIntegrations(r Receiver, tmpl *template.Template) ([]notify.Integration, error) {
	if upstreamCount(&r.Upstream) == 0 {
		return nil, nil
	}
	rc := withPagedDefaults(r.Upstream)
	rc.Name = r.Name
	var opts []commoncfg.HTTPClientOption
	if n.opts.Transport != nil {
		opts = transportOptions(n.opts.Transport)
	}
	ints, err := receiver.BuildReceiverIntegrations(rc, tmpl, n.logger.With("receiver", r.Name), opts...)
	if err != nil {
		return nil, fmt.Errorf("receiver %q: %w", r.Name, err)
	}
	out := make([]notify.Integration, 0, len(ints))
	for i := range ints {
		in := &ints[i]
		out = append(out, notify.NewIntegration(n.metrics.wrap(retryRateLimited{in}, r.Name, in.Name()), in, in.Name(), in.Index(), r.Name))
	}
	return out, nil
}

// retryRateLimited retries a 429 answer, which some of Alertmanager's
// integrations (Teams, Discord, Webex...) give up on: a rate limit is
// temporary. paged's webhooks do the same.
type retryRateLimited struct{ next notify.Notifier }

func (r retryRateLimited) Notify(ctx context.Context, alerts ...*alert.Alert) notify.NotifyVerdict {
	v := r.next.Notify(ctx, alerts...)
	if err := v.Err(); err != nil && !v.ShouldRetry() && strings.Contains(err.Error(), "unexpected status code 429") {
		return notify.Retry(v.Delay(), err, v.Reason())
	}
	return v
}

// Paged's defaults for the fields a user did not set. They are templates
// in the integrations' own configuration (templates/paged.tmpl), so the
// integrations stay Alertmanager's.
const (
	runbookTemplate = `{{ template "paged.runbook.url" . }}`
	sourceTemplate  = `{{ template "paged.source.url" . }}`
	emailTemplate   = `{{ template "paged.email.html" . }}`
)

// withPagedDefaults returns a copy of r with paged's additions where the
// user set nothing: a Runbook link and details.runbook on PagerDuty
// events; details.runbook and details.source on Opsgenie alerts; paged's
// email body in place of Alertmanager's default one.
func withPagedDefaults(r amconfig.Receiver) amconfig.Receiver {
	r.PagerdutyConfigs = mapConfigs(r.PagerdutyConfigs, func(c *pagerduty.PagerdutyConfig) {
		if len(c.Links) == 0 {
			c.Links = []pagerduty.PagerdutyLink{{Href: runbookTemplate, Text: "Runbook"}}
		}
		c.Details = maps.Clone(c.Details)
		if c.Details == nil {
			c.Details = map[string]any{}
		}
		if _, ok := c.Details["runbook"]; !ok {
			c.Details["runbook"] = runbookTemplate
		}
	})
	r.OpsGenieConfigs = mapConfigs(r.OpsGenieConfigs, func(c *opsgenie.OpsGenieConfig) {
		c.Details = maps.Clone(c.Details)
		if c.Details == nil {
			c.Details = map[string]string{}
		}
		if _, ok := c.Details["runbook"]; !ok {
			c.Details["runbook"] = runbookTemplate
		}
		if _, ok := c.Details["source"]; !ok {
			c.Details["source"] = sourceTemplate
		}
	})
	r.EmailConfigs = mapConfigs(r.EmailConfigs, func(c *email.EmailConfig) {
		if c.HTML == email.DefaultEmailConfig.HTML {
			c.HTML = emailTemplate
		}
	})
	return r
}

// mapConfigs copies each config and applies f to the copy.
func mapConfigs[T any](in []*T, f func(*T)) []*T {
	if in == nil {
		return nil
	}
	out := make([]*T, len(in))
	for i, c := range in {
		cp := *c
		f(&cp)
		out[i] = &cp
	}
	return out
}
