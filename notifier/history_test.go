package notifier

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// TestHistoryOfNotificationsAndSilences: a webhook notification is in the
// history as sent, with its receiver, integration and the alert's labels;
// a silence posted to the API is there with its author and Alertmanager's
// silence event.
func TestHistoryOfNotificationsAndSilences(t *testing.T) {
	store, err := history.Open(history.Options{Path: filepath.Join(t.TempDir(), history.FileName)})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sink := notifiertest.NewSink(t)
	conf := fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, sink.URL())
	n := start(t, conf, Options{StoragePath: t.TempDir(), History: store})
	n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated", "instance", "gpu-1")})
	sink.Wait(t, 1, 10*time.Second)

	srv := httptest.NewServer(n.APIHandler())
	defer srv.Close()
	body := fmt.Sprintf(`{"matchers":[{"name":"alertname","value":"KVCacheSaturated","isRegex":false}],"startsAt":%q,"endsAt":%q,"createdBy":"ana","comment":"draining gpu-1"}`,
		time.Now().Format(time.RFC3339), time.Now().Add(time.Hour).Format(time.RFC3339))
	resp, err := http.Post(srv.URL+"/api/v2/silences", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("silence: %d", resp.StatusCode)
	}
	n.stop() // the flush has finished its stages
	if err := store.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := store.Query(context.Background(), history.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Events {
		got = append(got, e.Type+":"+e.Outcome)
	}
	if strings.Join(got, " ") != "notification:sent silence:created" {
		t.Fatalf("history: %v", got)
	}
	nt, sil := p.Events[0], p.Events[1]
	if nt.Receiver != "hook" || nt.Integration != "webhook" || nt.Alertname != "KVCacheSaturated" || nt.Labels["instance"] != "gpu-1" || nt.Fingerprint == "" {
		t.Errorf("notification = %+v", nt)
	}
	if !strings.Contains(string(nt.Details), `"firing":1`) {
		t.Errorf("notification details = %s", nt.Details)
	}
	if sil.User != "ana" || sil.Alertname != "KVCacheSaturated" {
		t.Errorf("silence = %+v", sil)
	}
	for _, want := range []string{`"silenceCreated"`, `"createdBy":"ana"`, `"comment":"draining`, `"rendered":"alertname=\"KVCacheSaturated\""`} {
		if !strings.Contains(strings.ReplaceAll(string(sil.Details), " ", ""), want) {
			t.Errorf("silence details lack %s: %s", want, sil.Details)
		}
	}
}
