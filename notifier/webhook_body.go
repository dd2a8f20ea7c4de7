package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
)

// webhookBody appends the webhook's version 4 message for alerts to b: the
// bytes json.Marshal gives for a webhook.Message holding
// notify.GetTemplateData, written straight from the alerts. The template
// data's maps (a copy of every alert's labels and annotations, and of the
// first alert's for the common sets) and the reflection over them were a
// third of the webhook's cost in a storm; TestWebhookBodyMatchesMarshal
// holds the two encodings equal.
func webhookBody(ctx context.Context, b []byte, tmpl *template.Template, alerts []*alert.Alert, groupKey string, truncated uint64, logger *slog.Logger) ([]byte, error) {
	recv, ok := notify.ReceiverName(ctx)
	if !ok {
		logger.Error("Missing receiver")
	}
	groupLabels, ok := notify.GroupLabels(ctx)
	if !ok {
		logger.Error("Missing group labels")
	}
	routeLabels, _ := notify.RouteLabels(ctx)
	reason, ok := notify.NotificationReason(ctx)
	if !ok {
		logger.Error("Missing notification reason")
		reason = notify.ReasonUnknown
	}

	b = slices.Grow(b, bodySize(alerts, groupLabels, routeLabels)+len(recv)+len(groupKey)+256)

	now := time.Now()
	status := model.AlertResolved
	for _, a := range alerts {
		if !a.ResolvedAt(now) {
			status = model.AlertFiring
			break
		}
	}
	var err error
	b = append(b, `{"receiver":`...)
	b = appendJSONString(b, regexp.QuoteMeta(recv))
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(status))
	b = append(b, `,"alerts":[`...)
	for i, a := range alerts {
		if i > 0 {
			b = append(b, ',')
		}
		st, endsAt := model.AlertFiring, time.Time{}
		if a.ResolvedAt(now) {
			// Alertmanager hides the end of an alert that has not ended.
			st, endsAt = model.AlertResolved, a.EndsAt
		}
		b = append(b, `{"status":`...)
		b = appendJSONString(b, string(st))
		b = append(b, `,"labels":`...)
		b = appendLabelSet(b, a.Labels, nil)
		b = append(b, `,"annotations":`...)
		b = appendLabelSet(b, a.Annotations, nil)
		b = append(b, `,"startsAt":`...)
		if b, err = appendJSONTime(b, a.StartsAt); err != nil {
			return nil, err
		}
		b = append(b, `,"endsAt":`...)
		if b, err = appendJSONTime(b, endsAt); err != nil {
			return nil, err
		}
		b = append(b, `,"generatorURL":`...)
		b = appendJSONString(b, a.GeneratorURL)
		b = append(b, `,"fingerprint":`...)
		b = appendJSONString(b, a.Fingerprint().String())
		b = append(b, '}')
	}
	b = append(b, `],"notification_reason":`...)
	b = appendJSONString(b, reason.String())
	b = append(b, `,"groupLabels":`...)
	b = appendLabelSet(b, groupLabels, nil)
	b = append(b, `,"commonLabels":`...)
	b = appendCommon(b, alerts, func(a *alert.Alert) model.LabelSet { return a.Labels })
	b = append(b, `,"commonAnnotations":`...)
	b = appendCommon(b, alerts, func(a *alert.Alert) model.LabelSet { return a.Annotations })
	b = append(b, `,"routeLabels":`...)
	b = appendLabelSet(b, routeLabels, nil)
	b = append(b, `,"externalURL":`...)
	b = appendJSONString(b, tmpl.ExternalURL.String())
	b = append(b, `,"version":"4","groupKey":`...)
	b = appendJSONString(b, groupKey)
	b = append(b, `,"truncatedAlerts":`...)
	b = strconv.AppendUint(b, truncated, 10)
	return append(b, '}'), nil
}

// bodySize is about the length of the body's alerts and label sets,
// unescaped, so that the body is allocated once.
func bodySize(alerts []*alert.Alert, sets ...model.LabelSet) int {
	size := func(ls model.LabelSet) int {
		n := 2
		for k, v := range ls {
			n += len(k) + len(v) + 6
		}
		return n
	}
	n := 0
	for _, ls := range sets {
		n += size(ls)
	}
	for i, a := range alerts {
		// Status, times, fingerprint and keys: about 190 bytes.
		n += 190 + size(a.Labels) + size(a.Annotations) + len(a.GeneratorURL)
		if i == 0 {
			n += size(a.Labels) + size(a.Annotations) // the common sets, at most
		}
	}
	return n
}

// appendCommon appends the pairs that every alert has with the same value,
// as an object with sorted keys.
func appendCommon(b []byte, alerts []*alert.Alert, set func(*alert.Alert) model.LabelSet) []byte {
	if len(alerts) == 0 {
		return append(b, "{}"...)
	}
	rest := alerts[1:]
	return appendLabelSet(b, set(alerts[0]), func(k model.LabelName, v model.LabelValue) bool {
		for _, a := range rest {
			// A missing pair reads as "", as in Alertmanager's own.
			if set(a)[k] != v {
				return false
			}
		}
		return true
	})
}

var keysPool = sync.Pool{New: func() any { s := make([]string, 0, 16); return &s }}

// appendLabelSet appends ls as a JSON object with its keys sorted, as
// encoding/json writes a map; keep, when set, picks the pairs written.
func appendLabelSet(b []byte, ls model.LabelSet, keep func(model.LabelName, model.LabelValue) bool) []byte {
	kp := keysPool.Get().(*[]string)
	keys := (*kp)[:0]
	for k := range ls {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	b = append(b, '{')
	first := true
	for _, k := range keys {
		v := ls[model.LabelName(k)]
		if keep != nil && !keep(model.LabelName(k), v) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, string(v))
	}
	clear(keys)
	*kp = keys
	keysPool.Put(kp)
	return append(b, '}')
}

// appendJSONTime appends t as encoding/json does (RFC 3339 with
// nanoseconds, in quotes), failing where it fails (a year outside
// 0–9999, a zone offset of 24 hours or more, which the API accepts) with
// the error json.Marshal gives.
func appendJSONTime(b []byte, t time.Time) ([]byte, error) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		_, err = json.Marshal(t)
		if err == nil {
			err = errors.New("time " + t.String() + " cannot be written as RFC 3339")
		}
		return nil, err
	}
	return append(b, '"'), nil
}

// appendJSONString appends s quoted as encoding/json quotes it by default.
// Plain printable ASCII is copied; anything else (quotes, backslashes,
// control characters, the HTML-significant <, > and &, non-ASCII and
// invalid UTF-8) goes through json.Marshal so the escaping stays its own.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
