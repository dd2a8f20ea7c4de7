package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/notify/webhook"
	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
)

// marshalWebhook is the reference encoding webhookBody must reproduce:
// Alertmanager's template data and message type through encoding/json.
func marshalWebhook(ctx context.Context, tmpl *template.Template, alerts []*alert.Alert, key string, truncated uint64) ([]byte, error) {
	data := notify.GetTemplateData(ctx, tmpl, alerts, slog.New(slog.DiscardHandler))
	return json.Marshal(&webhook.Message{Data: data, Version: "4", GroupKey: key, TruncatedAlerts: truncated})
}

func checkWebhookBody(t testing.TB, ctx context.Context, tmpl *template.Template, alerts []*alert.Alert, key string, truncated uint64) {
	t.Helper()
	got, err := webhookBody(ctx, nil, tmpl, alerts, key, truncated, slog.New(slog.DiscardHandler))
	want, werr := marshalWebhook(ctx, tmpl, alerts, key, truncated)
	if err != nil || werr != nil {
		// Both fail, and Alertmanager's pipeline formats the error.
		if err == nil || werr == nil || !strings.Contains(werr.Error(), err.Error()) {
			t.Fatalf("webhookBody error %v, json.Marshal's %v", err, werr)
		}
		return
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("bodies differ at byte %d:\n got  …%.120q\n want …%.120q", i, got[max(0, i-40):], want[max(0, i-40):])
	}
}

