package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// digestNodes are where report.digest's values are in the file, for the
// checks that need the rest of the configuration (the notifier's
// receivers, the history) and run once it is all read.
type digestNodes struct {
	block, receiver, span *yaml.Node
}

// digest decodes report.digest into rc.Digest, with the defaults of the
// keys it leaves out.
func (d *decoder) digest(n *yaml.Node, key string, rc *ReportConfig) *digestNodes {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	dc := &DigestConfig{Weekday: DefaultDigestWeekday, At: DefaultDigestAt, Span: DefaultDigestSpan}
	nodes := &digestNodes{block: n}
	d.mapping(n, key,
		field{"receiver", func(n *yaml.Node, key string) {
			nodes.receiver = n
			d.str(&dc.Receiver)(n, key)
		}},
		field{"schedule", d.schedule(&dc.Weekday, &dc.At)},
		field{"span", func(n *yaml.Node, key string) {
			nodes.span = n
			d.duration(&dc.Span, false)(n, key)
		}},
	)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	rc.Digest = dc
	return nodes
}

// schedule parses "<weekday> HH:MM" (Mon 09:00, friday 17:30).
func (d *decoder) schedule(wd *time.Weekday, at *time.Duration) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok {
			return
		}
		w, a, err := ParseSchedule(v)
		if err != nil {
			d.errorf(n, key, "%s, got %s", err, d.quote(n))
			return
		}
		*wd, *at = w, a
	}
}

// ParseSchedule reads a digest's schedule: a day of the week and a time
// of day, "Mon 09:00" (mon…sun or monday…sunday, any case; 00:00 to
// 23:59).
func ParseSchedule(s string) (time.Weekday, time.Duration, error) {
	const want = `expected a day of the week and a time such as "Mon 09:00"`
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("%s", want)
	}
	wd, ok := weekdayNames[strings.ToLower(f[0])]
	if !ok {
		return 0, 0, fmt.Errorf("%s (days: mon, tue, wed, thu, fri, sat, sun)", want)
	}
	at, err := clockTime(f[1])
	if err != nil || at >= 24*time.Hour {
		return 0, 0, fmt.Errorf("%s (times: 00:00 to 23:59)", want)
	}
	return wd, at, nil
}

// Schedule writes the digest's schedule as ParseSchedule reads it.
func (c *DigestConfig) Schedule() string {
	return c.Weekday.String()[:3] + " " + clock(c.At)
}

// checkDigest checks report.digest against the rest of the file: its
// receiver must be one of notifier.receivers with an integration that
// carries a digest, and the history it is built from must be on and
// keep its span.
func (d *decoder) checkDigest(nodes *digestNodes, cfg *Config) {
	dc := cfg.Report.Digest
	if nodes == nil || dc == nil {
		return
	}
	const key = "report.digest"
	switch {
	case nodes.receiver == nil:
		d.errorf(nodes.block, key+".receiver", "required: the receiver of notifier.receivers the digest is sent to")
	case dc.Receiver == "":
		if !d.hasProblemUnder(key + ".receiver") {
			d.errorf(nodes.receiver, key+".receiver", "must not be empty: name a receiver of notifier.receivers")
		}
	case cfg.Notifier == nil:
		d.errorf(nodes.receiver, key+".receiver", "there is no notifier block: the digest is sent to one of notifier.receivers")
	case cfg.NotifierConfig == nil:
		// The notifier block has problems of its own, reported already.
	default:
		var names []string
		found := false
		for _, r := range cfg.NotifierConfig.Receivers {
			names = append(names, r.Name)
			if r.Name != dc.Receiver {
				continue
			}
			found = true
			if len(r.SlackConfigs) == 0 && len(r.WebhookConfigs) == 0 {
				d.errorf(nodes.receiver, key+".receiver", "receiver %s has no slack_configs or webhook_configs: a digest is sent as a Slack message or as JSON to a webhook, never through a receiver's other integrations (they page someone, and a digest is not a page)", d.quote(nodes.receiver))
			}
		}
		if !found {
			slices.Sort(names)
			d.errorf(nodes.receiver, key+".receiver", "unknown receiver %s (notifier.receivers: %s)", d.quote(nodes.receiver), strings.Join(names, ", "))
		}
	}
	if !cfg.Storage.History.Enabled {
		d.errorf(nodes.block, key, "the digest is built from the event history, which is off: set storage.history.enabled: true")
	} else if dc.Span > cfg.Storage.History.Retention {
		at := nodes.span
		if at == nil {
			at = nodes.block
		}
		d.errorf(at, key+".span", "%s is longer than storage.history.retention (%s): the digest would count events the history no longer keeps",
			model.Duration(dc.Span), model.Duration(cfg.Storage.History.Retention))
	}
}
