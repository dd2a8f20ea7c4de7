package notifier

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
)

// FuzzWebhookPayload sends alert groups with arbitrary labels,
// annotations, times and max_alerts through the webhook integration to a
// transport that records the request: the body must be valid JSON with
// Alertmanager's version 4 keys, the alerts as given (up to max_alerts,
// the rest counted in truncatedAlerts), and a signature that verifies.
func FuzzWebhookPayload(f *testing.F) {
	f.Add("KVCacheSaturated", "instance", "vllm-0:8000", "summary", "KV cache at 97%", "http://prom.example/graph", uint8(3), uint8(0), int64(0), int64(3600), "{}:{alertname=\"KVCacheSaturated\"}")
	f.Add("A", "x", "\xff\xfe", "d\x00", "\u2028</script>", "", uint8(10), uint8(2), int64(-3600), int64(-60), "")
	f.Add("", "", "", "", "", "%zz", uint8(0), uint8(1), int64(1<<40), int64(-1<<40), "\"\\")
	f.Add("NNNN", "k", "vvvvvvvvvv", "a", "\"\"\"", "javascript:x", uint8(255), uint8(255), int64(1), int64(1), "{{{{{{")

	tmpl, err := template.FromGlobs(nil)
	if err != nil {
		f.Fatal(err)
	}
	tmpl.ExternalURL = &url.URL{Scheme: "http", Host: "paged.example:9095"}
	var sent []*http.Request
	var bodies [][]byte
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		sent, bodies = append(sent, r), append(bodies, b)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	f.Fuzz(func(t *testing.T, name, key, value, annKey, annValue, generator string, n, maxAlerts uint8, startOff, endOff int64, groupKey string) {
		sent, bodies = nil, nil
		w, err := newWebhook(&WebhookConfig{URL: "http://hook.test/paged", HMACSecret: "fuzz-secret", MaxAlerts: uint64(maxAlerts)}, tmpl, rt, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		// JSON holds years 0 to 9999 only; alerts come from the engine's
		// clock or RFC 3339 API input, both inside that range.
		clamp := func(off int64) time.Time {
			const century = 100 * 365 * 24 * 3600
			return now.Add(time.Duration(max(-century, min(century, off))) * time.Second)
		}
		count := int(n % 40)
		alerts := make([]*alert.Alert, count)
		want := make([]model.LabelSet, count)
		for i := range alerts {
			ls := model.LabelSet{"alertname": model.LabelValue(name), "i": model.LabelValue(strings.Repeat("i", i))}
			if key != "" {
				ls[model.LabelName(key)] = model.LabelValue(value)
			}
			want[i] = ls
			alerts[i] = alert.New(model.Alert{
				Labels:       ls,
				Annotations:  model.LabelSet{model.LabelName(annKey): model.LabelValue(annValue)},
				StartsAt:     clamp(startOff),
				EndsAt:       clamp(endOff),
				GeneratorURL: generator,
			}, now, false)
		}
		ctx := notify.WithGroupKey(context.Background(), groupKey)
		ctx = notify.WithReceiverName(ctx, "hook")
		ctx = notify.WithGroupLabels(ctx, model.LabelSet{"alertname": model.LabelValue(name)})
		if v := w.Notify(ctx, alerts...); v.Err() != nil {
			t.Fatalf("Notify: %v", v.Err())
		}
		if len(sent) != 1 {
			t.Fatalf("%d requests sent, want 1", len(sent))
		}
		body := bodies[0]
		if got := sent[0].Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type %q", got)
		}
		if !json.Valid(body) {
			t.Fatalf("body is not valid JSON: %.200q", body)
		}
		if !verifySignature(sent[0].Header.Get(signatureHeader), "fuzz-secret", body) {
			t.Errorf("signature does not verify")
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"version", "groupKey", "truncatedAlerts", "receiver", "status", "alerts", "groupLabels", "commonLabels", "commonAnnotations", "externalURL"} {
			if _, ok := top[k]; !ok {
				t.Errorf("payload lacks %q: %.200s", k, body)
			}
		}
		var msg struct {
			Version         string `json:"version"`
			GroupKey        string `json:"groupKey"`
			TruncatedAlerts uint64 `json:"truncatedAlerts"`
			Receiver        string `json:"receiver"`
			Status          string `json:"status"`
			ExternalURL     string `json:"externalURL"`
			Alerts          []map[string]json.RawMessage
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			t.Fatal(err)
		}
		shown, truncated := count, 0
		if maxAlerts > 0 && count > int(maxAlerts) {
			shown, truncated = int(maxAlerts), count-int(maxAlerts)
		}
		if msg.Version != "4" || msg.Receiver != "hook" || msg.ExternalURL != "http://paged.example:9095" || msg.TruncatedAlerts != uint64(truncated) || len(msg.Alerts) != shown {
			t.Errorf("version %q receiver %q externalURL %q truncated %d alerts %d; want 4, hook, the external URL, %d, %d",
				msg.Version, msg.Receiver, msg.ExternalURL, msg.TruncatedAlerts, len(msg.Alerts), truncated, shown)
		}
		if utf8.ValidString(groupKey) && msg.GroupKey != groupKey {
			t.Errorf("groupKey %q, want %q", msg.GroupKey, groupKey)
		}
		if msg.Status != "firing" && msg.Status != "resolved" {
			t.Errorf("status %q", msg.Status)
		}
		for i, a := range msg.Alerts {
			for _, k := range []string{"status", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "fingerprint"} {
				if _, ok := a[k]; !ok {
					t.Errorf("alert %d lacks %q", i, k)
				}
			}
			var labels map[string]string
			if err := json.Unmarshal(a["labels"], &labels); err != nil {
				t.Fatal(err)
			}
			if valid(want[i]) && !sameLabels(labels, want[i]) {
				t.Errorf("alert %d labels %v, want %v", i, labels, want[i])
			}
		}
	})
}

// valid reports whether every name and value of ls is valid UTF-8, which
// JSON carries unchanged.
func valid(ls model.LabelSet) bool {
	for k, v := range ls {
		if !utf8.ValidString(string(k)) || !utf8.ValidString(string(v)) {
			return false
		}
	}
	return true
}

func sameLabels(got map[string]string, want model.LabelSet) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[string(k)] != string(v) {
			return false
		}
	}
	return true
}