func bodyTemplate(t testing.TB) *template.Template {
	tmpl, err := template.FromGlobs(nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.ExternalURL = &url.URL{Scheme: "https", Host: "paged.example", Path: "/a b&c"}
	return tmpl
}

func bodyContext(recv string, group, route model.LabelSet, reason notify.NotifyReason) context.Context {
	ctx := notify.WithReceiverName(context.Background(), recv)
	ctx = notify.WithGroupLabels(ctx, group)
	if route != nil {
		ctx = notify.WithRouteLabels(ctx, route)
	}
	return notify.WithNotificationReason(ctx, reason)
}

// TestWebhookBodyMatchesMarshal holds the hand-written webhook body to the
// bytes Alertmanager's own types give, on the cases where they could part:
// escaping, sorting, common sets, firing and resolved alerts, time zones,
// and a context without its receiver or group labels.
func TestWebhookBodyMatchesMarshal(t *testing.T) {
	tmpl := bodyTemplate(t)
	now := time.Now()
	berlin := time.FixedZone("CET", 3600)
	mk := func(ls, ann model.LabelSet, start, end time.Time, gen string) *alert.Alert {
		return alert.New(model.Alert{Labels: ls, Annotations: ann, StartsAt: start, EndsAt: end, GeneratorURL: gen}, now, false)
	}
	firing := mk(model.LabelSet{"alertname": "KVCacheSaturated", "instance": "vllm-0:8000", "severity": "page", "z": ""},
		model.LabelSet{"summary": "KV cache at 97%", "runbook_url": "https://runbooks.example/kv?x=1&y=<2>"},
		now.Add(-time.Hour).In(berlin), now.Add(time.Hour), "http://prom:9090/graph?g0.expr=a%3E1")
	resolved := mk(model.LabelSet{"alertname": "KVCacheSaturated", "instance": "vllm-1:8000", "severity": "page"},
		model.LabelSet{"summary": "KV cache at 97%", "description": "line\nbreak \"quoted\" \\ tab\t"},
		now.Add(-2*time.Hour), now.Add(-time.Minute).Add(123456789), "")
	odd := mk(model.LabelSet{"alertname": "Ünïcode ✓", "bad": "\xff\xfe", "sep": "a\u2028b\u2029c", "ctl": "\x00\x1f\x7f", "html": "</script>"},
		model.LabelSet{},
		time.Date(2026, 3, 29, 1, 59, 59, 999999999, time.UTC), time.Time{}, "javascript:alert(1)")

	cases := []struct {
		name      string
		ctx       context.Context
		alerts    []*alert.Alert
		key       string
		truncated uint64
	}{
		{"one firing", bodyContext("slack-oncall", model.LabelSet{"alertname": "KVCacheSaturated"}, nil, notify.ReasonFirstNotification), []*alert.Alert{firing}, `{}:{alertname="KVCacheSaturated"}`, 0},
		{"firing and resolved", bodyContext("team.*(a|b)", model.LabelSet{"alertname": "KVCacheSaturated"}, model.LabelSet{"team": "ml"}, notify.ReasonRepeatIntervalElapsed), []*alert.Alert{firing, resolved}, `{}/{team="ml"}:{alertname="KVCacheSaturated"}`, 7},
		{"all resolved", bodyContext("hook", nil, nil, notify.ReasonAllAlertsResolved), []*alert.Alert{resolved}, "k", 0},
		{"odd strings", bodyContext("h\"o<o>k&", model.LabelSet{"bad": "\xff\xfe"}, model.LabelSet{"r": "\u2028"}, notify.ReasonNewAlertsInGroup), []*alert.Alert{odd, firing, resolved}, "\x00\"\\", 1},
		{"no context", context.Background(), []*alert.Alert{firing, odd}, "", 0},
		{"no alerts", bodyContext("hook", model.LabelSet{}, nil, notify.ReasonFirstNotification), nil, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWebhookBody(t, c.ctx, tmpl, c.alerts, c.key, c.truncated) })
	}

	// Common sets: a pair missing from one alert, a pair that is "" in one
	// and missing in another (Alertmanager reads a missing pair as "").
	a := mk(model.LabelSet{"alertname": "A", "k": "", "same": "1", "diff": "x"}, model.LabelSet{"s": "1", "e": ""}, now, time.Time{}, "")
	b := mk(model.LabelSet{"alertname": "A", "same": "1", "diff": "y"}, model.LabelSet{"s": "1"}, now, time.Time{}, "")
	checkWebhookBody(t, bodyContext("hook", nil, nil, notify.ReasonFirstNotification), tmpl, []*alert.Alert{a, b}, "", 0)
	checkWebhookBody(t, bodyContext("hook", nil, nil, notify.ReasonFirstNotification), tmpl, []*alert.Alert{b, a}, "", 0)

	// A time JSON cannot hold fails as json.Marshal fails, with its
	// error, which Alertmanager's pipeline formats: a year past 9999, and
	// a zone 24 hours east (go-openapi accepts "+24:00" in a POST).
	for _, start := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)),
	} {
		bad := []*alert.Alert{mk(model.LabelSet{"alertname": "A"}, nil, start, time.Time{}, "")}
		_, err := webhookBody(context.Background(), nil, tmpl, bad, "", 0, slog.New(slog.DiscardHandler))
		_, want := json.Marshal(&webhook.Message{Data: notify.GetTemplateData(context.Background(), tmpl, bad, slog.New(slog.DiscardHandler))})
		if err == nil || want == nil {
			t.Fatalf("start %v: error %v, json.Marshal's %v; want both to fail", start, err, want)
		}
		if !strings.Contains(want.Error(), err.Error()) {
			t.Errorf("start %v: error %q, json.Marshal's %q", start, err.Error(), want.Error())
		}
	}
}

