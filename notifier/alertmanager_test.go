package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// postToAlertmanager sends alerts the way Prometheus does.
func postToAlertmanager(t *testing.T, base string, as []*rules.Alert) {
	t.Helper()
	var body []map[string]any
	for _, a := range as {
		body = append(body, map[string]any{
			"labels": a.Labels.Map(), "annotations": a.Annotations.Map(),
			"startsAt": a.StartsAt, "endsAt": a.EndsAt, "generatorURL": a.GeneratorURL,
		})
	}
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+"/api/v2/alerts", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("alertmanager: %s: %s", resp.Status, msg)
	}
}

// shape describes a JSON value by its keys and value types, recursively.
func shape(v any, path string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		out[path] = "object"
		for k, e := range x {
			shape(e, path+"."+k, out)
		}
	case []any:
		out[path] = "array"
		for _, e := range x {
			shape(e, path+"[]", out)
		}
	case string:
		out[path] = "string"
	case float64:
		out[path] = "number"
	case bool:
		out[path] = "bool"
	case nil:
		out[path] = "null"
	}
}

// labelMapsAreDynamic: keys under these objects are label names, not schema.
func schemaOnly(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		dyn := false
		for _, p := range []string{".groupLabels.", ".commonLabels.", ".commonAnnotations.", ".labels.", ".annotations."} {
			if strings.Contains(k, p) {
				dyn = true
			}
		}
		if !dyn {
			out[k] = v
		}
	}
	return out
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("payload is not JSON: %v\n%s", err, b)
	}
	return m
}

// TestWebhookPayloadMatchesAlertmanager sends the same alerts to Debian's
// Alertmanager (0.25) and to paged, both with a webhook receiver, and
// compares the payloads: paged may add keys (notification_reason and
// routeLabels, from Alertmanager 0.35's template data), never rename or
// drop one, and every value keeps its JSON type.
func TestWebhookPayloadMatchesAlertmanager(t *testing.T) {
	sink := notifiertest.NewSink(t)
	route := `
route:
  receiver: hook
  group_by: [alertname]
  group_wait: 50ms
  group_interval: 300ms
  repeat_interval: 1h
`
	am := testbin.StartAlertmanager(t, route+fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/am
        send_resolved: true
`, sink.URL()))
	n := start(t, route+fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/paged
`, sink.URL()), Options{})

	as := []*rules.Alert{
		firing("KVCacheSaturated", "severity", "critical", "instance", "vllm-0:8000"),
		firing("KVCacheSaturated", "severity", "critical", "instance", "vllm-1:8000"),
	}
	postToAlertmanager(t, am.URL, as)
	n.Notify(context.Background(), as)

	byPath := func(reqs []notifiertest.WebhookRequest, p string) []notifiertest.WebhookRequest {
		var out []notifiertest.WebhookRequest
		for _, r := range reqs {
			if r.Path == p {
				out = append(out, r)
			}
		}
		return out
	}
	wait := func(count int) (amReq, pagedReq notifiertest.WebhookRequest) {
		deadline := time.Now().Add(30 * time.Second)
		for {
			reqs := sink.Requests()
			a, p := byPath(reqs, "/am"), byPath(reqs, "/paged")
			if len(a) >= count && len(p) >= count {
				return a[count-1], p[count-1]
			}
			if time.Now().After(deadline) {
				t.Fatalf("got %d payloads from alertmanager and %d from paged, want %d each\n%s", len(a), len(p), count, am.Output())
			}
			select {
			case <-sink.Changed():
			case <-time.After(time.Until(deadline)):
			}
		}
	}
	compare := func(amBody, pagedBody []byte, status string) {
		t.Helper()
		a, p := decode(t, amBody), decode(t, pagedBody)
		as, ps := map[string]string{}, map[string]string{}
		shape(a, "", as)
		shape(p, "", ps)
		as, ps = schemaOnly(as), schemaOnly(ps)
		var keys []string
		for k := range as {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps[k] != as[k] {
				t.Errorf("%s: alertmanager has %s, paged has %q", k, as[k], ps[k])
			}
		}
		if len(keys) < 15 {
			t.Errorf("alertmanager payload has only %d keys: %v", len(keys), keys)
		}
		for _, k := range []string{"version", "status", "receiver", "groupKey", "groupLabels", "commonLabels", "commonAnnotations"} {
			aj, _ := json.Marshal(a[k])
			pj, _ := json.Marshal(p[k])
			if string(aj) != string(pj) {
				t.Errorf("%s: alertmanager %s, paged %s", k, aj, pj)
			}
		}
		if p["status"] != status {
			t.Errorf("status = %v, want %s", p["status"], status)
		}
		fps := func(m map[string]any) string {
			var out []string
			for _, x := range m["alerts"].([]any) {
				al := x.(map[string]any)
				lj, _ := json.Marshal(al["labels"])
				out = append(out, fmt.Sprint(al["fingerprint"], al["status"], string(lj)))
			}
			sort.Strings(out)
			return strings.Join(out, "\n")
		}
		if fps(a) != fps(p) {
			t.Errorf("alerts differ:\nalertmanager:\n%s\npaged:\n%s", fps(a), fps(p))
		}
	}

	amReq, pagedReq := wait(1)
	compare(amReq.Body, pagedReq.Body, "firing")

	var resolved []*rules.Alert
	for _, a := range as {
		resolved = append(resolved, resolvedNow(a))
	}
	postToAlertmanager(t, am.URL, resolved)
	n.Notify(context.Background(), resolved)
	amReq, pagedReq = wait(2)
	compare(amReq.Body, pagedReq.Body, "resolved")
}

// TestForwardToAlertmanager sends alerts through `alertmanagers:` to
// Debian's Alertmanager and reads them back from its API.
func TestForwardToAlertmanager(t *testing.T) {
	am := testbin.StartAlertmanager(t, `
route:
  receiver: blackhole
receivers:
  - name: blackhole
`)
	conf := fmt.Sprintf(`
receivers:
  - name: nowhere
alertmanagers:
  - url: %s
    timeout: 5s
`, am.URL)
	n := start(t, conf, Options{})
	a := firing("PreemptionsRising", "severity", "warning", "model", "llama-3-70b")
	n.Notify(context.Background(), []*rules.Alert{a})

	type amAlert struct {
		Labels       map[string]string `json:"labels"`
		Annotations  map[string]string `json:"annotations"`
		StartsAt     time.Time         `json:"startsAt"`
		GeneratorURL string            `json:"generatorURL"`
		Status       struct {
			State string `json:"state"`
		} `json:"status"`
	}
	var got []amAlert
	deadline := time.Now().Add(30 * time.Second)
	for len(got) == 0 {
		resp, err := http.Get(am.URL + "/api/v2/alerts")
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if len(got) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alert never reached alertmanager\n%s\npaged:\n%s", am.Output(), n.logs.String())
		}
		time.Sleep(100 * time.Millisecond) // an external process: polled
	}
	g := got[0]
	if g.Labels["alertname"] != "PreemptionsRising" || g.Labels["model"] != "llama-3-70b" ||
		g.Annotations["runbook_url"] != "vllm/PreemptionsRising.md" || g.GeneratorURL != a.GeneratorURL ||
		!g.StartsAt.Equal(a.StartsAt.Truncate(time.Millisecond)) && !g.StartsAt.Equal(a.StartsAt) || g.Status.State != "active" {
		t.Errorf("alertmanager has %+v, want %+v", g, a)
	}
}
