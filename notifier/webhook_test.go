package notifier

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/notify"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// verifySignature is an independent check of X-Paged-Signature, written
// from the documented format only: t=<unix>,v1=<hex HMAC-SHA256(secret, "<unix>." + body)>.
func verifySignature(header, secret string, body []byte) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	if ts == "" || sig == "" {
		return false
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(body)))
	return hmac.Equal(mac.Sum(nil), want)
}

func TestWebhookHMACAndHeaders(t *testing.T) {
	sink := notifiertest.NewSink(t)
	conf := fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
        hmac_secret: s3cr3t-hmac
        headers: {X-Team: llm-platform}
`, sink.URL())
	n := start(t, conf, Options{})
	before := time.Now().Unix()
	n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated")})
	req := sink.Wait(t, 1, 10*time.Second)[0]

	h := req.Header.Get("X-Paged-Signature")
	if !verifySignature(h, "s3cr3t-hmac", req.Body) {
		t.Fatalf("signature %q does not verify", h)
	}
	if verifySignature(h, "wrong-secret", req.Body) {
		t.Fatal("signature verifies with a wrong secret")
	}
	tampered := append([]byte(nil), req.Body...)
	tampered[len(tampered)/2] ^= 1
	if verifySignature(h, "s3cr3t-hmac", tampered) {
		t.Fatal("signature verifies a tampered body")
	}
	var ts int64
	if _, err := fmt.Sscanf(h, "t=%d,", &ts); err != nil || ts < before || ts > time.Now().Unix() {
		t.Errorf("timestamp %d not within the send (%v)", ts, err)
	}
	if got := req.Header.Get("X-Team"); got != "llm-platform" {
		t.Errorf("custom header = %q", got)
	}
	if got := req.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("content type = %q", got)
	}
}

func TestWebhookMaxAlertsAndRetry(t *testing.T) {
	sink := notifiertest.NewSink(t)
	sink.Script(500, 429)
	conf := fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
        max_alerts: 2
`, sink.URL())
	n := start(t, conf, Options{})
	n.Notify(context.Background(), []*rules.Alert{
		firing("GPUHot", "gpu", "0"), firing("GPUHot", "gpu", "1"), firing("GPUHot", "gpu", "2"),
	})
	reqs := sink.Wait(t, 3, 20*time.Second)
	var msg struct {
		Version         string            `json:"version"`
		TruncatedAlerts int               `json:"truncatedAlerts"`
		Alerts          []json.RawMessage `json:"alerts"`
	}
	if err := json.Unmarshal(reqs[2].Body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Version != "4" || msg.TruncatedAlerts != 1 || len(msg.Alerts) != 2 {
		t.Errorf("payload version=%q truncated=%d alerts=%d, want 4/1/2", msg.Version, msg.TruncatedAlerts, len(msg.Alerts))
	}
	if string(reqs[0].Body) != string(reqs[2].Body) {
		t.Error("the retry sent a different payload")
	}
}

func TestSignKnownVector(t *testing.T) {
	// HMAC-SHA256("key", "1700000000.{}"), computed with openssl:
	// printf '1700000000.{}' | openssl dgst -sha256 -hmac key
	got := Sign([]byte("key"), time.Unix(1700000000, 0), []byte("{}"))
	want := "t=1700000000,v1=9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae"
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

// An alert storm flushes many groups at once; the requests in flight to
// one webhook stay within max_concurrent_requests, and every group is
// delivered once the receiver answers.
func TestWebhookMaxConcurrentRequests(t *testing.T) {
	const limit, groups = 3, 12
	var (
		mu             sync.Mutex
		inFlight, peak int
		got            = map[string]bool{}
	)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		<-release
		var m struct {
			GroupLabels map[string]string `json:"groupLabels"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		inFlight--
		got[m.GroupLabels["alertname"]] = true
		mu.Unlock()
	}))
	defer srv.Close()
	defer close(release)
	conf := fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
        max_concurrent_requests: %d
`, srv.URL, limit)
	n := start(t, conf, Options{})
	var storm []*rules.Alert
	for i := range groups {
		storm = append(storm, firing(fmt.Sprint("Storm", i)))
	}
	n.Notify(context.Background(), storm)

	// The first requests reach the receiver and block there; the rest
	// must wait in paged however long the receiver takes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		p := peak
		mu.Unlock()
		if p >= limit || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // every group is due by now
	mu.Lock()
	if inFlight != limit || peak != limit {
		t.Errorf("with the receiver blocked: %d requests in flight, peak %d; want %d", inFlight, peak, limit)
	}
	mu.Unlock()

	for range groups {
		release <- struct{}{}
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == groups {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak != limit {
		t.Errorf("peak requests in flight %d, want %d", peak, limit)
	}
	if len(got) != groups {
		t.Errorf("%d of %d groups delivered: %v", len(got), groups, got)
	}
}

// TestWebhookTimeout holds a request to whichever ends first: the
// webhook's timeout, or the flush's deadline. The receiver answers only
// after 20 s, so a request that neither bounds succeeds, and fails the test.
func TestWebhookTimeout(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-time.After(20 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(stop)
	now := time.Now()
	alerts := []*alert.Alert{alert.New(model.Alert{Labels: model.LabelSet{"alertname": "A"}, StartsAt: now, EndsAt: now.Add(time.Hour)}, now, false)}
	for _, c := range []struct {
		name     string
		timeout  time.Duration
		deadline time.Duration // of the flush; 0: none
	}{
		{"timeout first, no flush deadline", 50 * time.Millisecond, 0},
		{"timeout first", 50 * time.Millisecond, time.Hour},
		{"flush deadline first", time.Hour, 50 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := newWebhook(&WebhookConfig{URL: commoncfg.Secret(srv.URL), Timeout: model.Duration(c.timeout)}, bodyTemplate(t), nil, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			ctx := notify.WithGroupKey(bodyContext("hook", nil, nil, notify.ReasonFirstNotification), "k")
			if c.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.deadline)
				defer cancel()
			}
			v := w.Notify(ctx, alerts...)
			if v.Err() == nil || !errors.Is(v.Err(), context.DeadlineExceeded) {
				t.Fatalf("verdict error %v, want the deadline exceeded", v.Err())
			}
			if !v.ShouldRetry() {
				t.Error("a timed-out request is not retried")
			}
		})
	}
}