// FuzzWebhookBody compares the two encodings on arbitrary strings and
// group shapes.
func FuzzWebhookBody(f *testing.F) {
	f.Add("KVCacheSaturated", "instance", "vllm-0:8000", "summary", "KV cache at 97%", "hook", "{}:{}", uint8(3), uint64(0), int64(3600), int64(7200), uint64(1), int32(0))
	f.Add("A", "x", "\xff\xfe", "d\x00", "\u2028</script>", "r.*", "\"\\", uint8(10), uint64(2), int64(-3600), int64(-60), uint64(2), int32(-5*3600-1800))
	f.Add("", "", "", "", "", "", "", uint8(2), uint64(0), int64(1<<40), int64(-1<<40), uint64(3), int32(24*3600))
	tmpl := bodyTemplate(f)
	f.Fuzz(func(t *testing.T, name, key, value, annKey, annValue, recv, groupKey string, n uint8, truncated uint64, startOff, endOff int64, seed uint64, zone int32) {
		now := time.Now()
		// Any zone, including offsets of a day or more that JSON cannot
		// write: both encoders must fail alike on those.
		loc := time.FixedZone("", int(zone%(36*3600)))
		// Keep every end an hour away from now, so that both encoders see
		// the same status although they read the clock apart.
		off := func(o int64) time.Time {
			const century = 100 * 365 * 24 * 3600
			o = max(-century, min(century, o))
			if o > -3600 && o < 3600 {
				o += 7200
			}
			return now.Add(time.Duration(o) * time.Second).In(loc)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(n)))
		alerts := make([]*alert.Alert, int(n%12))
		for i := range alerts {
			ls := model.LabelSet{"alertname": model.LabelValue(name)}
			if rng.IntN(3) > 0 {
				ls[model.LabelName(key)] = model.LabelValue(value)
			}
			if rng.IntN(2) == 0 {
				ls["i"] = model.LabelValue(rune('a' + i))
			}
			ann := model.LabelSet{}
			if rng.IntN(3) > 0 {
				ann[model.LabelName(annKey)] = model.LabelValue(annValue)
			}
			end := time.Time{}
			if rng.IntN(4) > 0 {
				end = off(endOff + int64(rng.IntN(3))*3600)
			}
			alerts[i] = alert.New(model.Alert{Labels: ls, Annotations: ann, StartsAt: off(startOff), EndsAt: end, GeneratorURL: annValue}, now, false)
		}
		ctx := bodyContext(recv, model.LabelSet{"alertname": model.LabelValue(name)}, model.LabelSet{model.LabelName(annKey): model.LabelValue(value)}, notify.NotifyReason(seed%7))
		checkWebhookBody(t, ctx, tmpl, alerts, groupKey, truncated)
	})
}

func BenchmarkWebhookBody(b *testing.B) {
	tmpl := bodyTemplate(b)
	now := time.Now()
	alerts := []*alert.Alert{alert.New(model.Alert{
		Labels:      model.LabelSet{"alertname": "KVCacheSaturated", "instance": "vllm-0:8000", "severity": "page", "model": "llama-3-70b"},
		Annotations: model.LabelSet{"summary": "KV cache at 97%", "runbook_url": "https://runbooks.example/kv"},
		StartsAt:    now, EndsAt: now.Add(time.Hour), GeneratorURL: "http://prom:9090/graph",
	}, now, false)}
	ctx := bodyContext("hook", model.LabelSet{"alertname": "KVCacheSaturated", "instance": "vllm-0:8000"}, nil, notify.ReasonFirstNotification)
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := webhookBody(ctx, nil, tmpl, alerts, "k", 0, slog.New(slog.DiscardHandler)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("template data and json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalWebhook(ctx, tmpl, alerts, "k", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestWebhookBodyAllocatedOnce checks the size estimate: a body that
// outgrew it would be copied as it grows.
func TestWebhookBodyAllocatedOnce(t *testing.T) {
	tmpl := bodyTemplate(t)
	now := time.Now()
	var alerts []*alert.Alert
	for i := range 50 {
		alerts = append(alerts, alert.New(model.Alert{
			Labels:      model.LabelSet{"alertname": "KVCacheSaturated", "instance": model.LabelValue(fmt.Sprintf("vllm-%d:8000", i)), "severity": "page"},
			Annotations: model.LabelSet{"summary": "KV cache at 97%", "runbook_url": "https://runbooks.example/kv"},
			StartsAt:    now, EndsAt: now.Add(time.Hour), GeneratorURL: "http://prom:9090/graph?g0.expr=vllm%3Agpu_cache_usage_perc+%3E+0.95",
		}, now, false))
	}
	ctx := bodyContext("slack-oncall", model.LabelSet{"alertname": "KVCacheSaturated"}, nil, notify.ReasonFirstNotification)
	for _, n := range []int{1, 2, 50} {
		b, err := webhookBody(ctx, nil, tmpl, alerts[:n], `{}:{alertname="KVCacheSaturated"}`, 0, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > cap(b) || cap(b) > 2*len(b) {
			t.Errorf("%d alerts: body of %d bytes in a buffer of %d", n, len(b), cap(b))
		}
		if raceEnabled {
			continue // counted in the run without -race
		}
		if avg := testing.AllocsPerRun(20, func() {
			_, _ = webhookBody(ctx, nil, tmpl, alerts[:n], `{}:{alertname="KVCacheSaturated"}`, 0, slog.New(slog.DiscardHandler))
		}); avg > float64(8+3*n) {
			t.Errorf("%d alerts: %.0f allocations per body", n, avg)
		}
	}
}
